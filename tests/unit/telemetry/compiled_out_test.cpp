// Unit tests for the build switch: this translation unit is compiled as with
// the CMake option NANOTICK_TELEMETRY=OFF (the definition the
// nanotick_telemetry target gives every user is replaced before the first
// include), and shows that NT_HOP and NT_TIMED then record nothing, read no
// clock and evaluate none of their arguments, even with a recorder bound.
// Only the macros depend on the switch (instrument.hpp), so mixing this unit
// with units built with the switch on is well-defined.
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

}  // namespace
