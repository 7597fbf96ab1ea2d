// RiskManager: each limit at and over its value (order size, price band,
// position including working orders, open orders and notional per
// instrument and global, max loss per instrument and global, the rate
// throttle), request validation, the order of the checks, every block
// counted by reason; limit validation; no allocation once built. The working
// exposure it checks against: risk_manager_exposure_test.cpp.
#include "trading/risk_manager.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/allocation_counter.hpp"
#include "unit/trading/risk_manager_fixture.hpp"

namespace {

using namespace risk_manager_fixture;

TEST(RiskManager, ShouldAllowAnOrderAtMaxOrderQtyAndBlockOneAbove) {
  nt::InstrumentRiskLimits l = wide();
  l.max_order_qty = 10;
  Fixture f(l);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 10)), kAllowed);
  EXPECT_EQ(f.check(f.order(kSell, 100, 11)), nt::RiskResult::kMaxOrderQty);
  EXPECT_EQ(f.risk.blocked(nt::RiskResult::kMaxOrderQty), 1u);
  EXPECT_EQ(f.risk.allowed(), 1u);
}

TEST(RiskManager, ShouldAllowPricesOnTheBandAroundTheFairPriceAndBlockPricesOutside) {
  nt::InstrumentRiskLimits l = wide();
  l.price_band = 5;
  Fixture f(l);
  EXPECT_EQ(f.check(f.order(kBuy, 105, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 95, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 106, 1)), nt::RiskResult::kPriceBand);
  EXPECT_EQ(f.check(f.order(kSell, 94, 1)), nt::RiskResult::kPriceBand);
  // A fractional fair price: the band is [95.4, 105.4].
  EXPECT_EQ(f.check(f.order(kSell, 95, 1), kT0, 100.4), nt::RiskResult::kPriceBand);
  EXPECT_EQ(f.check(f.order(kSell, 96, 1), kT0, 100.4), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0, kNaN), nt::RiskResult::kNoFairPrice);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0, std::numeric_limits<double>::infinity()), nt::RiskResult::kNoFairPrice);
  EXPECT_EQ(f.risk.blocked(nt::RiskResult::kPriceBand), 3u);
  EXPECT_EQ(f.risk.blocked(nt::RiskResult::kNoFairPrice), 2u);
}

TEST(RiskManager, ShouldCountWorkingOrdersOfTheSameSideTowardsMaxPosition) {
  nt::InstrumentRiskLimits l = wide();
  l.max_position = 20;
  Fixture f(l);
  EXPECT_EQ(f.send(f.order(kBuy, 100, 10)), kAllowed);
  EXPECT_EQ(f.send(f.order(kBuy, 100, 10)), kAllowed);  // working buys 20: at the limit
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kMaxPosition);
  // Sells are counted on their own side: 20 working sells are fine too.
  EXPECT_EQ(f.send(f.order(kSell, 100, 20)), kAllowed);
  EXPECT_EQ(f.check(f.order(kSell, 100, 1)), nt::RiskResult::kMaxPosition);
  EXPECT_EQ(f.working().open_buy_qty(0), 20);
  EXPECT_EQ(f.working().open_sell_qty(0), 20);
}

TEST(RiskManager, ShouldCountThePositionTowardsMaxPosition) {
  nt::InstrumentRiskLimits l = wide();
  l.max_position = 20;
  Fixture f(l);
  f.fill(0, kBuy, 100, 15);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 5)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 6)), nt::RiskResult::kMaxPosition);
  // Selling 35 goes from +15 to -20: at the limit on the other side.
  EXPECT_EQ(f.check(f.order(kSell, 100, 35)), kAllowed);
  EXPECT_EQ(f.check(f.order(kSell, 100, 36)), nt::RiskResult::kMaxPosition);
  // Beyond the limit (e.g. after a fill raced a cancel), orders that reduce it still pass.
  f.fill(0, kBuy, 100, 10);  // +25
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kMaxPosition);
  EXPECT_EQ(f.check(f.order(kSell, 100, 5)), kAllowed);
}

