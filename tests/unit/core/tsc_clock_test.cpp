#include "core/tsc_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

using nanotick::core::TscClock;

namespace {
std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

TEST(TscClock, ShouldCalibrateAPlausibleRateInsteadOfAssumingOne) {
  const auto clock = TscClock::calibrate();
  if (!clock.uses_tsc()) GTEST_SKIP() << "TSC not invariant here: steady-clock fallback in use";
  EXPECT_GT(clock.ticks_per_ns(), 0.05);
  EXPECT_LT(clock.ticks_per_ns(), 20.0);
}

TEST(TscClock, ShouldConvertElapsedTicksToNanosecondsAgreeingWithSteadyClock) {
  const auto& clock = TscClock::global();
  const auto t0 = std::chrono::steady_clock::now();
  const auto c0 = clock.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto c1 = clock.now();
  const auto t1 = std::chrono::steady_clock::now();
  const double steady = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  const double ours = static_cast<double>(clock.to_ns(static_cast<std::int64_t>(c1 - c0)));
  // Generous bound: a busy shared machine can preempt between the paired reads.
  EXPECT_NEAR(ours, steady, steady * 0.05 + 2e6);
}

TEST(TscClock, ShouldMapTicksToWallClockTime) {
  const auto& clock = TscClock::global();
  const std::int64_t before = wall_ns();
  const std::int64_t stamped = clock.to_epoch_ns(clock.now());
  const std::int64_t after = wall_ns();
  EXPECT_GT(stamped, before - 5'000'000);
  EXPECT_LT(stamped, after + 5'000'000);
}

TEST(TscClock, ShouldFallBackToSteadyNanosecondsWhenAsked) {
  const auto clock = TscClock::steady_fallback();
  EXPECT_FALSE(clock.uses_tsc());
  EXPECT_DOUBLE_EQ(clock.ticks_per_ns(), 1.0);
  const auto a = clock.now();
  const auto b = clock.now();
  EXPECT_LE(a, b);
  EXPECT_EQ(clock.to_ns(1000), 1000);
}

TEST(TscClock, ShouldGiveNowInNanosecondsAsToNsOfNow) {
  const auto clock = TscClock::steady_fallback();  // ticks are ns: now_ns() lies between two now()s
  const auto a = clock.now();
  const auto ns = clock.now_ns();
  const auto b = clock.now();
  EXPECT_LE(a, ns);
  EXPECT_LE(ns, b);
}

TEST(TscClock, ShouldConvertNanosecondsToTicksAsTheInverseOfToNs) {
  const auto& clock = TscClock::global();
  const double ticks = clock.ticks_from_ns(1e6);
  EXPECT_NEAR(static_cast<double>(clock.to_ns(static_cast<std::int64_t>(ticks))), 1e6, 2.0);
  EXPECT_DOUBLE_EQ(TscClock::steady_fallback().ticks_from_ns(1234.0), 1234.0);
}
