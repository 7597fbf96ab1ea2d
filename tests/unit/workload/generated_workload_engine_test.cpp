// The generators' book model agrees with the engine semantics: each generated
// workload, replayed through an engine (the reference model of tests/reference,
// which implements docs/MATCHING.md for clarity, and the fast engine), gives exactly the trades,
// cancels and rejects the generator meant -- no accidental rejects, no
// capacity exhaustion, duplicates and late/unknown cancels exactly where
// intended.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>

#include "engine/events.hpp"
#include "engine/matching_engine.hpp"
#include "reference/reference_engine.hpp"
#include "workload/generators.hpp"

namespace nanotick::workload {
namespace {

using engine::CancelReason;
using engine::MdType;
using engine::RejectReason;
using engine::ReportType;

struct CountingSink {
  std::array<std::uint64_t, 8> reports{};
  std::array<std::uint64_t, 8> cancels{};
  std::array<std::uint64_t, 512> rejects{};
  std::array<std::uint64_t, 8> md{};
  void on_report(const engine::ExecReport& r) {
    ++reports[static_cast<std::size_t>(r.type) & 7u];
    if (r.type == ReportType::kCancelled) ++cancels[static_cast<std::size_t>(r.cancel_reason) & 7u];
    if (r.reason != RejectReason::kNone) ++rejects[static_cast<std::size_t>(r.reason) & 511u];
  }
  void on_market_data(const engine::MdEvent& m) { ++md[static_cast<std::size_t>(m.type) & 7u]; }
  std::uint64_t reject_count(RejectReason reason) const { return rejects[static_cast<std::size_t>(reason)]; }
  std::uint64_t report_count(ReportType type) const { return reports[static_cast<std::size_t>(type)]; }
};

class GeneratedWorkloadOnEngine : public ::testing::TestWithParam<WorkloadKind> {};

// Unconstrained on purpose: clang 16 crashes on a concept-constrained template
// template parameter here (its constraint check of Engine<CountingSink>).
template <template <typename> class Engine>
void expect_modelled_outcomes(WorkloadKind kind) {
  const bool regime = std::ranges::find(kRegimeKinds, kind) != std::end(kRegimeKinds);
  GenStats stats;
  // The regimes' static book is deep (slow on the reference model under
  // ASan); the differential test runs them further.
  const Workload wl = generate({kind, 21, regime ? 0.02 : 0.05}, &stats);
  CountingSink sink;
  auto engine = std::make_unique<Engine<CountingSink>>(wl.config, sink);
  for (const auto& r : wl.requests) engine->process(r);

  EXPECT_EQ(sink.md[static_cast<std::size_t>(MdType::kTrade)], stats.trades);
  EXPECT_EQ(sink.cancels[static_cast<std::size_t>(CancelReason::kUserRequest)], stats.rested_cancelled);
  EXPECT_EQ(sink.report_count(ReportType::kRejected), stats.duplicate_news);
  EXPECT_EQ(sink.reject_count(RejectReason::kDuplicateClientOrderId), stats.duplicate_news);
  EXPECT_EQ(sink.report_count(ReportType::kCancelRejected), stats.late_cancels + stats.unknown_cancels);
  EXPECT_EQ(sink.report_count(ReportType::kModifyRejected), stats.late_modifies);
  EXPECT_EQ(sink.report_count(ReportType::kModified), stats.modifies - stats.late_modifies);
  const std::uint64_t gone = stats.late_cancels + stats.late_modifies;
  if (!regime) {
    EXPECT_EQ(sink.reject_count(RejectReason::kTooLateToCancel), gone);
    EXPECT_EQ(sink.reject_count(RejectReason::kUnknownOrder), stats.unknown_cancels);
  } else {
    // A regime cancels orders filled long ago, which the engine's finished-order
    // memory (max_orders to 2 x max_orders finishes) may have forgotten.
    EXPECT_EQ(stats.unknown_cancels, 0u);
    EXPECT_EQ(sink.reject_count(RejectReason::kTooLateToCancel) + sink.reject_count(RejectReason::kUnknownOrder), gone);
    EXPECT_GE(sink.reject_count(RejectReason::kTooLateToCancel), stats.duplicate_cancels + stats.stale_modifies);
  }
  EXPECT_EQ(sink.report_count(ReportType::kAccepted), stats.new_orders - stats.duplicate_news);
  EXPECT_EQ(sink.cancels[static_cast<std::size_t>(CancelReason::kSelfTrade)], 0u);
  std::uint64_t live = 0;
  for (engine::InstrumentId i = 0; i < engine->instrument_count(); ++i) live += engine->live_orders(i);
  EXPECT_EQ(live + stats.rested_cancelled + stats.rested_filled, stats.rested);
  if (kind == WorkloadKind::kMixed) {
    EXPECT_EQ(live, 0u) << "mixed cancels everything left at the end";
  }
  engine->validate_invariants();
}

TEST_P(GeneratedWorkloadOnEngine, ReferenceEngineShouldGiveExactlyTheOutcomesTheGeneratorModelled) {
  expect_modelled_outcomes<reference::ReferenceEngine>(GetParam());
}

TEST_P(GeneratedWorkloadOnEngine, MatchingEngineShouldGiveExactlyTheOutcomesTheGeneratorModelled) {
  expect_modelled_outcomes<engine::MatchingEngine>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Workloads, GeneratedWorkloadOnEngine, ::testing::ValuesIn(kGeneratedKinds),
                         [](const auto& param_info) {
                           std::string name(to_string(param_info.param));
                           std::erase(name, '-');
                           return name;
                         });

}  // namespace
}  // namespace nanotick::workload
