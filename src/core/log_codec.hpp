// Binary encoding of one log record: the per-call-site metadata (LogSite), the
// argument type tags, and the encode/decode of raw argument bytes. Thread-safe:
// stateless functions and constant data.
//
// Record payload (inside one LogByteRing frame, no alignment assumed):
//
//   0        8          16
//   +--------+----------+-------------------------------------------+
//   | site*  | ticks    | arg 0 | arg 1 | ...                       |
//   +--------+----------+-------------------------------------------+
//   site*: address of the call site's static constexpr LogSite
//   ticks: TscClock::now() at the call
//   arg:   fixed-size scalars as raw bytes (bool 1, char 1, i32/u32/f32 4,
//          i64/u64/f64/pointer 8); strings as u32 length + bytes (no NUL).
//
// The front end converts each argument into its wire form (to_wire) once, so a
// C string is measured once and then copied with a single memcpy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/core.h>

#include "core/compiler.hpp"

namespace nanotick::core {

enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

enum class LogArgTag : std::uint8_t { kBool, kChar, kI32, kU32, kI64, kU64, kF32, kF64, kPtr, kStr };

// Everything about a call site that is known at compile time. One static
// constexpr instance per NT_LOG_* use; records carry its address.
struct LogSite {
  std::string_view format;
  const char* file;  // base name of __FILE__
  std::uint32_t line;
  LogLevel level;
  std::uint8_t arg_count;
  const LogArgTag* arg_tags;
};

inline constexpr std::size_t kLogRecordHeader = 16;  // site* + ticks

namespace log_detail {

// A string argument in wire form: pointer + length, measured once.
struct WireStr {
  const char* data;
  std::size_t size;
};

template <class T>
inline constexpr bool kIsCharType =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> ||
    std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;

template <class T>
inline constexpr bool kIsString = std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
                                  std::is_same_v<T, const char*> || std::is_same_v<T, char*>;

// The type the back end hands to fmt (and the type the format string is
// checked against at compile time) for an argument of decayed type T.
template <class T>
struct LogArgType {
  static_assert(!std::is_enum_v<T>, "NT_LOG: cast enums to their underlying type");
  static_assert(!std::is_same_v<T, long double>, "NT_LOG: long double is not supported; use double");
  static_assert(!std::is_function_v<std::remove_pointer_t<T>>, "NT_LOG: function pointers are not supported");
  // Named, not inline in the assert: clang-format 16 misreads `(...) && (...)` there.
  using Pointee = std::remove_cv_t<std::remove_pointer_t<T>>;
  static constexpr bool kNarrowChar = !kIsCharType<T> || std::is_same_v<T, char>;
  static constexpr bool kNarrowString = !std::is_pointer_v<T> || !kIsCharType<Pointee> || std::is_same_v<Pointee, char>;
  static_assert(kNarrowChar && kNarrowString,
                "NT_LOG: only char and narrow (char) strings are supported, not wide ones");
  static_assert(std::is_arithmetic_v<T> || std::is_pointer_v<T> || std::is_same_v<T, std::nullptr_t> || kIsString<T>,
                "NT_LOG: supported arguments are bool, char, integers, float, double, pointers, "
                "const char*, std::string and std::string_view");

  static constexpr bool kString = kIsString<T>;
  using fmt_type = std::conditional_t<
      kString, std::string_view,
      std::conditional_t<
          std::is_pointer_v<T> || std::is_same_v<T, std::nullptr_t>, const void*,
          std::conditional_t<
              std::is_same_v<T, bool> || std::is_same_v<T, char> || std::is_floating_point_v<T>, T,
              std::conditional_t<std::is_signed_v<T>, std::conditional_t<(sizeof(T) <= 4), std::int32_t, std::int64_t>,
                                 std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>>>>>;

  static constexpr LogArgTag tag() noexcept {
    if constexpr (kString) return LogArgTag::kStr;
    else if constexpr (std::is_same_v<fmt_type, const void*>) return LogArgTag::kPtr;
    else if constexpr (std::is_same_v<fmt_type, bool>) return LogArgTag::kBool;
    else if constexpr (std::is_same_v<fmt_type, char>) return LogArgTag::kChar;
    else if constexpr (std::is_same_v<fmt_type, float>) return LogArgTag::kF32;
    else if constexpr (std::is_same_v<fmt_type, double>) return LogArgTag::kF64;
    else if constexpr (std::is_same_v<fmt_type, std::int32_t>) return LogArgTag::kI32;
    else if constexpr (std::is_same_v<fmt_type, std::uint32_t>) return LogArgTag::kU32;
    else if constexpr (std::is_same_v<fmt_type, std::int64_t>) return LogArgTag::kI64;
    else return LogArgTag::kU64;
  }
};

template <class T>
using log_fmt_t = typename LogArgType<std::decay_t<T>>::fmt_type;

template <class... T>
inline constexpr std::array<LogArgTag, sizeof...(T)> kArgTags{LogArgType<T>::tag()...};

// Carries the decayed argument types of a call site (built in decltype only).
template <class... T>
struct ArgList {
  // The format string is checked against the argument types here, at compile
  // time: a mismatch is a compile error at the NT_LOG_* call site.
  static consteval LogSite make_site(LogLevel level, std::string_view format, const char* file, std::uint32_t line) {
    static_cast<void>(fmt::format_string<log_fmt_t<T>...>(format));
    return LogSite{
        format, base_name(file), line, level, static_cast<std::uint8_t>(sizeof...(T)), kArgTags<T...>.data()};
  }

