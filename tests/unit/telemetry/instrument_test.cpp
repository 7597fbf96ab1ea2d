// Unit tests for the instrumentation macros with telemetry compiled in
// (NANOTICK_TELEMETRY=1, as the nanotick_telemetry target defines it by
// default): NT_HOP and NT_TIMED record into the thread's bound recorder, do
// nothing (not even evaluate their arguments) with no recorder bound, and a
// recorder can never be bound to two threads at once; NT_HOP_AT stamps at a
// given clock reading, NT_RECORDING() / NT_RECORDER() tell whether the thread
// records, and BoundAgent binds a recorder on its agent's thread for the
// agent's run.
#include "telemetry/instrument.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/agent_runner.hpp"
#include "support/allocation_counter.hpp"
#include "telemetry/bound_agent.hpp"
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

#if NANOTICK_TELEMETRY

TEST(TelemetryHopAt, ShouldStampTheGivenClockReadingWithKeyAndAux) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  {
    const nt::ThreadBinding binding(*recorder);
    NT_HOP_AT(tr_tcp_write, 12345, (7ull << 32) | 3);
    NT_HOP_AT(ex_tcp_write, 999, (7ull << 32) | 0, (9ull << 32) | 4);
  }
  const auto records = drain(*recorder);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].tsc, 12345u);
  EXPECT_EQ(records[0].point, static_cast<std::uint16_t>(nt::Point::tr_tcp_write));
  EXPECT_EQ(records[0].key, (7ull << 32) | 3);
  EXPECT_EQ(records[0].aux, 0u);
  EXPECT_EQ(records[0].cycles, 0u);
  EXPECT_EQ(records[1].tsc, 999u);  // kept as given, even if older than the record before
  EXPECT_EQ(records[1].aux, (9ull << 32) | 4);
}

TEST(TelemetryHopAt, ShouldEvaluateNothingAndRecordNothingWithoutARecorder) {
  ASSERT_EQ(nt::thread_recorder(), nullptr);
  int tsc_evaluated = 0;
  int key_evaluated = 0;
  NT_HOP_AT(tr_udp_read, static_cast<std::uint64_t>(++tsc_evaluated), static_cast<std::uint64_t>(++key_evaluated));
  EXPECT_EQ(tsc_evaluated, 0);
  EXPECT_EQ(key_evaluated, 0);
  EXPECT_FALSE(NT_RECORDING());
  EXPECT_EQ(NT_RECORDER(), nullptr);
}

TEST(TelemetryHopAt, ShouldTellWhetherTheThreadRecords) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  {
    const nt::ThreadBinding binding(*recorder);
    EXPECT_TRUE(NT_RECORDING());
    EXPECT_EQ(NT_RECORDER(), recorder.get());
  }
  EXPECT_FALSE(NT_RECORDING());
}

TEST(TelemetryHopAt, ShouldNotAllocate) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  NT_HOP_AT(ex_md_write, 1, 1);
  const nanotick::test::AllocationScope scope;
  for (std::uint64_t i = 0; i < 1000; ++i) NT_HOP_AT(ex_md_write, i, i, i);
  EXPECT_EQ(scope.count(), 0u);
}

#else

TEST(TelemetryHopAt, ShouldBeCompiledOutInThisBuild) {
  GTEST_SKIP() << "built with NANOTICK_TELEMETRY=OFF (hop_at_compiled_out_test covers that)";
}

#endif

// An agent that records one hop per duty cycle and notes what its hooks saw.
struct HopAgent {
  int starts = 0;
  int closes = 0;
  bool recorder_at_start = false;
  bool recorder_at_close = false;
  bool throw_on_start = false;
  std::string_view role_name() const noexcept { return "hop-agent"; }
  void on_start() {
    ++starts;
    recorder_at_start = nt::thread_recorder() != nullptr;
    if (throw_on_start) throw std::runtime_error("start failed");
  }
  int do_work() {
    if (nt::Recorder* r = nt::thread_recorder()) (void)r->record(nt::Point::ex_engine_in, 1);
    return 1;
  }
  void on_close() {
    ++closes;
    recorder_at_close = nt::thread_recorder() != nullptr;
  }
};

