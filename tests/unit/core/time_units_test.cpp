#include "core/time_units.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

namespace nc = nanotick::core;

namespace {
template <class T>
concept ConvertsFromMs = requires(T v) { nc::ns_from_ms(v); };
}  // namespace

TEST(TimeUnits, ShouldConvertWholeUnitsToNanoseconds) {
  static_assert(nc::ns_from_us(1u) == 1'000);
  static_assert(nc::ns_from_ms(1u) == 1'000'000);
  static_assert(nc::ns_from_sec(1u) == 1'000'000'000);
  EXPECT_EQ(nc::ns_from_us(250u), 250'000u);
  EXPECT_EQ(nc::ns_from_ms(5000u), 5'000'000'000u);
  EXPECT_EQ(nc::ns_from_sec(3u), 3'000'000'000u);
}

TEST(TimeUnits, ShouldNotOverflowOnTheLargestConfigValue) {
  EXPECT_EQ(nc::ns_from_ms(UINT32_MAX), std::uint64_t{UINT32_MAX} * 1'000'000);
  EXPECT_EQ(nc::ns_from_sec(UINT32_MAX) / 1'000'000'000, std::uint64_t{UINT32_MAX});
}

TEST(TimeUnits, ShouldTakeOnlyUnsigned32BitIntegersOrDoubles) {
  static_assert(ConvertsFromMs<std::uint32_t>);
  static_assert(ConvertsFromMs<double>);
  static_assert(!ConvertsFromMs<int>);
  static_assert(!ConvertsFromMs<std::uint64_t>);
  static_assert(std::is_same_v<decltype(nc::ns_from_ms(1u)), std::uint64_t>);
  static_assert(std::is_same_v<decltype(nc::ns_from_ms(1.0)), double>);
}

TEST(TimeUnits, ShouldTruncateNanosecondsToWholeMilliseconds) {
  EXPECT_EQ(nc::whole_ms_from_ns(1'999'999), 1u);
  EXPECT_EQ(nc::whole_ms_from_ns(2'000'000), 2u);
}

TEST(TimeUnits, ShouldSplitNanosecondsIntoATimespec) {
  const timespec ts = nc::timespec_from_ns(2'500'000'001);
  EXPECT_EQ(ts.tv_sec, 2);
  EXPECT_EQ(ts.tv_nsec, 500'000'001);
}

TEST(TimeUnits, ShouldConvertFloatingPointFigures) {
  EXPECT_DOUBLE_EQ(nc::sec_from_ns(1.5e9), 1.5);
  EXPECT_DOUBLE_EQ(nc::ms_from_ns(2.5e6), 2.5);
  EXPECT_DOUBLE_EQ(nc::ns_from_sec(0.25), 2.5e8);
  EXPECT_DOUBLE_EQ(nc::ns_from_ms(0.5), 5e5);
}
