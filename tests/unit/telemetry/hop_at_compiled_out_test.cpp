// Unit tests for the build switch of the instrumentation additions: compiled
// as with NANOTICK_TELEMETRY=OFF (the definition is replaced before the first
// include, as in compiled_out_test.cpp), NT_HOP_AT records nothing and
// evaluates none of its arguments, NT_RECORDING() is false and NT_RECORDER()
// nullptr even with a recorder bound, so code behind them is dead.
#if !defined(NANOTICK_TELEMETRY)
#error "the test target must get NANOTICK_TELEMETRY from nanotick_telemetry"
#endif
#undef NANOTICK_TELEMETRY
#define NANOTICK_TELEMETRY 0

#include <gtest/gtest.h>

#include <cstdint>

#include "telemetry/instrument.hpp"
#include "telemetry/recorder.hpp"

namespace nt = nanotick::telemetry;
namespace nc = nanotick::core;

namespace {

TEST(TelemetryHopAtCompiledOut, ShouldRecordAndEvaluateNothingEvenWithARecorderBound) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  int tsc_evaluated = 0;
  int key_evaluated = 0;
  int aux_evaluated = 0;
  NT_HOP_AT(tr_tcp_write, static_cast<std::uint64_t>(++tsc_evaluated), static_cast<std::uint64_t>(++key_evaluated));
  NT_HOP_AT(ex_tcp_write, static_cast<std::uint64_t>(++tsc_evaluated), 1, static_cast<std::uint64_t>(++aux_evaluated));
  EXPECT_EQ(tsc_evaluated, 0);
  EXPECT_EQ(key_evaluated, 0);
  EXPECT_EQ(aux_evaluated, 0);
  EXPECT_EQ(recorder->pending(), 0u);
}

TEST(TelemetryHopAtCompiledOut, ShouldReportNoRecorderEvenWithOneBound) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  static_assert(!NT_RECORDING());
  EXPECT_EQ(NT_RECORDER(), nullptr);
  int reached = 0;
  if (nt::Recorder* r = NT_RECORDER()) reached += r->record(nt::Point::ex_md_write, 1) ? 1 : 2;
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(recorder->pending(), 0u);
  EXPECT_EQ(nt::thread_recorder(), recorder.get());  // the binding itself is the same in both builds
}

TEST(TelemetryHopAtCompiledOut, ShouldStayUsableWhereverTheRealMacroIs) {
  for (std::uint64_t i = 0; i < 3; ++i) {
    if (i % 2 == 0) NT_HOP_AT(ex_md_write, i, i);
    else NT_HOP_AT(ex_md_write, i, i, i);
  }
  SUCCEED();
}

}  // namespace
