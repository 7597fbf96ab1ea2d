// Unit tests for the instrumentation macros with telemetry compiled in
// (NANOTICK_TELEMETRY=1, as the nanotick_telemetry target defines it by
// default): NT_HOP and NT_TIMED record into the thread's bound recorder, do
// nothing (not even evaluate their arguments) with no recorder bound, and a
// recorder can never be bound to two threads at once.
#include "telemetry/instrument.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "support/allocation_counter.hpp"
#include "telemetry/recorder.hpp"

namespace nt = nanotick::telemetry;
namespace nc = nanotick::core;

namespace {

std::vector<nt::Record> drain(nt::Recorder& r) {
  std::vector<nt::Record> out;
  r.drain([&out](const nt::Record& rec) { out.push_back(rec); });
  return out;
}

#if NANOTICK_TELEMETRY

TEST(TelemetryMacros, ShouldRecordHopsIntoTheBoundRecorder) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const std::uint64_t before = nc::TscClock::global().now();
  {
    const nt::ThreadBinding binding(*recorder);
    EXPECT_EQ(nt::thread_recorder(), recorder.get());
    NT_HOP(ex_tcp_read, (3ull << 32) | 17);
    NT_HOP(tr_decision, 555, (4ull << 32) | 9);
  }
  EXPECT_EQ(nt::thread_recorder(), nullptr);
  const auto records = drain(*recorder);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].point, static_cast<std::uint16_t>(nt::Point::ex_tcp_read));
  EXPECT_EQ(records[0].key, (3ull << 32) | 17);
  EXPECT_EQ(records[0].aux, 0u);
  EXPECT_EQ(records[0].cycles, 0u);
  EXPECT_GE(records[0].tsc, before);
  EXPECT_EQ(records[1].point, static_cast<std::uint16_t>(nt::Point::tr_decision));
  EXPECT_EQ(records[1].key, 555u);
  EXPECT_EQ(records[1].aux, (4ull << 32) | 9);
  EXPECT_GE(records[1].tsc, records[0].tsc);
}

TEST(TelemetryMacros, ShouldTimeTheEnclosingScope) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nc::TscClock& clock = nc::TscClock::global();
  std::uint64_t outer_start = 0, outer_end = 0;
  {
    const nt::ThreadBinding binding(*recorder);
    outer_start = clock.now();
    {
      NT_TIMED(fn_risk_check);
      // Busy for a measurable while (at least 2000 ticks).
      const std::uint64_t t0 = clock.now();
      while (clock.now() - t0 < 2000) {
      }
    }
    { NT_TIMED(fn_book_match, 42); }
    outer_end = clock.now();
  }
  const auto records = drain(*recorder);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].point, static_cast<std::uint16_t>(nt::Point::fn_risk_check));
  EXPECT_EQ(records[0].key, 0u);
  EXPECT_GE(records[0].cycles, 2000u);
  EXPECT_GE(records[0].tsc, outer_start);
  EXPECT_LE(records[0].tsc + records[0].cycles, outer_end);
  EXPECT_EQ(records[1].point, static_cast<std::uint16_t>(nt::Point::fn_book_match));
  EXPECT_EQ(records[1].key, 42u);
  EXPECT_GE(records[1].tsc, records[0].tsc + records[0].cycles);
}

TEST(TelemetryMacros, ShouldDoNothingAndEvaluateNothingWithoutARecorder) {
  ASSERT_EQ(nt::thread_recorder(), nullptr);
  int evaluated = 0;
  int aux_evaluated = 0;
  NT_HOP(ex_md_write, static_cast<std::uint64_t>(++evaluated));
  NT_HOP(tr_decision, static_cast<std::uint64_t>(++evaluated), static_cast<std::uint64_t>(++aux_evaluated));
  { NT_TIMED(fn_sequencer); }
  EXPECT_EQ(evaluated, 0);
  EXPECT_EQ(aux_evaluated, 0);
}

TEST(TelemetryMacros, ShouldRestoreThePreviousBindingWhenANestedOneEnds) {
  auto a = nt::Recorder::create("a", nc::TscClock::global());
  auto b = nt::Recorder::create("b", nc::TscClock::global());
  {
    const nt::ThreadBinding outer(*a);
    NT_HOP(ex_engine_in, 1);
    {
      const nt::ThreadBinding inner(*b);
      NT_HOP(ex_engine_in, 2);
    }
    NT_HOP(ex_engine_in, 3);
  }
  const auto in_a = drain(*a);
  const auto in_b = drain(*b);
  ASSERT_EQ(in_a.size(), 2u);
  EXPECT_EQ(in_a[0].key, 1u);
  EXPECT_EQ(in_a[1].key, 3u);
  ASSERT_EQ(in_b.size(), 1u);
  EXPECT_EQ(in_b[0].key, 2u);
}

TEST(TelemetryMacros, ShouldRefuseToBindOneRecorderToTwoThreads) {
  auto recorder = nt::Recorder::create("engine", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  std::string error;
  std::thread other([&] {
    try {
      const nt::ThreadBinding second(*recorder);
    } catch (const std::logic_error& e) {
      error = e.what();
    }
    EXPECT_EQ(nt::thread_recorder(), nullptr);
  });
  other.join();
  EXPECT_NE(error.find("recorder 'engine' is already bound"), std::string::npos) << error;
  EXPECT_THROW(nt::ThreadBinding again(*recorder), std::logic_error);
  EXPECT_EQ(nt::thread_recorder(), recorder.get());
}

TEST(TelemetryMacros, ShouldAllowRebindingOnAnotherThreadAfterUnbinding) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  {
    const nt::ThreadBinding first(*recorder);
    NT_HOP(tr_udp_read, 1);
  }
  std::thread other([&] {
    const nt::ThreadBinding second(*recorder);
    NT_HOP(tr_udp_read, 2);
  });
  other.join();
  const auto records = drain(*recorder);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].key, 2u);
}

TEST(TelemetryMacros, ShouldNotAllocateWhenRecording) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  NT_HOP(ex_tcp_read, 0);
  const nanotick::test::AllocationScope scope;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    NT_HOP(ex_tcp_read, i);
    NT_TIMED(fn_book_add);
  }
  EXPECT_EQ(scope.count(), 0u);
}

#else

TEST(TelemetryMacros, ShouldBeCompiledOutInThisBuild) {
  GTEST_SKIP() << "built with NANOTICK_TELEMETRY=OFF: the macros record nothing (compiled_out_test covers that)";
}

#endif

}  // namespace