TEST(RiskManager, ShouldLimitOpenOrdersPerInstrumentAndGlobally) {
  nt::InstrumentRiskLimits l = wide();
  l.max_open_orders = 3;
  nt::GlobalRiskLimits g = wide_global();
  g.max_open_orders = 4;
  Fixture f(l, g);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(f.send(f.order(kBuy, 100, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kMaxOpenOrders);
  EXPECT_EQ(f.send(f.order(kBuy, 100, 1, 1)), kAllowed);  // the 4th overall, on instrument 1
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 1)), nt::RiskResult::kMaxOpenOrdersGlobal);
  EXPECT_EQ(f.working().open_orders(), 4u);
  EXPECT_EQ(f.working().open_orders(0), 3u);
  // A cancel frees a slot for both limits.
  f.cancel(1);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 0)), kAllowed);
}

TEST(RiskManager, ShouldLimitOpenNotionalPerInstrumentAndGlobally) {
  nt::InstrumentRiskLimits l = wide();
  l.max_open_notional = 3'000;
  nt::GlobalRiskLimits g = wide_global();
  g.max_open_notional = 5'000;
  Fixture f(l, g);
  EXPECT_EQ(f.send(f.order(kBuy, 100, 10)), kAllowed);   // 1000
  EXPECT_EQ(f.send(f.order(kSell, 100, 20)), kAllowed);  // 3000: at the limit (both sides count)
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kMaxOpenNotional);
  EXPECT_EQ(f.working().open_notional(0), 3'000);
  EXPECT_EQ(f.send(f.order(kBuy, 100, 20, 1)), kAllowed);  // total 5000: at the global limit
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 1)), nt::RiskResult::kMaxOpenNotionalGlobal);
  EXPECT_EQ(f.working().open_notional(), 5'000);
  // A fill reduces the working notional at the order's own price.
  f.filled(1, 4);
  EXPECT_EQ(f.working().open_notional(0), 2'600);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 4)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 5)), nt::RiskResult::kMaxOpenNotional);
}

TEST(RiskManager, ShouldUseTheAbsolutePriceForNotional) {
  nt::InstrumentRiskLimits l = wide();
  l.max_open_notional = 100;
  l.price_band = 1'000;
  Fixture f(l);
  EXPECT_EQ(f.check(f.order(kBuy, -10, 10), kT0, -10.0), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, -10, 11), kT0, -10.0), nt::RiskResult::kMaxOpenNotional);
}

TEST(RiskManager, ShouldBlockAtMaxLossPerInstrumentIncludingUnrealisedPnl) {
  nt::InstrumentRiskLimits l = wide();
  l.max_loss = 500;
  Fixture f(l);
  f.fill(0, kBuy, 100, 10);
  ASSERT_TRUE(f.keeper.mark(0, 50.0));  // -500: at the limit
  EXPECT_EQ(f.check(f.order(kBuy, 50, 1), kT0, 50.0), kAllowed);
  ASSERT_TRUE(f.keeper.mark(0, 49.9));  // -501
  EXPECT_EQ(f.check(f.order(kBuy, 50, 1), kT0, 49.9), nt::RiskResult::kMaxLoss);
  EXPECT_EQ(f.check(f.order(kSell, 50, 1), kT0, 49.9), nt::RiskResult::kMaxLoss);
  // The other instrument trades on.
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 1)), kAllowed);
  // Realised losses count the same: sell out at 49 (realised -510).
  f.fill(0, kSell, 49, 10);
  EXPECT_EQ(f.keeper.position(0)->realised, -510);
  EXPECT_EQ(f.check(f.order(kBuy, 49, 1), kT0, 49.0), nt::RiskResult::kMaxLoss);
}

TEST(RiskManager, ShouldBlockAtMaxLossOverAllInstruments) {
  nt::GlobalRiskLimits g = wide_global();
  g.max_loss = 800;
  Fixture f(wide(), g);
  f.fill(0, kBuy, 100, 10);
  f.fill(1, kBuy, 100, 10);
  ASSERT_TRUE(f.keeper.mark(0, 60.0));  // -400
  ASSERT_TRUE(f.keeper.mark(1, 60.0));  // -400: total -800, at the limit
  EXPECT_EQ(f.check(f.order(kBuy, 60, 1), kT0, 60.0), kAllowed);
  ASSERT_TRUE(f.keeper.mark(1, 59.0));  // total -810
  EXPECT_EQ(f.check(f.order(kBuy, 60, 1), kT0, 60.0), nt::RiskResult::kMaxLossGlobal);
}

