// Unit tests for the async logger's argument codec (core/log_codec.hpp): each
// argument type's tag, strings copied as length and bytes, records checked
// against their call site.
#include "core/log_codec.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/logger.hpp"

namespace nc = nanotick::core;

TEST(LogCodec, ShouldMapArgumentTypesToTags) {
  using nc::LogArgTag;
  using nc::log_detail::LogArgType;
  static_assert(LogArgType<bool>::tag() == LogArgTag::kBool);
  static_assert(LogArgType<char>::tag() == LogArgTag::kChar);
  static_assert(LogArgType<short>::tag() == LogArgTag::kI32);
  static_assert(LogArgType<unsigned char>::tag() == LogArgTag::kU32);
  static_assert(LogArgType<long>::tag() == LogArgTag::kI64);
  static_assert(LogArgType<unsigned long long>::tag() == LogArgTag::kU64);
  static_assert(LogArgType<float>::tag() == LogArgTag::kF32);
  static_assert(LogArgType<double>::tag() == LogArgTag::kF64);
  static_assert(LogArgType<int*>::tag() == LogArgTag::kPtr);
  static_assert(LogArgType<std::nullptr_t>::tag() == LogArgTag::kPtr);
  static_assert(LogArgType<const char*>::tag() == LogArgTag::kStr);
  static_assert(LogArgType<std::string>::tag() == LogArgTag::kStr);
  static_assert(LogArgType<std::string_view>::tag() == LogArgTag::kStr);
  SUCCEED();
}

TEST(LogCodec, ShouldCopyAStringAsLengthAndBytes) {
  const std::string s = "hello";
  const auto w = nc::log_detail::to_wire(s);
  EXPECT_EQ(w.data, s.data());
  EXPECT_EQ(w.size, 5u);
  std::byte buf[16];
  EXPECT_EQ(nc::log_detail::put(buf, w), buf + 9);
  std::uint32_t n;
  std::memcpy(&n, buf, 4);
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(std::memcmp(buf + 4, "hello", 5), 0);
}

TEST(LogCodec, ShouldRejectRecordsWhoseBytesDoNotMatchTheSite) {
  static constexpr nc::LogSite site =
      decltype(nc::log_detail::arg_list(1, 2.0))::make_site(nc::LogLevel::kInfo, "{} {}", "x", 1);
  std::byte buf[64] = {};
  const nc::LogSite* sp = &site;
  std::memcpy(buf, &sp, 8);
  int visited = 0;
  auto count = [&](auto) { ++visited; };
  // Too short for int + double.
  EXPECT_FALSE(nc::decode_log_args(nc::decode_log_record(buf, 16 + 4), count));
  // Exactly right.
  EXPECT_TRUE(nc::decode_log_args(nc::decode_log_record(buf, 16 + 12), count));
  EXPECT_EQ(visited, 1 + 2);
  // Trailing garbage.
  EXPECT_FALSE(nc::decode_log_args(nc::decode_log_record(buf, 16 + 13), count));
}
