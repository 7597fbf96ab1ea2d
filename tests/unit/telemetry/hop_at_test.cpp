// Unit tests for the instrumentation additions used by the exchange and the
// trader (telemetry compiled in): NT_HOP_AT stamps at a given clock reading,
// NT_RECORDING() / NT_RECORDER() tell whether the thread records, and
// BoundAgent binds a recorder on its agent's thread for the agent's run.
#include "telemetry/bound_agent.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/agent_runner.hpp"
#include "support/allocation_counter.hpp"
#include "telemetry/instrument.hpp"
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