TEST(RiskManager, ShouldThrottleTheOrderRateWithATokenBucket) {
  nt::GlobalRiskLimits g = wide_global();
  g.orders_per_second = 10;
  g.burst = 5;
  Fixture f(wide(), g);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f.send(f.order(kBuy, 100, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kRateThrottle);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0 + 99'999'999), nt::RiskResult::kRateThrottle);
  // 100 ms at 10/s is one token; blocked checks took none.
  EXPECT_EQ(f.send(f.order(kBuy, 100, 1), kT0 + 100'000'000), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0 + 100'000'000), nt::RiskResult::kRateThrottle);
  // A long pause refills up to the burst, not beyond.
  const nt::TimeNs later = kT0 + 3'600'000'000'000;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f.send(f.order(kBuy, 100, 1), later), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), later), nt::RiskResult::kRateThrottle);
  // A clock that steps back refills nothing.
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), later - 1'000'000'000), nt::RiskResult::kRateThrottle);
  EXPECT_EQ(f.risk.blocked(nt::RiskResult::kRateThrottle), 5u);
}

TEST(RiskManager, ShouldMakeOrdersSentWithoutACheckPayBackTheirTokens) {
  nt::GlobalRiskLimits g = wide_global();
  g.orders_per_second = 10;
  g.burst = 2;
  Fixture f(wide(), g);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(f.orders.submit(f.order(kBuy, 100, 1)).ok());
    f.risk.on_sent(kT0);
  }
  // One token of debt: 100 ms brings the bucket to 0, 200 ms to one token.
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0 + 100'000'000), nt::RiskResult::kRateThrottle);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1), kT0 + 200'000'000), kAllowed);
}

TEST(RiskManager, ShouldValidateTheRequestBeforeAnyLimit) {
  Fixture f;
  nt::OrderRequest r = f.order(kBuy, 100, 1, 2);
  EXPECT_EQ(f.check(r), nt::RiskResult::kUnknownInstrument);
  r = f.order(static_cast<nt::Side>(0), 100, 1);
  EXPECT_EQ(f.check(r), nt::RiskResult::kInvalidSide);
  r = f.order(kBuy, 100, 1);
  r.type = static_cast<nt::OrderType>(9);
  EXPECT_EQ(f.check(r), nt::RiskResult::kInvalidOrderType);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 0)), nt::RiskResult::kInvalidQty);
  EXPECT_EQ(f.check(f.order(kBuy, 100, -1)), nt::RiskResult::kInvalidQty);
  r = f.order(kBuy, 0, 1);
  r.type = nt::OrderType::kMarket;
  EXPECT_EQ(f.check(r), nt::RiskResult::kUnpricedOrder);
  r = f.order(kBuy, 100, 1);
  r.type = nt::OrderType::kIoc;
  EXPECT_EQ(f.send(r), kAllowed);
  EXPECT_EQ(f.check(r), nt::RiskResult::kDuplicateOrder);
  r = f.order(kBuy, 100, 1);
  r.type = nt::OrderType::kFok;
  EXPECT_EQ(f.check(r), kAllowed);
  // A position keeper with fewer instruments than the limits table.
  const nt::PositionKeeper small(1);
  EXPECT_EQ(f.risk.check_new(f.order(kBuy, 100, 1, 1), f.working(), small, kFair, kT0),
            nt::RiskResult::kUnknownInstrument);
  EXPECT_EQ(f.risk.blocked(nt::RiskResult::kUnknownInstrument), 2u);
  EXPECT_EQ(f.risk.blocked_total(), 8u);
}

TEST(RiskManager, ShouldReturnTheFirstFailingReasonInTheDocumentedOrder) {
  nt::InstrumentRiskLimits l = wide();
  l.max_order_qty = 10;
  l.price_band = 5;
  l.max_position = 5;
  l.max_loss = 0;
  Fixture f(l);
  // Size, band and position all fail: size comes first.
  EXPECT_EQ(f.check(f.order(kBuy, 200, 11)), nt::RiskResult::kMaxOrderQty);
  // Band and position fail: band first.
  EXPECT_EQ(f.check(f.order(kBuy, 200, 6)), nt::RiskResult::kPriceBand);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 6)), nt::RiskResult::kMaxPosition);
  // A loss beats everything but request validity.
  f.fill(0, kBuy, 101, 1);
  ASSERT_TRUE(f.keeper.mark(0, 100.0));
  EXPECT_EQ(f.check(f.order(kBuy, 200, 11)), nt::RiskResult::kMaxLoss);
  EXPECT_EQ(f.check(f.order(kBuy, 200, 0)), nt::RiskResult::kInvalidQty);
}

