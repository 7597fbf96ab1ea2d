// Idle strategies on one thread: the backoff state machine, BlockingIdle's
// signal bookkeeping, what each simple strategy does to the thread (yields
// counted, voluntary context switches read from the kernel), and choosing a
// strategy by name. No timing assertions.
#include "core/idle_strategy.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

// This binary's own sched_yield: the idle strategies' ::sched_yield() calls bind
// to it (an executable's definition comes before libc's), it counts them per
// thread, and it still asks the kernel to yield. Why: "gave the core away" is
// not observable otherwise without a clock, and the call is the behaviour.
namespace {
thread_local std::uint64_t t_sched_yields = 0;
}  // namespace

extern "C" int sched_yield() noexcept {
  ++t_sched_yields;
  return static_cast<int>(::syscall(SYS_sched_yield));
}

namespace nanotick::core {
namespace {

using namespace std::chrono_literals;
using State = BackoffIdle::State;

static_assert(IdleStrategy<BusySpinIdle> && IdleStrategy<NoOpIdle> && IdleStrategy<YieldIdle> &&
              IdleStrategy<BackoffIdle> && IdleStrategy<BlockingIdle>);
static_assert(WakeableIdleStrategy<BlockingIdle>);
static_assert(!WakeableIdleStrategy<BusySpinIdle> && !WakeableIdleStrategy<BackoffIdle>);
static_assert(std::is_same_v<IdleTypeFor<IdleKind::backoff>::type, BackoffIdle>);
// Producers' writes to the futex word must not share a line with anything else.
static_assert(alignof(BlockingIdle) >= kCacheLine);

// This thread's voluntary context switches so far (it blocked or slept: a
// spin never does; a preemption is involuntary and not counted here).
long voluntary_switches() {
  rusage usage{};
  EXPECT_EQ(::getrusage(RUSAGE_THREAD, &usage), 0);
  return usage.ru_nvcsw;
}

BackoffParams small_params() {
  BackoffParams params;
  params.max_spins = 3;
  params.max_yields = 2;
  params.min_park = 1us;
  params.max_park = 4us;
  return params;
}

TEST(BackoffIdle, ShouldSpinThenYieldThenParkWithDoublingPeriod) {
  BackoffIdle idle(small_params());
  EXPECT_EQ(idle.state(), State::not_idle);

  for (std::uint32_t i = 1; i <= 3; ++i) {
    idle.idle(0);
    EXPECT_EQ(idle.state(), State::spinning);
    EXPECT_EQ(idle.spins(), i);
    EXPECT_EQ(idle.yields(), 0u);
  }
  for (std::uint32_t i = 1; i <= 2; ++i) {
    idle.idle(0);
    EXPECT_EQ(idle.state(), State::yielding);
    EXPECT_EQ(idle.yields(), i);
  }
  idle.idle(0);
  EXPECT_EQ(idle.state(), State::parking);
  EXPECT_EQ(idle.park_period(), 1us);
  idle.idle(0);
  EXPECT_EQ(idle.park_period(), 2us);
  idle.idle(0);
  EXPECT_EQ(idle.park_period(), 4us);
  idle.idle(0);
  EXPECT_EQ(idle.state(), State::parking);
  EXPECT_EQ(idle.park_period(), 4us);  // capped at max_park
}

TEST(BackoffIdle, ShouldStartOverWhenWorkIsDone) {
  BackoffIdle idle(small_params());
  for (int i = 0; i < 7; ++i) {
    idle.idle(0);
  }
  ASSERT_EQ(idle.state(), State::parking);

  idle.idle(1);
  EXPECT_EQ(idle.state(), State::not_idle);
  EXPECT_EQ(idle.spins(), 0u);
  EXPECT_EQ(idle.yields(), 0u);
  EXPECT_EQ(idle.park_period(), 0ns);

  idle.idle(0);
  EXPECT_EQ(idle.state(), State::spinning);
  EXPECT_EQ(idle.spins(), 1u);
}

TEST(BackoffIdle, ShouldStartOverOnReset) {
  BackoffIdle idle(small_params());
  for (int i = 0; i < 4; ++i) {
    idle.idle(0);
  }
  ASSERT_EQ(idle.state(), State::yielding);
  idle.reset();
  EXPECT_EQ(idle.state(), State::not_idle);
  idle.idle(0);
  EXPECT_EQ(idle.state(), State::spinning);
}

TEST(BackoffIdle, ShouldSkipPhasesConfiguredToZero) {
  BackoffParams params = small_params();
  params.max_spins = 0;
  BackoffIdle no_spin(params);
  no_spin.idle(0);
  EXPECT_EQ(no_spin.state(), State::yielding);

  params.max_yields = 0;
  BackoffIdle park_at_once(params);
  park_at_once.idle(0);
  EXPECT_EQ(park_at_once.state(), State::parking);
  EXPECT_EQ(park_at_once.park_period(), 1us);
}

TEST(BackoffIdle, ShouldRejectInvalidParkPeriods) {
  BackoffParams params = small_params();
  params.min_park = 0ns;
  EXPECT_THROW(BackoffIdle{params}, std::invalid_argument);
  params.min_park = 10us;
  params.max_park = 5us;
  EXPECT_THROW(BackoffIdle{params}, std::invalid_argument);
}

TEST(BlockingIdle, ShouldReturnAtOnceWhenSignalledBeforeWaiting) {
  BlockingIdle idle(BlockingIdle::kNoTimeout);  // a missed signal would hang here
  idle.signal();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
}

TEST(BlockingIdle, ShouldCoalesceSignalsIntoOneWakeUp) {
  BlockingIdle idle(1ms);
  idle.signal();
  idle.signal();
  idle.signal();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::timed_out);  // consumed above
}

TEST(BlockingIdle, ShouldTimeOutWithoutASignal) {
  BlockingIdle idle(100us);
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::timed_out);
  idle.idle(0);  // also returns after the timeout
  idle.signal();
  idle.idle(0);  // consumes the signal
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::timed_out);
}