  static consteval const char* base_name(const char* path) {
    const char* base = path;
    for (const char* p = path; *p != '\0'; ++p)
      if (*p == '/') base = p + 1;
    return base;
  }
  static_assert(sizeof...(T) <= 255, "NT_LOG: at most 255 arguments");
};

// Never called: only its return type is used, to name the arguments' types.
template <class... A>
ArgList<std::decay_t<A>...> arg_list(const A&...);

// ---- front end: argument -> wire form -> bytes ---------------------------

template <class T>
NT_ALWAYS_INLINE auto to_wire(const T& v) noexcept {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, std::string> || std::is_same_v<D, std::string_view>) {
    return WireStr{v.data(), v.size()};
  } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    const char* s = v;  // also decays char arrays
    if (s == nullptr) [[unlikely]]
      return WireStr{"(null)", 6};
    return WireStr{s, std::strlen(s)};
  } else {
    return static_cast<log_fmt_t<T>>(v);
  }
}

template <class W>
NT_ALWAYS_INLINE constexpr std::size_t wire_size(const W& w) noexcept {
  if constexpr (std::is_same_v<W, WireStr>) return sizeof(std::uint32_t) + w.size;
  else return sizeof(W);
}

template <class W>
NT_ALWAYS_INLINE std::byte* put(std::byte* dst, const W& w) noexcept {
  if constexpr (std::is_same_v<W, WireStr>) {
    const auto n = static_cast<std::uint32_t>(w.size);  // records are < 2^31 bytes
    std::memcpy(dst, &n, sizeof n);
    std::memcpy(dst + sizeof n, w.data, w.size);
    return dst + sizeof n + w.size;
  } else {
    std::memcpy(dst, &w, sizeof w);
    return dst + sizeof w;
  }
}

}  // namespace log_detail

// ---- back end: bytes -> typed values --------------------------------------

struct LogRecordView {
  const LogSite* site;
  std::uint64_t ticks;
  const std::byte* args;
  const std::byte* end;
};

inline LogRecordView decode_log_record(const std::byte* payload, std::size_t size) noexcept {
  LogRecordView r;
  std::memcpy(&r.site, payload, sizeof r.site);
  std::memcpy(&r.ticks, payload + 8, sizeof r.ticks);
  r.args = payload + kLogRecordHeader;
  r.end = payload + size;
  return r;
}

// Calls visit(value) for each argument, with value typed as the front end's
// fmt type (bool, char, int32_t, ..., const void*, std::string_view viewing the
// record's bytes). Returns false if the bytes do not match the site's tags.
template <class Visitor>
bool decode_log_args(const LogRecordView& r, Visitor&& visit) {
  const std::byte* p = r.args;
  auto take = [&](auto value) {
    if (static_cast<std::size_t>(r.end - p) < sizeof value) return false;
    std::memcpy(&value, p, sizeof value);
    p += sizeof value;
    visit(value);
    return true;
  };
  for (std::uint8_t i = 0; i < r.site->arg_count; ++i) {
    bool ok = false;
    switch (r.site->arg_tags[i]) {
      case LogArgTag::kBool: ok = take(bool{}); break;
      case LogArgTag::kChar: ok = take(char{}); break;
      case LogArgTag::kI32: ok = take(std::int32_t{}); break;
      case LogArgTag::kU32: ok = take(std::uint32_t{}); break;
      case LogArgTag::kI64: ok = take(std::int64_t{}); break;
      case LogArgTag::kU64: ok = take(std::uint64_t{}); break;
      case LogArgTag::kF32: ok = take(float{}); break;
      case LogArgTag::kF64: ok = take(double{}); break;
      case LogArgTag::kPtr: ok = take(static_cast<const void*>(nullptr)); break;
      case LogArgTag::kStr: {
        std::uint32_t n = 0;
        if (static_cast<std::size_t>(r.end - p) < sizeof n) return false;
        std::memcpy(&n, p, sizeof n);
        p += sizeof n;
        if (static_cast<std::size_t>(r.end - p) < n) return false;
        visit(std::string_view(reinterpret_cast<const char*>(p), n));
        p += n;
        ok = true;
        break;
      }
    }
    if (!ok) return false;
  }
  return p == r.end;
}

}  // namespace nanotick::core