TEST(BoundAgent, ShouldBindTheRecorderOnTheAgentsThreadForItsRun) {
  auto recorder = nt::Recorder::create("engine", nc::TscClock::global());
  HopAgent agent;
  nt::BoundAgent bound{agent, recorder.get()};
  static_assert(std::is_same_v<decltype(bound), nt::BoundAgent<HopAgent&>>);
  EXPECT_EQ(bound.role_name(), "hop-agent");
  {
    nc::AgentRunner<decltype(bound), nc::BusySpinIdle> runner(bound);
    runner.start();
    while (recorder->pending() < 3) {
    }
    runner.stop();
  }
  EXPECT_EQ(agent.starts, 1);
  EXPECT_EQ(agent.closes, 1);
  EXPECT_TRUE(agent.recorder_at_start);
  EXPECT_TRUE(agent.recorder_at_close);  // released after the agent's own on_close
  EXPECT_FALSE(bound.bound());
  EXPECT_EQ(nt::thread_recorder(), nullptr);  // never on the owner's thread
  EXPECT_GE(recorder->pending(), 3u);
  // Released: the recorder can be bound again, here.
  const nt::ThreadBinding again(*recorder);
}

TEST(BoundAgent, ShouldBindNothingWithoutARecorder) {
  HopAgent agent;
  nt::BoundAgent bound{agent, nullptr};
  nc::AgentInvoker invoker(bound);
  invoker.start();
  EXPECT_FALSE(bound.bound());
  EXPECT_EQ(invoker.invoke(), 1);
  invoker.close();
  EXPECT_FALSE(agent.recorder_at_start);
  EXPECT_EQ(agent.closes, 1);
}

TEST(BoundAgent, ShouldRefuseARecorderBoundElsewhereWithoutStartingTheAgent) {
  auto recorder = nt::Recorder::create("engine", nc::TscClock::global());
  const nt::ThreadBinding taken(*recorder);
  HopAgent agent;
  nt::BoundAgent bound{agent, recorder.get()};
  nc::AgentInvoker invoker(bound);
  EXPECT_THROW(invoker.start(), std::logic_error);
  EXPECT_EQ(agent.starts, 0);
  EXPECT_EQ(agent.closes, 0);  // never started: not closed either
  EXPECT_EQ(nt::thread_recorder(), recorder.get());  // the existing binding is untouched
}

TEST(BoundAgent, ShouldReleaseTheBindingWhenTheAgentFailsToStart) {
  auto recorder = nt::Recorder::create("engine", nc::TscClock::global());
  HopAgent agent;
  agent.throw_on_start = true;
  nt::BoundAgent bound{agent, recorder.get()};
  nc::AgentInvoker invoker(bound);
  EXPECT_THROW(invoker.start(), std::runtime_error);
  EXPECT_EQ(agent.starts, 1);
  EXPECT_EQ(agent.closes, 1);  // its start was attempted: closed, as the invoker promises
  EXPECT_FALSE(bound.bound());
  EXPECT_EQ(nt::thread_recorder(), nullptr);
  const nt::ThreadBinding again(*recorder);  // free again
}

TEST(BoundAgent, ShouldOwnAnAgentGivenByValue) {
  nt::BoundAgent bound{HopAgent{}, nullptr};
  static_assert(std::is_same_v<decltype(bound), nt::BoundAgent<HopAgent>>);
  nc::AgentInvoker invoker(bound);
  invoker.start();
  invoker.close();
  EXPECT_EQ(bound.agent().starts, 1);
  EXPECT_EQ(bound.agent().closes, 1);
}

}  // namespace
