// RiskManager: each limit at and over its value (order size, price band,
// position including working orders, open orders and notional per
// instrument and global, max loss per instrument and global, the rate
// throttle), request validation, the order of the checks, every block
// counted by reason; the working exposure it checks against (the order
// manager's, driven here with a recording sender and the exchange's answers)
// through sends, fills, cancels, rejects and modifies (a pending modify
// counting the larger version); limit validation; no allocation once built.
#include "trading/risk_manager.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/allocation_counter.hpp"
#include "support/order_replies.hpp"
#include "trading/position_keeper.hpp"

namespace nt = nanotick::trading;
namespace np = nanotick::proto;
namespace ne = nanotick::market;

namespace {

constexpr nt::Side kBuy = nt::Side::kBuy;
constexpr nt::Side kSell = nt::Side::kSell;
constexpr nt::RiskResult kAllowed = nt::RiskResult::kAllowed;
constexpr double kFair = 100.0;
constexpr nt::TimeNs kT0 = 1'000'000'000;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Limits wide enough that only the one a test is about can bind.
nt::InstrumentRiskLimits wide() {
  nt::InstrumentRiskLimits l;
  l.max_order_qty = 1'000;
  l.max_position = 1'000'000;
  l.max_open_orders = 1'000;
  l.max_open_notional = 1'000'000'000;
  l.max_loss = 1'000'000;
  l.price_band = 50;
  return l;
}

nt::GlobalRiskLimits wide_global() {
  nt::GlobalRiskLimits g;
  g.max_open_orders = 10'000;
  g.max_open_notional = 1'000'000'000'000;
  g.max_loss = 100'000'000;
  g.orders_per_second = 1'000'000;
  g.burst = 100'000;
  return g;
}

// The risk manager as the trade engine uses it: it checks against the
// working exposure of an order manager, which the tests drive with a
// recording sender and the exchange's answers.
struct Fixture {
  explicit Fixture(const nt::InstrumentRiskLimits& l = wide(), const nt::GlobalRiskLimits& g = wide_global(),
                   std::uint32_t instruments = 2)
      : keeper(instruments),
        risk(std::vector<nt::InstrumentRiskLimits>(instruments, l), g, kT0),
        orders({4096, instruments, 1}, sender) {}

  nt::PositionKeeper keeper;
  nt::RiskManager risk;
  nanotick::test::RecordingSender sender;
  nt::OrderManager<nanotick::test::RecordingSender> orders;

  const nt::WorkingExposure& working() const { return orders.exposure(); }
  const nt::Order& find(nt::ClientOrderId id) const { return *orders.find(id); }

  // A request (client order id 0: the order manager assigns it).
  static nt::OrderRequest order(nt::Side side, nt::Price price, nt::Qty qty, nt::InstrumentId inst = 0) {
    return nanotick::test::limit(side, price, qty, inst);
  }
  nt::RiskResult check(const nt::OrderRequest& r, nt::TimeNs now = kT0, double fair = kFair) {
    return risk.check_new(r, working(), keeper, fair, now);
  }
  nt::RiskResult check_modify(nt::ClientOrderId id, nt::Price price, nt::Qty qty, nt::TimeNs now = kT0,
                              double fair = kFair) {
    return risk.check_modify(id, price, qty, working(), keeper, fair, now);
  }
  // Checks and, if allowed, sends (the order manager counts it from now on,
  // `r` gets its id) and takes the throttle token; returns the check's result.
  nt::RiskResult send(nt::OrderRequest& r, nt::TimeNs now = kT0, double fair = kFair) {
    const nt::RiskResult res = check(r, now, fair);
    if (res == kAllowed) {
      nt::OrderRequest rq = r;
      rq.client_order_id = 0;
      const nt::Submitted s = orders.submit(rq);
      EXPECT_TRUE(s.ok()) << nt::to_string(s.status);
      r.client_order_id = s.id;
      risk.on_sent(now);
    }
    return res;
  }
  nt::RiskResult send(nt::OrderRequest&& r, nt::TimeNs now = kT0, double fair = kFair) { return send(r, now, fair); }
  // A modify the check allowed goes out: returns its session seq.
  std::uint32_t send_modify(nt::ClientOrderId id, nt::Price price, nt::Qty qty, nt::TimeNs now = kT0) {
    const nt::Submitted s = orders.modify(id, price, qty);
    EXPECT_TRUE(s.ok()) << nt::to_string(s.status);
    risk.on_sent(now);
    return s.seq;
  }

