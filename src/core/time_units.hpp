// Time units, written once: nanoseconds per microsecond, millisecond and
// second, and the conversions the tree makes between them. Durations in the
// tree are nanoseconds in 64-bit integers (TscClock::to_ns and now_ns give
// them); config fields are 32-bit counts of us, ms or s.
//
// The integer conversions take a std::uint32_t and nothing else (other types
// are deleted overloads, so a wider or signed value is a compile error, not a
// silent narrowing): any 32-bit count of seconds, even, fits in 64-bit ns
// (2^32 s = 4.3e18 ns < 2^64), so a value read from a config cannot overflow.
// The floating-point ones (overloads on double of ns_from_ms and ns_from_sec
// too) are for rates, periods given as doubles and printed figures.
#pragma once

#include <cstdint>
#include <ctime>

namespace nanotick::core {

inline constexpr std::uint64_t kNsPerUs = 1'000;
inline constexpr std::uint64_t kNsPerMs = 1'000'000;
inline constexpr std::uint64_t kNsPerSec = 1'000'000'000;

// ---- whole units -> nanoseconds (exact) ---------------------------------------

constexpr std::uint64_t ns_from_us(std::uint32_t us) noexcept { return std::uint64_t{us} * kNsPerUs; }
constexpr std::uint64_t ns_from_ms(std::uint32_t ms) noexcept { return std::uint64_t{ms} * kNsPerMs; }
constexpr std::uint64_t ns_from_sec(std::uint32_t s) noexcept { return std::uint64_t{s} * kNsPerSec; }
template <class T>
void ns_from_us(T) = delete;  // pass a std::uint32_t
template <class T>
void ns_from_ms(T) = delete;  // pass a std::uint32_t (or a double: below)
template <class T>
void ns_from_sec(T) = delete;  // pass a std::uint32_t (or a double: below)
static_assert(ns_from_sec(UINT32_MAX) / kNsPerSec == UINT32_MAX, "a 32-bit count of seconds fits in 64-bit ns");

// ---- nanoseconds -> whole units (truncating) ----------------------------------

constexpr std::uint64_t whole_ms_from_ns(std::uint64_t ns) noexcept { return ns / kNsPerMs; }

// A non-negative duration as a timespec (nanosleep, futex timeouts).
constexpr timespec timespec_from_ns(std::int64_t ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / static_cast<std::int64_t>(kNsPerSec));
  ts.tv_nsec = static_cast<long>(ns % static_cast<std::int64_t>(kNsPerSec));
  return ts;
}

// ---- floating point ------------------------------------------------------------

constexpr double sec_from_ns(double ns) noexcept { return ns / static_cast<double>(kNsPerSec); }
constexpr double ms_from_ns(double ns) noexcept { return ns / static_cast<double>(kNsPerMs); }
constexpr double ns_from_ms(double ms) noexcept { return ms * static_cast<double>(kNsPerMs); }
constexpr double ns_from_sec(double s) noexcept { return s * static_cast<double>(kNsPerSec); }

}  // namespace nanotick::core
