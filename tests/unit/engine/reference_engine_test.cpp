// The reference model (tests/reference) on its own: the shared scenario suite
// (every rule of docs/MATCHING.md, also run against the fast engine), the
// random generator is deterministic and reaches every outcome, and the model
// keeps its invariants and the sequencing guarantees on long random streams.
#include "reference/reference_engine.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "reference/random_requests.hpp"
#include "reference/recording_sink.hpp"
#include "support/stress.hpp"
#include "unit/engine/engine_scenarios.hpp"

struct ReferenceEngineFactory {
  template <typename Sink>
  using Engine = nanotick::reference::ReferenceEngine<Sink>;
};
INSTANTIATE_TYPED_TEST_SUITE_P(ReferenceEngine, EngineScenarios, ReferenceEngineFactory);

namespace nanotick::reference {
namespace {

using engine::CancelReason;
using engine::MdType;
using engine::RejectReason;
using engine::ReportType;

TEST(RandomRequests, ShouldGiveTheSameStreamForTheSameSeedAndAnotherForAnotherSeed) {
  const auto shape = differential_shapes().front();
  RandomRequests a(shape.config, 7, shape.clients);
  RandomRequests b(shape.config, 7, shape.clients);
  RandomRequests c(shape.config, 8, shape.clients);
  int differ = 0;
  for (int i = 0; i < 10'000; ++i) {
    const engine::Request ra = a.next();
    const engine::Request rb = b.next();
    const engine::Request rc = c.next();
    ASSERT_EQ(describe(ra), describe(rb)) << "at request " << i;
    differ += describe(ra) != describe(rc) ? 1 : 0;
  }
  EXPECT_GT(differ, 9'000);
}

TEST(ReferenceEngine, ShouldProduceIdenticalOutputsForIdenticalInputs) {
  for (const auto& shape : differential_shapes()) {
    RecordingSink s1;
    RecordingSink s2;
    ReferenceEngine<RecordingSink> e1(shape.config, s1);
    ReferenceEngine<RecordingSink> e2(shape.config, s2);
    RandomRequests gen(shape.config, 42, shape.clients);
    for (int i = 0; i < 20'000; ++i) {
      const engine::Request r = gen.next();
      e1.process(r);
      e2.process(r);
    }
    EXPECT_EQ(first_difference(s1, s2), "") << shape.name;
  }
}

// Checks the guarantees that hold for any stream: sequence numbers without
// gaps, the first report of each request is its acknowledgement or rejection,
// every output carries the request's event id, the books keep their invariants
// and best() agrees with for_each_order().
TEST(ReferenceEngine, ShouldKeepSequencingAndInvariantsOnRandomStreams) {
  const std::uint64_t n = test::stress_items(60'000, 20'000);  // 20,000 under sanitizers: 60,000 took ~11 s there
  for (const auto& shape : differential_shapes()) {
    RecordingSink sink;
    ReferenceEngine<RecordingSink> engine(shape.config, sink);
    RandomRequests gen(shape.config, 1234, shape.clients);
    engine::Seq reports = 0;
    engine::Seq md = 0;
    for (std::uint64_t i = 1; i <= n; ++i) {
      sink.clear();
      const engine::Request r = gen.next();
      engine.process(r);
      if (r.type == engine::RequestType::kMassCancel && sink.reports.empty()) {  // the venue's: may cancel nothing
        ASSERT_TRUE(sink.market_data.empty());
        continue;
      }
      ASSERT_FALSE(sink.reports.empty()) << shape.name << " request " << i;
      const auto first = sink.reports.front().type;
      const bool first_is_answer = first == ReportType::kAccepted || first == ReportType::kRejected ||
                                   first == ReportType::kCancelRejected || first == ReportType::kModifyRejected ||
                                   first == ReportType::kModified || first == ReportType::kCancelled;
      ASSERT_TRUE(first_is_answer) << describe(sink.reports.front());
      for (const auto& rep : sink.reports) {
        ASSERT_EQ(rep.seq, ++reports);
        ASSERT_EQ(rep.request_seq, i);
        ASSERT_EQ(rep.event_id, r.event_id);
      }
      for (const auto& m : sink.market_data) {
        ASSERT_EQ(m.seq, ++md);
        ASSERT_EQ(m.event_id, r.event_id);
      }
      ASSERT_EQ(engine.requests_processed(), i);
      ASSERT_EQ(engine.last_report_seq(), reports);
      ASSERT_EQ(engine.last_md_seq(), md);
      if (i % 97 == 0) {
        ASSERT_NO_THROW(engine.validate_invariants()) << shape.name << " request " << i;
        for (engine::InstrumentId in = 0; in < engine.instrument_count(); ++in) {
          for (auto side : {engine::Side::kBuy, engine::Side::kSell}) {
            engine::Qty qty = 0;
            std::uint32_t orders = 0;
            bool first_level = true;
            engine::Price level_price = 0;
            engine.for_each_order(in, side, [&](const auto& o) {
              if (orders == 0) level_price = o.price;
              if (o.price != level_price) first_level = false;
              if (first_level) {
                qty += o.open_qty;
                ++orders;
              }
            });
            const auto best = engine.best(in, side);
            ASSERT_EQ(best.has_value(), orders > 0);
            if (best) {
              EXPECT_EQ(best->price, level_price);
              EXPECT_EQ(best->qty, qty);
              EXPECT_EQ(best->orders, orders);
            }
          }
        }
      }
    }
    EXPECT_NO_THROW(engine.validate_invariants()) << shape.name;
  }
}

// The differential test is only as good as the streams: across the shapes, the
// generator must reach every reject reason, report, cancel reason and event.
TEST(RandomRequests, ShouldReachEveryOutcomeAcrossTheDifferentialShapes) {
  std::set<RejectReason> reasons;
  std::set<ReportType> report_types;
  std::set<CancelReason> cancel_reasons;
  std::set<MdType> md_types;
  for (const auto& shape : differential_shapes()) {
    RecordingSink sink;
    ReferenceEngine<RecordingSink> engine(shape.config, sink);
    RandomRequests gen(shape.config, 99, shape.clients);
    for (int i = 0; i < 40'000; ++i) {
      sink.clear();
      engine.process(gen.next());
      for (const auto& r : sink.reports) {
        report_types.insert(r.type);
        if (r.reason != RejectReason::kNone) reasons.insert(r.reason);
        if (r.type == ReportType::kCancelled) cancel_reasons.insert(r.cancel_reason);
      }
      for (const auto& m : sink.market_data) md_types.insert(m.type);
    }
  }
  for (auto reason :
       {RejectReason::kUnknownInstrument, RejectReason::kInvalidRequestType, RejectReason::kInvalidSide,
        RejectReason::kInvalidOrderType, RejectReason::kInvalidStpMode, RejectReason::kPriceOffTick,
        RejectReason::kPriceOutOfBand, RejectReason::kPriceOutsideCollar, RejectReason::kZeroQuantity,
        RejectReason::kQuantityTooLarge, RejectReason::kInvalidClientId, RejectReason::kInvalidClientOrderId,
        RejectReason::kReservedNotZero, RejectReason::kDuplicateClientOrderId, RejectReason::kUnknownOrder,
        RejectReason::kTooLateToCancel, RejectReason::kModifyNoChange, RejectReason::kOrderCapacity,
        RejectReason::kLevelCapacity}) {
    EXPECT_TRUE(reasons.contains(reason)) << "never rejected with " << engine::to_string(reason);
  }
  for (int t = 1; t <= 7; ++t) {
    EXPECT_TRUE(report_types.contains(static_cast<ReportType>(t))) << "no report of type " << t;
  }
  for (int c = 1; c <= 5; ++c) {
    EXPECT_TRUE(cancel_reasons.contains(static_cast<CancelReason>(c))) << "no cancel reason " << c;
  }
  for (int m = 1; m <= 5; ++m) {
    EXPECT_TRUE(md_types.contains(static_cast<MdType>(m))) << "no market data type " << m;
  }
}

}  // namespace
}  // namespace nanotick::reference