  // The exchange's answers.
  void accept(nt::ClientOrderId id) {
    (void)orders.on_execution_report(nanotick::test::accepted(find(id), find(id).new_seq));
  }
  void reject(nt::ClientOrderId id) {
    (void)orders.on_execution_report(nanotick::test::report(np::ExecType::kRejected, find(id), find(id).new_seq));
  }
  void filled(nt::ClientOrderId id, nt::Qty qty) {
    (void)orders.on_execution_report(nanotick::test::fill(find(id), qty));
  }
  // Our cancel, answered.
  void cancel(nt::ClientOrderId id) {
    const nt::Submitted c = orders.cancel(id);
    ASSERT_TRUE(c.ok()) << nt::to_string(c.status);
    (void)orders.on_execution_report(nanotick::test::cancelled(find(id), c.seq));
  }
  void modified(nt::ClientOrderId id) {
    const nt::Order& o = find(id);
    (void)orders.on_execution_report(nanotick::test::modified(o, o.modify_seq, o.pending_price, o.pending_qty));
  }
  void modify_rejected(nt::ClientOrderId id, ne::RejectReason why = ne::RejectReason::kPriceOutOfBand) {
    const nt::Order& o = find(id);
    (void)orders.on_modify_reject(nanotick::test::order_reject(np::MsgType::kModifyReject, o, o.modify_seq, why));
  }

