// The regime family (src/workload/regimes.hpp): deterministic to the byte,
// dense sequence numbers, and the methodology's mix read back from the
// request stream alone (IOC share, one modify for 20% of the rest, 95%
// cancelled, duplicate cancels and stale modifies after the order is gone),
// then the duplicate cancels and stale modifies replayed through the engine:
// every one rejected.
#include "workload/regimes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/matching_engine.hpp"
#include "support/stress.hpp"
#include "workload/book_model.hpp"
#include "workload/generators.hpp"
#include "workload/workload_file.hpp"

namespace nanotick::workload {
namespace {

using engine::OrderType;
using engine::RejectReason;
using engine::ReportType;
using engine::RequestType;
using engine::Side;

// 100,000 new orders (~200,000 messages); 50,000 under sanitizers, where the
// tolerances below are still four standard deviations or more.
constexpr double kMixScale = test::kSanitizedBuild ? 0.05 : 0.1;
constexpr double kShapeScale = 0.1;

std::string name_of(const ::testing::TestParamInfo<WorkloadKind>& info) {
  std::string name(to_string(info.param));
  std::erase(name, '-');
  return name;
}

// What the request stream says about each order, keyed by (client, id).
struct Life {
  Side side{};
  bool ioc = false;
  engine::Price price = 0;
  engine::Qty qty = 0;
  int modifies_before_cancel = 0;
  int cancels = 0;
  int modifies_after_cancel = 0;
  std::size_t first_cancel = 0;  // index of its first cancel request
  bool repriced = false;
  bool qty_increased = false;
};

// The mix, counted from the requests only (no generator statistics).
struct Mix {
  std::uint64_t news = 0, iocs = 0, non_ioc = 0;
  std::uint64_t modified = 0, repriced = 0, increased = 0, cancelled = 0, modified_and_cancelled = 0;
  std::uint64_t duplicate_cancels = 0, stale_modifies = 0;
  std::uint64_t ioc_touched = 0;  // IOCs named by a later cancel or modify (must be 0)
  std::uint64_t unknown_targets = 0;  // cancels/modifies of ids never sent (must be 0)
  // Duplicate cancels and stale modifies: their index and that of the cancel they follow.
  std::vector<std::pair<std::size_t, std::size_t>> late_requests;
};

Mix mix_of(const Workload& wl) {
  Mix m;
  std::unordered_map<BookModel::Key, Life> lives;
  for (std::size_t i = 0; i < wl.requests.size(); ++i) {
    const engine::Request& r = wl.requests[i];
    const BookModel::Key key = BookModel::key_of(r.client, r.client_order_id);
    if (r.type == RequestType::kNew) {
      lives[key] = Life{r.side, r.order_type == OrderType::kIoc, r.price, r.qty};
      continue;
    }
    const auto it = lives.find(key);
    if (it == lives.end()) {
      ++m.unknown_targets;
      continue;
    }
    Life& o = it->second;
    if (o.ioc) ++m.ioc_touched;
    if (r.type == RequestType::kCancel) {
      if (++o.cancels == 1) {
        o.first_cancel = i;
      } else {
        m.late_requests.emplace_back(i, o.first_cancel);
      }
    } else if (o.cancels > 0) {
      ++o.modifies_after_cancel;
      m.late_requests.emplace_back(i, o.first_cancel);
    } else {
      ++o.modifies_before_cancel;
      o.repriced = r.price != o.price;
      o.qty_increased = r.qty > o.qty;
      EXPECT_LE(std::abs(r.price - o.price), 1) << "request " << i << ": a modify moves one tick at most";
    }
  }
  for (const auto& [key, o] : lives) {
    ++m.news;
    if (o.ioc) {
      ++m.iocs;
      continue;
    }
    ++m.non_ioc;
    m.modified += o.modifies_before_cancel > 0;
    m.repriced += o.repriced;
    m.increased += o.qty_increased;
    m.cancelled += o.cancels > 0;
    m.modified_and_cancelled += o.modifies_before_cancel > 0 && o.cancels > 0;
    m.duplicate_cancels += o.cancels > 1 ? static_cast<std::uint64_t>(o.cancels - 1) : 0;
    m.stale_modifies += static_cast<std::uint64_t>(o.modifies_after_cancel);
    EXPECT_LE(o.modifies_before_cancel, 1) << "one modify per order";
    EXPECT_LE(o.cancels, 2) << "a cancel and at most one duplicate";
  }
  return m;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

class Regime : public ::testing::TestWithParam<WorkloadKind> {};

TEST_P(Regime, ShouldBeTheSameBytesForTheSameSeedAndDifferentForAnother) {
  const auto a = encode_workload(generate({GetParam(), 3, 0.02}));
  const auto b = encode_workload(generate({GetParam(), 3, 0.02}));
  const auto c = encode_workload(generate({GetParam(), 4, 0.02}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_P(Regime, ShouldNumberEveryMessageDenselyOnOneInstrumentWithItsPricesInTheBand) {
  const Workload wl = generate({GetParam(), 5, 0.02});
  ASSERT_EQ(wl.config.instruments.size(), 1u);
  const auto& in = wl.config.instruments[0];
  EXPECT_EQ(in.tick_size, 1);
  for (std::size_t i = 0; i < wl.requests.size(); ++i) {
    const auto& r = wl.requests[i];
    ASSERT_EQ(r.event_id, i + 1) << "dense sequence numbers from 1";
    ASSERT_EQ(r.instrument, 0u);
    if (r.type == RequestType::kCancel) continue;
    ASSERT_GE(r.price, in.min_price) << "request " << i;
    ASSERT_LE(r.price, in.max_price) << "request " << i;
    if (r.type == RequestType::kNew) {
      ASSERT_GE(r.qty, 1);
      ASSERT_LE(r.qty, 100);
    }
  }
}

TEST_P(Regime, ShouldHaveTheMethodologysMixAtAModerateScale) {
  GenStats stats;
  const Workload wl = generate({GetParam(), 9, kMixScale}, &stats);
  const Mix m = mix_of(wl);
  // The methodology's figures, written out: the generator's constants must match them.
  const auto expected_news = static_cast<std::uint64_t>(std::llround(1'000'000 * kMixScale));
  EXPECT_EQ(m.news, expected_news);
  EXPECT_EQ(m.unknown_targets, 0u);
  EXPECT_EQ(m.ioc_touched, 0u) << "IOCs are never modified or cancelled";
  EXPECT_NEAR(share(m.iocs, m.news), 0.15, 0.01);
  EXPECT_NEAR(share(m.modified, m.non_ioc), 0.20, 0.01);
  EXPECT_EQ(m.increased, m.modified) << "every modify adds quantity";
  EXPECT_NEAR(share(m.repriced, m.modified), 0.80, 0.02);
  EXPECT_NEAR(share(m.cancelled, m.non_ioc), 0.95, 0.01);
  EXPECT_NEAR(share(m.duplicate_cancels, m.cancelled), 0.02, 0.005);
  EXPECT_NEAR(share(m.stale_modifies, m.modified_and_cancelled), 0.02, 0.008);
  EXPECT_GT(m.duplicate_cancels, 0u);
  EXPECT_GT(m.stale_modifies, 0u);
  const double per_order = share(wl.requests.size(), m.news);
  EXPECT_GT(per_order, 1.95) << "~2.0 M messages per 1 M new orders";
  EXPECT_LT(per_order, 2.05);
  // The generator's own counts agree with the stream.
  EXPECT_EQ(stats.new_orders, m.news);
  EXPECT_EQ(stats.ioc_orders, m.iocs);
  EXPECT_EQ(stats.duplicate_cancels, m.duplicate_cancels);
  EXPECT_EQ(stats.stale_modifies, m.stale_modifies);
  EXPECT_NEAR(static_cast<double>(stats.median_lifetime_ns), 430'000.0, 30'000.0) << "median lifetime ~0.43 ms";
}

// A sink that keeps, per request, its first report's type and reason.
struct FirstReportSink {
  std::vector<std::pair<ReportType, RejectReason>> first;
  std::uint64_t last_request = 0;
  void on_report(const engine::ExecReport& r) {
    if (r.request_seq == last_request) return;
    last_request = r.request_seq;
    first.emplace_back(r.type, r.reason);
  }
  void on_market_data(const engine::MdEvent&) {}
};

// A duplicate cancel or stale modify is refused: too late when the cancel it
// follows took the order out of the book (the engine remembers it), too late
// or unknown when that cancel itself came after a fill (the key may be
// forgotten by then: docs/MATCHING.md, "Finished orders").
TEST_P(Regime, EngineShouldRejectEveryDuplicateCancelAndStaleModify) {
  const Workload wl = generate({GetParam(), 9, kMixScale});
  const Mix m = mix_of(wl);
  ASSERT_FALSE(m.late_requests.empty());
  FirstReportSink sink;
  auto engine = std::make_unique<engine::MatchingEngine<FirstReportSink>>(wl.config, sink);
  for (const auto& r : wl.requests) engine->process(r);
  ASSERT_EQ(sink.first.size(), wl.requests.size()) << "one first report per request";
  std::uint64_t after_a_real_cancel = 0;
  for (const auto& [i, cancel_index] : m.late_requests) {
    const bool cancel = wl.requests[i].type == RequestType::kCancel;
    ASSERT_EQ(sink.first[i].first, cancel ? ReportType::kCancelRejected : ReportType::kModifyRejected)
        << "request " << i + 1;
    if (sink.first[cancel_index].first == ReportType::kCancelled) {
      ++after_a_real_cancel;
      ASSERT_EQ(sink.first[i].second, RejectReason::kTooLateToCancel) << "request " << i + 1;
    } else {
      ASSERT_EQ(sink.first[cancel_index].first, ReportType::kCancelRejected);
      ASSERT_TRUE(sink.first[i].second == RejectReason::kTooLateToCancel ||
                  sink.first[i].second == RejectReason::kUnknownOrder)
          << "request " << i + 1;
    }
  }
  EXPECT_GT(after_a_real_cancel, 0u);
  std::uint64_t rejected = 0;
  for (const auto& [type, reason] : sink.first) {
    rejected += type == ReportType::kRejected;
    if (type == ReportType::kCancelRejected || type == ReportType::kModifyRejected) {
      EXPECT_TRUE(reason == RejectReason::kTooLateToCancel || reason == RejectReason::kUnknownOrder)
          << "only orders no longer live are refused";
    }
  }
  EXPECT_EQ(rejected, 0u) << "every new order is accepted";
  engine->validate_invariants();
}

INSTANTIATE_TEST_SUITE_P(Regimes, Regime, ::testing::ValuesIn(kRegimeKinds), name_of);

TEST(Regimes, ShouldScaleTheNewOrderCountAndKeepAtLeastTwo) {
  GenStats stats;
  (void)generate({WorkloadKind::kRegimeNormal, 1, 0.003}, &stats);
  EXPECT_EQ(stats.new_orders, 3'000u);
  (void)generate({WorkloadKind::kRegimeNormal, 1, 1e-9}, &stats);
  EXPECT_EQ(stats.new_orders, 2u);
}

TEST(Regimes, StaticShouldKeepItsMidAndRestOnBothSidesOfIt) {
  GenStats stats;
  const Workload wl = generate({WorkloadKind::kRegimeStatic, 2, kShapeScale}, &stats);
  EXPECT_EQ(stats.min_mid, 33'504);
  EXPECT_EQ(stats.max_mid, 33'504);
  for (const auto& r : wl.requests) {
    if (r.type != RequestType::kNew) continue;
    if (r.side == Side::kBuy) {
      ASSERT_LT(r.price, 33'504);
    } else {
      ASSERT_GT(r.price, 33'504);
    }
  }
  // ~5% of the non-IOC orders are never cancelled: the book grows to ~4.25%
  // of the new orders by the end (42.5k at scale 1), few fills.
  const double orders = 1'000'000 * kShapeScale;
  EXPECT_GT(static_cast<double>(stats.peak_live_orders), 0.035 * orders);
  EXPECT_LT(static_cast<double>(stats.peak_live_orders), 0.07 * orders);
  EXPECT_LT(static_cast<double>(stats.trades), 0.08 * orders);
}

TEST(Regimes, SwingShouldGrowFromNormalToFlashCrash) {
  // Same seed, same draws: each log path is swing x the same random walk
  // (minus the Ito drift), so the span grows with the swing.
  std::vector<std::int64_t> spans;
  for (const WorkloadKind kind : {WorkloadKind::kRegimeNormal, WorkloadKind::kRegimeSwing25,
                                  WorkloadKind::kRegimeSwing40, WorkloadKind::kRegimeFlashCrash}) {
    GenStats stats;
    (void)generate({kind, 1, 0.02}, &stats);
    spans.push_back(stats.max_mid - stats.min_mid);
  }
  EXPECT_LT(spans[0], spans[1]);
  EXPECT_LT(spans[1], spans[2]);
  EXPECT_LT(spans[2], spans[3]);
  EXPECT_GT(spans[3], 10'000) << "the flash crash walks tens of thousands of ticks";
}

}  // namespace
}  // namespace nanotick::workload
