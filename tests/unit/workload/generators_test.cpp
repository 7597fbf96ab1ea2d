// The generators: deterministic per seed, different across seeds, and the
// shapes docs/WORKLOADS.md promises.
#include "workload/generators.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace nanotick::workload {
namespace {

using engine::OrderType;
using engine::RequestType;

constexpr double kTestScale = 0.02;

TEST(WorkloadKinds, ShouldParseEveryGeneratedNameAndRejectOthersListingValidOnes) {
  for (const WorkloadKind kind : kGeneratedKinds) EXPECT_EQ(parse_workload_kind(to_string(kind)), kind);
  try {
    (void)parse_workload_kind("bogus");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown workload 'bogus' (valid: cancel-heavy, mixed, deep, crash) or a regime (regime-static, "
              "regime-normal, regime-swing-25, regime-swing-40, regime-flash-crash)");
  }
  EXPECT_THROW((void)parse_workload_kind("custom"), std::invalid_argument);
  EXPECT_THROW((void)parse_workload_kind("static"), std::invalid_argument) << "regimes carry their prefix";
}

TEST(Generators, ShouldRejectCustomKindAndBadScale) {
  EXPECT_THROW((void)generate({WorkloadKind::kCustom, 1, 1.0}), std::invalid_argument);
  EXPECT_THROW((void)generate({WorkloadKind::kMixed, 1, 0.0}), std::invalid_argument);
  EXPECT_THROW((void)generate({WorkloadKind::kMixed, 1, -1.0}), std::invalid_argument);
  EXPECT_THROW((void)generate({WorkloadKind::kMixed, 1, 101.0}), std::invalid_argument);
}

class EveryWorkload : public ::testing::TestWithParam<WorkloadKind> {};

TEST_P(EveryWorkload, ShouldBeIdenticalForTheSameSeedAndDifferForAnother) {
  const Workload a = generate({GetParam(), 11, kTestScale});
  const Workload b = generate({GetParam(), 11, kTestScale});
  const Workload c = generate({GetParam(), 12, kTestScale});
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_EQ(a.kind, GetParam());
  EXPECT_EQ(a.seed, 11u);
}

TEST_P(EveryWorkload, ShouldProduceOnlyWellFormedRequestsWithEventIdsInOrder) {
  const Workload wl = generate({GetParam(), 5, kTestScale});
  ASSERT_FALSE(wl.requests.empty());
  EXPECT_NO_THROW(wl.config.validate());
  for (std::size_t i = 0; i < wl.requests.size(); ++i) {
    const auto& r = wl.requests[i];
    ASSERT_EQ(r.event_id, i + 1);
    ASSERT_LT(r.instrument, wl.config.instruments.size());
    ASSERT_LE(r.client, engine::kMaxClientId);
    ASSERT_LE(r.client_order_id, engine::kMaxClientOrderId);
    ASSERT_EQ(r.reserved, 0u);
    const auto& in = wl.config.instruments[r.instrument];
    if (r.type == RequestType::kCancel) continue;
    ASSERT_GT(r.qty, 0);
    ASSERT_LE(r.qty, in.max_order_qty);
    if (r.type == RequestType::kNew && r.order_type == OrderType::kMarket) continue;
    ASSERT_EQ(r.price % in.tick_size, 0) << "request " << i;
    ASSERT_GE(r.price, in.min_price);
    ASSERT_LE(r.price, in.max_price);
  }
}

TEST_P(EveryWorkload, ShouldSizeCapacitiesAboveTheModelsPeaks) {
  GenStats stats;
  const Workload wl = generate({GetParam(), 5, kTestScale}, &stats);
  for (const auto& in : wl.config.instruments) {
    EXPECT_GE(in.max_orders, 2 * stats.peak_live_orders);
    EXPECT_GE(in.max_levels, 2 * stats.peak_levels);
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, EveryWorkload, ::testing::ValuesIn(kGeneratedKinds), [](const auto& param_info) {
  std::string name(to_string(param_info.param));
  std::erase(name, '-');
  return name;
});

TEST(Generators, CancelHeavyShouldHaveExactlyTheScaledCounts) {
  GenStats stats;
  const Workload wl = generate({WorkloadKind::kCancelHeavy, 9, 0.05}, &stats);
  std::size_t news = 0;
  std::size_t cancels = 0;
  for (const auto& r : wl.requests) {
    news += r.type == RequestType::kNew;
    cancels += r.type == RequestType::kCancel;
  }
  EXPECT_EQ(news, 50'000u);
  EXPECT_EQ(cancels, 15'000u);
  EXPECT_EQ(wl.requests.size(), 65'000u);
  EXPECT_EQ(stats.new_orders, news);
  EXPECT_EQ(stats.cancels, cancels);
}

TEST(Generators, MixedShouldHaveThePromisedShape) {
  GenStats stats;
  const Workload wl = generate({WorkloadKind::kMixed, 9, 0.1}, &stats);
  std::size_t news = 0;
  std::size_t iocs = 0;
  std::size_t modifies = 0;
  std::size_t cancels = 0;
  for (const auto& r : wl.requests) {
    news += r.type == RequestType::kNew;
    iocs += r.type == RequestType::kNew && r.order_type == OrderType::kIoc;
    modifies += r.type == RequestType::kModify;
    cancels += r.type == RequestType::kCancel;
  }
  EXPECT_EQ(stats.new_orders, news);
  EXPECT_EQ(stats.ioc_orders, iocs);
  EXPECT_EQ(stats.modifies, modifies);
  EXPECT_EQ(stats.cancels, cancels);
  const double ioc_share = static_cast<double>(iocs) / static_cast<double>(news);
  EXPECT_NEAR(ioc_share, 0.15, 0.01);
  const auto rested = static_cast<double>(stats.rested);
  EXPECT_NEAR(static_cast<double>(stats.rested_modified) / rested, 0.20, 0.04);
  EXPECT_NEAR(static_cast<double>(stats.rested_cancelled) / rested, 0.95, 0.03);
  EXPECT_EQ(stats.rested_cancelled + stats.rested_filled, stats.rested);  // nothing left resting
  const double odd = static_cast<double>(stats.late_cancels + stats.unknown_cancels) / static_cast<double>(cancels);
  EXPECT_GT(odd, 0.01);
  EXPECT_LT(odd, 0.06);
  EXPECT_GT(stats.duplicate_news, 0u);
  EXPECT_GT(stats.trades, 0u);
  EXPECT_EQ(wl.config.instruments.size(), 4u);
}

TEST(Generators, DeepShouldHoldTensOfThousandsOfRestingOrdersAtFullScale) {
  GenStats stats;
  (void)generate({WorkloadKind::kDeep, 1, 0.05}, &stats);
  EXPECT_GE(stats.peak_live_orders, 2'000u);  // 50,000 x scale built up front
  EXPECT_GT(stats.peak_levels, 100u);
  EXPECT_EQ(stats.min_trade_price >= 99'990 && stats.max_trade_price <= 100'010, true)
      << "static mid: trades stay at the touch";
}

TEST(Generators, CrashShouldTradeAcrossTensOfThousandsOfTicks) {
  GenStats stats;
  (void)generate({WorkloadKind::kCrash, 1, 0.05}, &stats);
  EXPECT_GT(stats.max_trade_price - stats.min_trade_price, 20'000);
  EXPECT_GT(stats.market_orders, 0u);
}

}  // namespace
}  // namespace nanotick::workload