TEST(BlockingIdle, ShouldNotConsumeASignalWhenWorkWasDone) {
  BlockingIdle idle(1ms);
  idle.signal();
  idle.idle(1);  // work done: no wait, the pending signal stays
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
}

TEST(BlockingIdle, ShouldRejectANonPositiveTimeout) {
  EXPECT_THROW(BlockingIdle{0ns}, std::invalid_argument);
  EXPECT_THROW(BlockingIdle{-1ms}, std::invalid_argument);
}

TEST(IdleWaker, ShouldSignalItsTargetAndDoNothingWithoutOne) {
  IdleWaker none;
  EXPECT_FALSE(none.is_active());
  none.wake();

  BlockingIdle idle(BlockingIdle::kNoTimeout);
  IdleWaker waker(&idle);
  EXPECT_TRUE(waker.is_active());
  waker.wake();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
}

TEST(SimpleIdleStrategies, YieldShouldYieldOncePerIdleCycleAndNeverAfterWork) {
  YieldIdle yield;
  const std::uint64_t before = t_sched_yields;
  for (int i = 0; i < 100; ++i) yield.idle(0);
  EXPECT_EQ(t_sched_yields - before, 100u);
  for (int i = 0; i < 100; ++i) yield.idle(1);
  EXPECT_EQ(t_sched_yields - before, 100u);  // work done: back to the loop at once
  yield.reset();                             // stateless: still one yield per idle cycle
  yield.idle(0);
  EXPECT_EQ(t_sched_yields - before, 101u);
}

TEST(SimpleIdleStrategies, SpinAndNoOpShouldNeverGiveTheThreadAway) {
  BusySpinIdle spin;
  NoOpIdle noop;
  const std::uint64_t yields = t_sched_yields;
  const long switches = voluntary_switches();
  for (int i = 0; i < 100'000; ++i) {
    spin.idle(0);
    spin.idle(1);
    noop.idle(0);
    noop.idle(1);
  }
  spin.reset();
  noop.reset();
  EXPECT_EQ(t_sched_yields, yields);
  EXPECT_EQ(voluntary_switches(), switches) << "a spin or no-op idle blocked or slept";
}

TEST(BackoffIdle, ShouldYieldOnlyInItsYieldPhaseAndSleepWhenParking) {
  BackoffIdle idle(small_params());  // 3 spins, 2 yields, then parking
  const std::uint64_t yields = t_sched_yields;
  long switches = voluntary_switches();
  for (int i = 0; i < 3; ++i) idle.idle(0);
  EXPECT_EQ(t_sched_yields, yields);
  EXPECT_EQ(voluntary_switches(), switches) << "spinning blocked or slept";
  for (int i = 0; i < 2; ++i) idle.idle(0);
  EXPECT_EQ(t_sched_yields - yields, 2u);
  switches = voluntary_switches();
  for (int i = 0; i < 3; ++i) idle.idle(0);
  ASSERT_EQ(idle.state(), State::parking);
  EXPECT_EQ(t_sched_yields - yields, 2u);
  EXPECT_GE(voluntary_switches() - switches, 3) << "parking did not put the thread to sleep";
}

TEST(IdleKind, ShouldParseEveryConfigName) {
  EXPECT_EQ(parse_idle_kind("spin"), IdleKind::spin);
  EXPECT_EQ(parse_idle_kind("yield"), IdleKind::yield);
  EXPECT_EQ(parse_idle_kind("backoff"), IdleKind::backoff);
  EXPECT_EQ(parse_idle_kind("block"), IdleKind::block);
  for (IdleKind kind : {IdleKind::spin, IdleKind::yield, IdleKind::backoff, IdleKind::block}) {
    EXPECT_EQ(parse_idle_kind(to_string(kind)), kind);
  }
}

TEST(IdleKind, ShouldRejectAnUnknownNameAndListTheValidOnes) {
  EXPECT_FALSE(try_parse_idle_kind("sleep").has_value());
  EXPECT_FALSE(try_parse_idle_kind("").has_value());
  EXPECT_FALSE(try_parse_idle_kind("Spin").has_value());  // names are case-sensitive
  EXPECT_FALSE(try_parse_idle_kind("spin ").has_value());
  try {
    static_cast<void>(parse_idle_kind("busy"));
    FAIL() << "parse_idle_kind should throw for an unknown name";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'busy'"), std::string::npos) << message;
    EXPECT_NE(message.find("spin, yield, backoff, block"), std::string::npos) << message;
  }
}

TEST(IdleKind, ShouldVisitTheMatchingStrategyType) {
  const auto name_of = [](IdleKind kind) {
    return visit_idle_kind(kind, []<typename S>(std::type_identity<S>) -> std::string {
      if constexpr (std::is_same_v<S, BusySpinIdle>) {
        return "BusySpinIdle";
      } else if constexpr (std::is_same_v<S, YieldIdle>) {
        return "YieldIdle";
      } else if constexpr (std::is_same_v<S, BackoffIdle>) {
        return "BackoffIdle";
      } else {
        static_assert(std::is_same_v<S, BlockingIdle>);
        return "BlockingIdle";
      }
    });
  };
  EXPECT_EQ(name_of(IdleKind::spin), "BusySpinIdle");
  EXPECT_EQ(name_of(IdleKind::yield), "YieldIdle");
  EXPECT_EQ(name_of(IdleKind::backoff), "BackoffIdle");
  EXPECT_EQ(name_of(IdleKind::block), "BlockingIdle");
}

}  // namespace
}  // namespace nanotick::core
