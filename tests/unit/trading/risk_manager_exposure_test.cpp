// RiskManager's working exposure, the order manager's (driven here with a
// recording sender and the exchange's answers), through sends, fills,
// cancels, rejects and modifies: a pending modify counts the larger of its
// versions, a fill during a pending modify is kept until the modify is
// answered, and reports are the order manager's alone.
#include "trading/risk_manager.hpp"

#include <gtest/gtest.h>

#include "unit/trading/risk_manager_fixture.hpp"

namespace {

using namespace risk_manager_fixture;

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

}  // namespace