  // A fill booked in the positions (the risk manager reads position and PnL there).
  void fill(nt::InstrumentId inst, nt::Side side, nt::Price price, nt::Qty qty) {
    nt::FillEvent f;
    f.instrument = inst;
    f.side = side;
    f.price = price;
    f.qty = qty;
    ASSERT_EQ(keeper.on_fill(f), nt::FillResult::kOk);
  }
};

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

TEST(RiskManager, ShouldKeepExposureThroughFillsCancelsAndRejects) {
  Fixture f;
  nt::OrderRequest a = f.order(kBuy, 100, 10);
  nt::OrderRequest b = f.order(kSell, 102, 5);
  nt::OrderRequest c = f.order(kBuy, 99, 7, 1);
  for (nt::OrderRequest* r : {&a, &b, &c}) ASSERT_EQ(f.send(*r), kAllowed);
  EXPECT_EQ(f.working().open_orders(), 3u);
  EXPECT_EQ(f.working().open_buy_qty(0), 10);
  EXPECT_EQ(f.working().open_sell_qty(0), 5);
  EXPECT_EQ(f.working().open_notional(0), 1'000 + 510);
  // An acceptance changes nothing: the orders counted from the send.
  f.accept(a.client_order_id);
  f.accept(b.client_order_id);
  EXPECT_EQ(f.working().open_orders(), 3u);
  EXPECT_EQ(f.working().open_notional(0), 1'000 + 510);
  f.filled(a.client_order_id, 4);
  EXPECT_EQ(f.working().open_buy_qty(0), 6);
  f.filled(a.client_order_id, 6);  // done
  EXPECT_EQ(f.working().open_buy_qty(0), 0);
  EXPECT_EQ(f.working().open_orders(0), 1u);
  f.cancel(b.client_order_id);
  f.reject(c.client_order_id);
  EXPECT_EQ(f.working().open_orders(), 0u);
  EXPECT_EQ(f.working().open_notional(), 0);
  EXPECT_EQ(f.working().open_sell_qty(0), 0);
  EXPECT_EQ(f.working().open_buy_qty(1), 0);
  // The done order's id is free again.
  EXPECT_EQ(f.check(a), kAllowed);
}

TEST(RiskManager, ShouldCountAPendingModifyWithTheLargerOfItsOldAndNewVersion) {
  nt::InstrumentRiskLimits l = wide();
  l.max_position = 20;
  Fixture f(l);
  nt::OrderRequest a = f.order(kBuy, 100, 10);
  ASSERT_EQ(f.send(a), kAllowed);
  const nt::ClientOrderId id = a.client_order_id;
  f.accept(id);
  // Growing to a total of 20 is allowed (at the limit); 21 is not.
  EXPECT_EQ(f.check_modify(id, 101, 21), nt::RiskResult::kMaxPosition);
  EXPECT_EQ(f.check_modify(id, 101, 20), kAllowed);
  (void)f.send_modify(id, 101, 20);
  EXPECT_EQ(f.working().open_buy_qty(0), 20);
  EXPECT_EQ(f.working().open_notional(0), 2'020);
  EXPECT_EQ(f.check_modify(id, 101, 5), nt::RiskResult::kModifyPending);
  // Acknowledged: the new version only.
  f.modified(id);
  EXPECT_EQ(f.working().open_buy_qty(0), 20);
  // Shrinking to 5 while pending still counts 20 (the old version may fill).
  EXPECT_EQ(f.check_modify(id, 101, 5), kAllowed);
  (void)f.send_modify(id, 101, 5);
  EXPECT_EQ(f.working().open_buy_qty(0), 20);
  f.modified(id);
  EXPECT_EQ(f.working().open_buy_qty(0), 5);
  EXPECT_EQ(f.working().open_notional(0), 505);
  // Rejected: back to the old version.
  (void)f.send_modify(id, 90, 8);
  EXPECT_EQ(f.working().open_buy_qty(0), 8);
  f.modify_rejected(id);
  EXPECT_EQ(f.working().open_buy_qty(0), 5);
  EXPECT_EQ(f.working().open_notional(0), 505);
  EXPECT_EQ(f.working().open_orders(0), 1u);
}

TEST(RiskManager, ShouldCheckAModifiesNewPriceAndSizeAndCountItAgainstTheThrottle) {
  nt::InstrumentRiskLimits l = wide();
  l.max_order_qty = 10;
  l.price_band = 5;
  nt::GlobalRiskLimits g = wide_global();
  g.orders_per_second = 1;
  g.burst = 2;
  Fixture f(l, g);
  nt::OrderRequest a = f.order(kBuy, 100, 5);
  ASSERT_EQ(f.send(a), kAllowed);
  const nt::ClientOrderId id = a.client_order_id;
  f.accept(id);
  EXPECT_EQ(f.check_modify(id, 106, 5), nt::RiskResult::kPriceBand);
  EXPECT_EQ(f.check_modify(id, 105, 11), nt::RiskResult::kMaxOrderQty);
  EXPECT_EQ(f.check_modify(id, 105, 0), nt::RiskResult::kInvalidQty);
  EXPECT_EQ(f.check_modify(id, 105, 10, kT0, kNaN), nt::RiskResult::kNoFairPrice);
  EXPECT_EQ(f.check_modify(999, 105, 10), nt::RiskResult::kUnknownOrder);
  EXPECT_EQ(f.check_modify(id, 105, 10), kAllowed);
  (void)f.send_modify(id, 105, 10);  // the second token
  f.modified(id);
  EXPECT_EQ(f.check_modify(id, 104, 10), nt::RiskResult::kRateThrottle);
}

TEST(RiskManager, ShouldKeepAnOrderFilledDuringAPendingModifyUntilTheModifyIsAnswered) {
  Fixture f;
  nt::OrderRequest a = f.order(kSell, 100, 10);
  ASSERT_EQ(f.send(a), kAllowed);
  f.accept(a.client_order_id);
  (void)f.send_modify(a.client_order_id, 100, 15);
  EXPECT_EQ(f.working().open_sell_qty(0), 15);
  // The old version fills completely before the modify arrives.
  f.filled(a.client_order_id, 10);
  EXPECT_EQ(f.find(a.client_order_id).state, nt::OrderState::kDone);
  EXPECT_EQ(f.working().open_sell_qty(0), 5);  // the new version could still have 5 open
  EXPECT_EQ(f.working().open_orders(0), 1u);
  EXPECT_EQ(f.check_modify(a.client_order_id, 100, 12), nt::RiskResult::kModifyPending);
  // "Too late": the order is done.
  f.modify_rejected(a.client_order_id, ne::RejectReason::kTooLateToCancel);
  EXPECT_EQ(f.working().open_sell_qty(0), 0);
  EXPECT_EQ(f.working().open_orders(0), 0u);
  // A modify below the filled quantity is cancelled by the exchange.
  nt::OrderRequest b = f.order(kSell, 100, 10);
  ASSERT_EQ(f.send(b), kAllowed);
  f.accept(b.client_order_id);
  f.filled(b.client_order_id, 6);
  const std::uint32_t seq = f.send_modify(b.client_order_id, 100, 5);
  EXPECT_EQ(f.working().open_sell_qty(0), 4);
  (void)f.orders.on_execution_report(nanotick::test::cancelled(f.find(b.client_order_id), seq, 5));
  EXPECT_EQ(f.working().open_orders(), 0u);
  EXPECT_EQ(f.working().open_notional(), 0);
}

// The risk manager used to keep its own table fed by the engine and refused
// (and counted) events that did not fit it. With one ledger there is nothing
// to disagree with: what those events were is either a check now, or the
// order manager's business (unmatched reports, fills beyond the order).
TEST(RiskManager, ShouldCheckWhatTheOldOrderEventsRefusedAndLeaveReportsToTheOrderManager) {
  nt::GlobalRiskLimits g = wide_global();
  g.max_open_orders = 2;
  Fixture f(wide(), g);
  nt::OrderRequest a = f.order(kBuy, 100, 10);
  ASSERT_EQ(f.send(a), kAllowed);
  const nt::ClientOrderId id = a.client_order_id;
  f.accept(id);
  EXPECT_EQ(f.check(a), nt::RiskResult::kDuplicateOrder);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1, 5)), nt::RiskResult::kUnknownInstrument);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 0)), nt::RiskResult::kInvalidQty);
  nt::OrderRequest market = f.order(kBuy, 0, 1);
  market.type = nt::OrderType::kMarket;
  EXPECT_EQ(f.check(market), nt::RiskResult::kUnpricedOrder);
  // |price| x qty beyond int64 is summed exactly, not wrapped.
  constexpr nt::Price kHuge = std::numeric_limits<nt::Price>::max();
  EXPECT_EQ(f.check(f.order(kBuy, kHuge, 2), kT0, static_cast<double>(kHuge)), nt::RiskResult::kMaxOpenNotional);
  ASSERT_EQ(f.send(f.order(kBuy, 100, 1)), kAllowed);
  EXPECT_EQ(f.check(f.order(kBuy, 100, 1)), nt::RiskResult::kMaxOpenOrdersGlobal);
  // Reports for no order of ours: counted by the order manager, no exposure changes.
  nt::Order stranger = f.find(id);
  stranger.id = 999;
  EXPECT_EQ(f.orders.on_execution_report(nanotick::test::fill(stranger, 1)).type, nt::OrderEventType::kUnmatched);
  EXPECT_EQ(f.orders.cancel(999).status, nt::SubmitStatus::kUnknownOrder);
  EXPECT_EQ(f.orders.counters().unmatched.get(), 1u);
  EXPECT_EQ(f.working().open_buy_qty(0), 11);
  // A modify reject with no modify in flight leaves the order as it was.
  f.modify_rejected(id);
  EXPECT_EQ(f.working().open_buy_qty(0), 11);
  (void)f.send_modify(id, 100, 12);
  EXPECT_EQ(f.check_modify(id, 100, 13), nt::RiskResult::kModifyPending);
  EXPECT_EQ(f.working().open_buy_qty(0), 13);
  // A fill beyond either version: the exchange says nothing is left, the order is done.
  auto beyond = nanotick::test::fill(f.find(id), 13);
  beyond.leaves_qty = 0;
  (void)f.orders.on_execution_report(beyond);
  EXPECT_EQ(f.working().open_orders(0), 1u);
  EXPECT_EQ(f.working().open_buy_qty(0), 1);
  EXPECT_EQ(nt::to_string(nt::RiskResult::kRateThrottle), "order rate throttle");
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