TEST(RiskManager, ShouldRejectInvalidLimitsNamingTheInstrumentAndField) {
  auto message_of = [](const nt::InstrumentRiskLimits& l, const nt::GlobalRiskLimits& g) -> std::string {
    try {
      const std::vector<nt::InstrumentRiskLimits> table{wide(), l};
      nt::RiskManager r(table, g, 0);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  struct Case {
    void (*mutate)(nt::InstrumentRiskLimits&, nt::GlobalRiskLimits&);
    const char* expected;
  };
  const std::vector<Case> cases{
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.max_order_qty = 0; }, "instrument 1: max_order_qty"},
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.max_position = -1; }, "instrument 1: max_position"},
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.max_open_orders = 0; },
       "instrument 1: max_open_orders"},
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.max_open_notional = 0; },
       "instrument 1: max_open_notional"},
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.max_loss = -5; }, "instrument 1: max_loss"},
      {[](nt::InstrumentRiskLimits& l, nt::GlobalRiskLimits&) { l.price_band = -1; }, "instrument 1: price_band"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.max_open_orders = 0; }, "global: max_open_orders"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.max_open_orders = (1u << 24) + 1; },
       "global: max_open_orders"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.max_open_notional = 0; },
       "global: max_open_notional"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.max_loss = -1; }, "global: max_loss"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.orders_per_second = 0; },
       "global: orders_per_second"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.orders_per_second = 100'000'001; },
       "global: orders_per_second"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.burst = 0; }, "global: burst"},
      {[](nt::InstrumentRiskLimits&, nt::GlobalRiskLimits& g) { g.burst = 1'000'001; }, "global: burst"},
  };
  for (const Case& c : cases) {
    nt::InstrumentRiskLimits l = wide();
    nt::GlobalRiskLimits g = wide_global();
    c.mutate(l, g);
    EXPECT_NE(message_of(l, g).find(c.expected), std::string::npos) << c.expected << ": " << message_of(l, g);
  }
  EXPECT_EQ(message_of(wide(), wide_global()), "");
  nt::InstrumentRiskLimits zero_ok = wide();
  zero_ok.max_position = 0;
  zero_ok.max_loss = 0;
  zero_ok.price_band = 0;
  EXPECT_EQ(message_of(zero_ok, wide_global()), "");
  EXPECT_THROW(nt::RiskManager(std::vector<nt::InstrumentRiskLimits>{}, wide_global(), 0), std::invalid_argument);
}

TEST(RiskManager, ShouldNotAllocateOnChecksAndOrderEvents) {
  nt::GlobalRiskLimits g = wide_global();
  g.max_open_orders = 64;
  Fixture f(wide(), g);
  f.sender.sent.reserve(16);  // the recorder's own storage, before counting
  const nanotick::test::AllocationScope scope;
  nt::TimeNs now = kT0;
  for (int i = 0; i < 2000; ++i) {
    now += 1'000;
    nt::OrderRequest r = f.order(i % 2 == 0 ? kBuy : kSell, 100 + i % 5, 1 + i % 7, i % 2);
    if (f.send(r, now) != kAllowed) continue;
    const nt::ClientOrderId id = r.client_order_id;
    f.accept(id);
    if (f.check_modify(id, 101, 8, now) == kAllowed && f.orders.modify(id, 101, 8).ok()) {
      f.risk.on_sent(now);
      if (i % 3 == 0) f.modified(id);
      else f.modify_rejected(id);
    }
    f.filled(id, 1);
    if (f.orders.find(id) != nullptr) {
      if (i % 4 == 0) (void)f.orders.on_execution_report(nanotick::test::cancelled(f.find(id), 0));  // the exchange's
      else f.cancel(id);
    }
    f.sender.sent.clear();  // keeps its capacity
  }
  EXPECT_EQ(f.working().open_orders(), 0u);
  EXPECT_GT(f.risk.allowed(), 1000u);
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
