// Unit tests for the build switch: this translation unit is compiled as with
// the CMake option NANOTICK_TELEMETRY=OFF (the definition the
// nanotick_telemetry target gives every user is replaced before the first
// include), and shows that NT_HOP, NT_HOP_AT and NT_TIMED then record nothing,
// read no clock and evaluate none of their arguments, even with a recorder
// bound, and that NT_RECORDING() is false and NT_RECORDER() nullptr, so code
// behind them is dead. Only the macros depend on the switch (instrument.hpp),
// so mixing this unit with units built with the switch on is well-defined.
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

TEST(TelemetryCompiledOut, ShouldRecordNothingEvenWithARecorderBound) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  int evaluated = 0;
  int aux_evaluated = 0;
  NT_HOP(ex_tcp_read, static_cast<std::uint64_t>(++evaluated));
  NT_HOP(tr_decision, static_cast<std::uint64_t>(++evaluated), static_cast<std::uint64_t>(++aux_evaluated));
  {
    NT_TIMED(fn_book_match);
    NT_TIMED(fn_risk_check, static_cast<std::uint64_t>(++evaluated));
  }
  EXPECT_EQ(evaluated, 0);
  EXPECT_EQ(aux_evaluated, 0);
  EXPECT_EQ(recorder->pending(), 0u);
  EXPECT_EQ(recorder->dropped(), 0u);
  // The recorder itself still works: only the macros are compiled out.
  ASSERT_TRUE(recorder->record(nt::Point::ex_tcp_read, 1));
  EXPECT_EQ(recorder->pending(), 1u);
}

// The compiled-out macros are expressions/declarations usable where the real
// ones are: inside an unbraced if, in a loop, several in one scope.
TEST(TelemetryCompiledOut, ShouldStayUsableWhereverTheRealMacrosAre) {
  auto recorder = nt::Recorder::create("main", nc::TscClock::global());
  const nt::ThreadBinding binding(*recorder);
  for (std::uint64_t i = 0; i < 3; ++i) {
    if (i % 2 == 0) NT_HOP(ex_md_write, i);
    else NT_HOP(ex_md_write, i, i);
    NT_TIMED(fn_md_publish);
    NT_TIMED(fn_sequencer);
  }
  EXPECT_EQ(recorder->pending(), 0u);
}

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
