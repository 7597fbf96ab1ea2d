// EngineScenarios, part 1: new orders, trading, FOK, self-trade prevention.
// Included by engine_scenarios.hpp; do not include it directly.
#pragma once

#include <vector>

namespace nanotick::engine::scenario {
inline std::vector<ReportType> types(const std::vector<ExecReport>& v) {
  std::vector<ReportType> t;
  for (const auto& r : v) t.push_back(r.type);
  return t;
}
inline std::vector<MdType> types(const std::vector<MdEvent>& v) {
  std::vector<MdType> t;
  for (const auto& m : v) t.push_back(m.type);
  return t;
}
using RT = ReportType;
using MT = MdType;
using RR = RejectReason;
using CR = CancelReason;
using Reports = std::vector<ReportType>;
using Events = std::vector<MdType>;
using Book = std::vector<Resting>;
}  // namespace nanotick::engine::scenario

#define NT_SCENARIO_NAMES                     \
  using namespace nanotick::engine;           \
  using namespace nanotick::engine::scenario; \
  auto& t = *this

// ---- new limit orders ---------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldRestALimitOrderThatDoesNotCrossAndAnnounceIt) {
  NT_SCENARIO_NAMES;
  const auto o = t.buy(10, 100, 5);
  ASSERT_EQ(types(o.reports), Reports{RT::kAccepted});
  const auto& r = o.first();
  EXPECT_EQ(r.order_id, 1u);
  EXPECT_EQ(r.client, 1u);
  EXPECT_EQ(r.client_order_id, 10u);
  EXPECT_EQ(r.price, 100);
  EXPECT_EQ(r.order_qty, 5);
  EXPECT_EQ(r.cum_qty, 0);
  EXPECT_EQ(r.leaves_qty, 5);
  EXPECT_EQ(r.side, kBuy);
  EXPECT_EQ(r.order_type, kLimit);
  EXPECT_EQ(r.reason, RR::kNone);
  ASSERT_EQ(types(o.md), (Events{MT::kAdd, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].order_id, 1u);
  EXPECT_EQ(o.md[0].side, kBuy);
  EXPECT_EQ(o.md[0].price, 100);
  EXPECT_EQ(o.md[0].qty, 5);
  EXPECT_EQ(o.md[1].bid_price, 100);
  EXPECT_EQ(o.md[1].bid_qty, 5);
  EXPECT_EQ(o.md[1].ask_price, 0);
  EXPECT_EQ(o.md[1].ask_qty, 0);
  EXPECT_EQ(t.book(kBuy), (Book{{10, 100, 5}}));
  ASSERT_TRUE(t.engine().best(0, kBuy).has_value());
  EXPECT_EQ(t.engine().best(0, kBuy)->qty, 5);
  EXPECT_EQ(t.engine().best(0, kBuy)->orders, 1u);
  EXPECT_FALSE(t.engine().best(0, kSell).has_value());
  EXPECT_EQ(t.engine().live_orders(0), 1u);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectEachInvalidNewOrderFieldWithItsReason) {
  NT_SCENARIO_NAMES;
  const Request ok = make_new(0, 1, 1, kBuy, kLimit, 100, 10);
  struct Case {
    Request rq;
    RejectReason why;
  };
  std::vector<Case> cases;
  auto with = [&](auto change, RejectReason why) {
    Request r = ok;
    change(r);
    cases.push_back({r, why});
  };
  with([](Request& r) { r.type = static_cast<RequestType>(0); }, RR::kInvalidRequestType);
  with([](Request& r) { r.type = static_cast<RequestType>(9); }, RR::kInvalidRequestType);
  with([](Request& r) { r.instrument = 2; }, RR::kUnknownInstrument);
  with([](Request& r) { r.side = static_cast<Side>(0); }, RR::kInvalidSide);
  with([](Request& r) { r.side = static_cast<Side>(3); }, RR::kInvalidSide);
  with([](Request& r) { r.order_type = static_cast<OrderType>(0); }, RR::kInvalidOrderType);
  with([](Request& r) { r.order_type = static_cast<OrderType>(5); }, RR::kInvalidOrderType);
  with([](Request& r) { r.stp = static_cast<StpMode>(4); }, RR::kInvalidStpMode);
  with([](Request& r) { r.reserved = 1; }, RR::kReservedNotZero);
  with([](Request& r) { r.client = kMaxClientId + 1; }, RR::kInvalidClientId);
  with([](Request& r) { r.client_order_id = kMaxClientOrderId + 1; }, RR::kInvalidClientOrderId);
  with([](Request& r) { r.qty = 0; }, RR::kZeroQuantity);
  with([](Request& r) { r.qty = -5; }, RR::kZeroQuantity);
  with([](Request& r) { r.qty = 1'000'001; }, RR::kQuantityTooLarge);
  with([](Request& r) { r.price = 0; }, RR::kPriceOutOfBand);
  with([](Request& r) { r.price = 1'000'001; }, RR::kPriceOutOfBand);
  with(
      [](Request& r) {
        r.instrument = 1;
        r.price = 1002;
      },
      RR::kPriceOffTick);
  with(
      [](Request& r) {
        r.instrument = 1;
        r.price = 95;
      },
      RR::kPriceOutOfBand);
  with(
      [](Request& r) {
        r.instrument = 1;
        r.qty = 1001;
      },
      RR::kQuantityTooLarge);
  for (const auto& c : cases) {
    const auto o = t.send(c.rq);
    ASSERT_EQ(o.reports.size(), 1u);
    const auto& r = o.first();
    EXPECT_EQ(r.type, RT::kRejected);
    EXPECT_EQ(r.reason, c.why) << "expected reason " << static_cast<int>(c.why);
    EXPECT_EQ(r.order_id, 0u);
    EXPECT_EQ(r.client, c.rq.client);
    EXPECT_EQ(r.instrument, c.rq.instrument);
    EXPECT_EQ(r.client_order_id, c.rq.client_order_id);
    EXPECT_EQ(r.price, c.rq.price);
    EXPECT_EQ(r.order_qty, c.rq.qty);
    EXPECT_TRUE(o.md.empty());
  }
  EXPECT_EQ(t.engine().live_orders(0), 0u);
  EXPECT_EQ(t.engine().requests_processed(), cases.size());
}

TYPED_TEST_P(EngineScenarios, ShouldReportTheFirstFailingValidationStep) {
  NT_SCENARIO_NAMES;
  auto reason = [&](Request r) { return t.send(r).first().reason; };
  Request r = make_new(5, 1, 1, static_cast<Side>(0), kLimit, 100, 0);
  r.type = static_cast<RequestType>(7);
  EXPECT_EQ(reason(r), RR::kInvalidRequestType);
  EXPECT_EQ(reason(make_new(5, 1, 1, static_cast<Side>(0), kLimit, 100, 10)), RR::kUnknownInstrument);
  EXPECT_EQ(reason(make_new(0, 1, 1, static_cast<Side>(0), static_cast<OrderType>(9), 100, 0)), RR::kInvalidSide);
  EXPECT_EQ(reason(make_new(0, kMaxClientId + 1, 1, kBuy, kLimit, 0, 0)), RR::kInvalidClientId);
  EXPECT_EQ(reason(make_new(1, 1, 1, kBuy, kLimit, 10'001, 0)), RR::kZeroQuantity);
  EXPECT_EQ(reason(make_new(1, 1, 1, kBuy, kLimit, 10'001, 5)), RR::kPriceOffTick);
  ASSERT_EQ(t.buy(1, 100, 5).first().type, RT::kAccepted);
  EXPECT_EQ(reason(make_new(0, 1, 1, kBuy, kLimit, 0, 5)), RR::kPriceOutOfBand);
  EXPECT_EQ(reason(make_new(0, 1, 1, kBuy, kLimit, 100, 5)), RR::kDuplicateClientOrderId);
}

TYPED_TEST_P(EngineScenarios, ShouldAssignOrderIdsInSequenceToAcceptedOrdersOnly) {
  NT_SCENARIO_NAMES;
  EXPECT_EQ(t.buy(1, 100, 5).first().order_id, 1u);
  EXPECT_EQ(t.buy(2, 100, 0).first().order_id, 0u);
  EXPECT_EQ(t.buy(3, 50, 5, kIoc).first().order_id, 2u);
  EXPECT_EQ(t.sell(4, 200, 5).first().order_id, 3u);
}

// ---- trading ------------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldTradeAtTheMakersPriceNotTheAggressors) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 5);
  const auto o = t.buy(2, 105, 5);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kFill, RT::kFill}));
  const auto& taker = o.reports[1];
  EXPECT_EQ(taker.order_id, 2u);
  EXPECT_EQ(taker.client, 1u);
  EXPECT_EQ(taker.price, 105);
  EXPECT_EQ(taker.last_price, 100);
  EXPECT_EQ(taker.last_qty, 5);
  EXPECT_EQ(taker.cum_qty, 5);
  EXPECT_EQ(taker.leaves_qty, 0);
  EXPECT_EQ(taker.contra_order_id, 1u);
  EXPECT_FALSE(taker.is_maker);
  const auto& maker = o.reports[2];
  EXPECT_EQ(maker.order_id, 1u);
  EXPECT_EQ(maker.client, 2u);
  EXPECT_EQ(maker.client_order_id, 1u);
  EXPECT_EQ(maker.side, kSell);
  EXPECT_EQ(maker.last_price, 100);
  EXPECT_EQ(maker.cum_qty, 5);
  EXPECT_EQ(maker.leaves_qty, 0);
  EXPECT_EQ(maker.contra_order_id, 2u);
  EXPECT_TRUE(maker.is_maker);
  // The maker leaves the book through the trade: no kDelete.
  ASSERT_EQ(types(o.md), (Events{MT::kTrade, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].side, kBuy);
  EXPECT_EQ(o.md[0].order_id, 1u);
  EXPECT_EQ(o.md[0].contra_order_id, 2u);
  EXPECT_EQ(o.md[0].price, 100);
  EXPECT_EQ(o.md[0].qty, 5);
  EXPECT_EQ(o.md[1].ask_qty, 0);
  EXPECT_EQ(t.engine().last_trade(0), std::optional<Price>(100));
  EXPECT_TRUE(t.book(kSell).empty());
  EXPECT_TRUE(t.book(kBuy).empty());
}

TYPED_TEST_P(EngineScenarios, ShouldFillOrdersOfALevelInArrivalOrder) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 3);
  t.sell(2, 100, 4);
  t.sell(3, 100, 5);
  const auto fills = t.buy(9, 100, 8).of(RT::kFill);
  ASSERT_EQ(fills.size(), 6u);
  EXPECT_EQ(fills[1].client_order_id, 1u);
  EXPECT_EQ(fills[1].last_qty, 3);
  EXPECT_EQ(fills[3].client_order_id, 2u);
  EXPECT_EQ(fills[3].last_qty, 4);
  EXPECT_EQ(fills[5].client_order_id, 3u);
  EXPECT_EQ(fills[5].last_qty, 1);
  EXPECT_EQ(fills[5].leaves_qty, 4);
  EXPECT_EQ(t.book(kSell), (Book{{3, 100, 4}}));
}

TYPED_TEST_P(EngineScenarios, ShouldKeepFifoAfterACancelInTheMiddleOfALevel) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 3);
  t.sell(2, 100, 4);
  t.sell(3, 100, 5);
  ASSERT_EQ(t.cancel(2, 2).first().type, RT::kCancelled);
  EXPECT_EQ(t.book(kSell), (Book{{1, 100, 3}, {3, 100, 5}}));
  const auto fills = t.buy(9, 100, 4).of(RT::kFill);
  ASSERT_EQ(fills.size(), 4u);
  EXPECT_EQ(fills[1].client_order_id, 1u);
  EXPECT_EQ(fills[3].client_order_id, 3u);
  EXPECT_EQ(t.book(kSell), (Book{{3, 100, 4}}));
  EXPECT_EQ(t.engine().best(0, kSell)->orders, 1u);
}

TYPED_TEST_P(EngineScenarios, ShouldMoveTheBestPriceWhenTheBestLevelEmpties) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2);
  t.sell(2, 101, 3);
  t.sell(3, 103, 1);
  auto o = t.buy(9, 100, 2);
  ASSERT_EQ(o.of(MT::kTopOfBook).size(), 1u);
  EXPECT_EQ(o.of(MT::kTopOfBook)[0].ask_price, 101);
  EXPECT_EQ(o.of(MT::kTopOfBook)[0].ask_qty, 3);
  EXPECT_EQ(t.engine().best(0, kSell)->price, 101);
  t.cancel(2, 2);
  EXPECT_EQ(t.engine().best(0, kSell)->price, 103);
  o = t.cancel(3, 2);
  EXPECT_FALSE(t.engine().best(0, kSell).has_value());
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[1].ask_price, 0);
  EXPECT_EQ(o.md[1].ask_qty, 0);
  // A new sell far away becomes the best, not a remembered stale level.
  t.sell(4, 150, 1);
  EXPECT_EQ(t.engine().best(0, kSell)->price, 150);
}

TYPED_TEST_P(EngineScenarios, ShouldSweepLevelsUpToItsLimitAndRestTheRemainderThere) {
  NT_SCENARIO_NAMES;
  for (int i = 0; i < 4; ++i) t.sell(static_cast<std::uint64_t>(i + 1), 100 + i, 2);
  const auto o = t.buy(9, 102, 10);
  const auto trades = o.of(MT::kTrade);
  ASSERT_EQ(trades.size(), 3u);
  EXPECT_EQ(trades[0].price, 100);
  EXPECT_EQ(trades[1].price, 101);
  EXPECT_EQ(trades[2].price, 102);
  ASSERT_EQ(o.of(MT::kAdd).size(), 1u);
  EXPECT_EQ(o.of(MT::kAdd)[0].price, 102);
  EXPECT_EQ(o.of(MT::kAdd)[0].qty, 4);
  EXPECT_EQ(t.book(kBuy), (Book{{9, 102, 4}}));
  EXPECT_EQ(t.book(kSell), (Book{{4, 103, 2}}));
}

TYPED_TEST_P(EngineScenarios, ShouldSweepBidsWithASellSymmetrically) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 2);
  t.buy(2, 99, 2);
  t.buy(3, 98, 2);
  const auto o = t.sell(9, 99, 5);
  const auto trades = o.of(MT::kTrade);
  ASSERT_EQ(trades.size(), 2u);
  EXPECT_EQ(trades[0].price, 100);
  EXPECT_EQ(trades[1].price, 99);
  EXPECT_EQ(trades[0].side, kSell);
  EXPECT_EQ(t.book(kSell), (Book{{9, 99, 1}}));
  EXPECT_EQ(t.book(kBuy), (Book{{3, 98, 2}}));
}

TYPED_TEST_P(EngineScenarios, ShouldCancelAnIocResidualInsteadOfRestingIt) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 3);
  auto o = t.buy(2, 101, 5, kIoc);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kFill, RT::kFill, RT::kCancelled}));
  EXPECT_EQ(o.reports[3].cancel_reason, CR::kIocResidual);
  EXPECT_EQ(o.reports[3].cum_qty, 3);
  EXPECT_EQ(o.reports[3].leaves_qty, 0);
  EXPECT_EQ(o.reports[3].order_type, kIoc);
  EXPECT_TRUE(o.of(MT::kAdd).empty());
  EXPECT_TRUE(t.book(kBuy).empty());
  o = t.buy(3, 99, 5, kIoc);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kCancelled}));
  EXPECT_EQ(o.reports[1].cancel_reason, CR::kIocResidual);
  EXPECT_EQ(o.reports[1].cum_qty, 0);
  EXPECT_TRUE(o.md.empty());
  EXPECT_EQ(t.engine().live_orders(0), 0u);
}

TYPED_TEST_P(EngineScenarios, ShouldLetAMarketOrderTradeAtAnyPriceWithoutACollar) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 1);
  t.sell(2, 500, 1);
  t.sell(3, 900'000, 1);
  const auto o = t.buy(9, -7, 5, kMarket);
  EXPECT_EQ(o.first().type, RT::kAccepted);
  EXPECT_EQ(o.first().price, 0);
  EXPECT_EQ(o.of(MT::kTrade).size(), 3u);
  EXPECT_EQ(o.of(MT::kTrade)[2].price, 900'000);
  EXPECT_EQ(o.reports.back().type, RT::kCancelled);
  EXPECT_EQ(o.reports.back().cancel_reason, CR::kIocResidual);
  EXPECT_EQ(o.reports.back().cum_qty, 3);
  EXPECT_TRUE(t.book(kBuy).empty());
}

TYPED_TEST_P(EngineScenarios, ShouldStopAMarketOrderAtTheCollarOfTheLastTradeBeforeTheRequest) {
  NT_SCENARIO_NAMES;
  // Resting before any trade (no collar yet), then a trade at 1000.
  t.sell(3, 1400, 1, kLimit, StpMode::kNone, 2, 1);
  t.sell(4, 1500, 1, kLimit, StpMode::kNone, 2, 1);
  t.sell(5, 1505, 1, kLimit, StpMode::kNone, 2, 1);
  t.sell(1, 1000, 1, kLimit, StpMode::kNone, 2, 1);
  t.buy(2, 1000, 1, kLimit, StpMode::kNone, 1, 1);
  ASSERT_EQ(t.engine().last_trade(1), std::optional<Price>(1000));
  const auto o = t.buy(6, 0, 5, kMarket, StpMode::kNone, 1, 1);
  ASSERT_EQ(o.of(MT::kTrade).size(), 2u);
  EXPECT_EQ(o.of(MT::kTrade)[1].price, 1500);
  EXPECT_EQ(o.reports.back().cancel_reason, CR::kIocResidual);
  EXPECT_EQ(t.book(kSell, 1), (Book{{5, 1505, 1}}));
  // A sell market order trades the bid inside its collar and cancels the rest.
  t.buy(7, 1000, 1, kLimit, StpMode::kNone, 1, 1);
  EXPECT_EQ(t.sell(9, 0, 5, kMarket, StpMode::kNone, 2, 1).of(MT::kTrade).size(), 1u);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectLimitPricesOutsideTheCollarOnlyOnceATradeExists) {
  NT_SCENARIO_NAMES;
  EXPECT_EQ(t.buy(1, 9000, 1, kLimit, StpMode::kNone, 1, 1).first().type, RT::kAccepted);
  t.cancel(1, 1, 1);
  t.sell(2, 1000, 1, kLimit, StpMode::kNone, 2, 1);
  t.buy(3, 1000, 1, kLimit, StpMode::kNone, 1, 1);
  EXPECT_EQ(t.buy(4, 1505, 1, kLimit, StpMode::kNone, 1, 1).first().reason, RR::kPriceOutsideCollar);
  EXPECT_EQ(t.sell(5, 495, 1, kLimit, StpMode::kNone, 2, 1).first().reason, RR::kPriceOutsideCollar);
  EXPECT_EQ(t.buy(6, 1500, 1, kLimit, StpMode::kNone, 1, 1).first().type, RT::kAccepted);
  EXPECT_EQ(t.sell(7, 500, 1, kLimit, StpMode::kNone, 2, 1).first().type, RT::kAccepted);
}

// ---- fill or kill ---------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldLeaveTheBookUntouchedWhenAFokCannotFill) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2);
  t.sell(2, 101, 2);
  t.sell(3, 102, 5);
  const auto o = t.buy(9, 101, 5, kFok);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kCancelled}));
  EXPECT_EQ(o.reports[1].cancel_reason, CR::kFokUnfillable);
  EXPECT_EQ(o.reports[1].cum_qty, 0);
  EXPECT_TRUE(o.md.empty());
  EXPECT_EQ(t.book(kSell), (Book{{1, 100, 2}, {2, 101, 2}, {3, 102, 5}}));
  EXPECT_FALSE(t.engine().last_trade(0).has_value());
}

TYPED_TEST_P(EngineScenarios, ShouldExecuteAFillableFokCompletely) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2);
  t.sell(2, 101, 2);
  const auto o = t.buy(9, 101, 4, kFok);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kFill, RT::kFill, RT::kFill, RT::kFill}));
  EXPECT_EQ(o.reports[3].leaves_qty, 0);
  EXPECT_EQ(o.reports[3].cum_qty, 4);
  EXPECT_TRUE(t.book(kSell).empty());
  EXPECT_TRUE(t.book(kBuy).empty());
}

TYPED_TEST_P(EngineScenarios, ShouldApplySelfTradePreventionInTheFokWalk) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2, kLimit, StpMode::kNone, 1);  // own order at the front
  t.sell(2, 100, 2);
  // kCancelIncoming ends the walk at the own order: nothing available.
  auto o = t.buy(9, 100, 2, kFok, StpMode::kCancelIncoming);
  EXPECT_EQ(o.reports.back().cancel_reason, CR::kFokUnfillable);
  EXPECT_TRUE(o.md.empty());
  o = t.buy(10, 100, 2, kFok, StpMode::kCancelBoth);
  EXPECT_EQ(o.reports.back().cancel_reason, CR::kFokUnfillable);
  // kCancelResting skips it in the walk (fillable), then cancels it for real.
  o = t.buy(11, 100, 2, kFok, StpMode::kCancelResting);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kCancelled, RT::kFill, RT::kFill}));
  EXPECT_EQ(o.reports[1].client_order_id, 1u);
  EXPECT_EQ(o.reports[1].cancel_reason, CR::kSelfTrade);
  EXPECT_EQ(types(o.md), (Events{MT::kDelete, MT::kTrade, MT::kTopOfBook}));
  // kNone counts (and trades with) the own order.
  t.sell(12, 100, 2, kLimit, StpMode::kNone, 1);
  o = t.buy(13, 100, 2, kFok, StpMode::kNone);
  EXPECT_EQ(o.of(RT::kFill).size(), 2u);
  EXPECT_EQ(o.of(RT::kFill)[1].client, 1u);
}

// ---- self-trade prevention ---------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldTradeWithItselfUnderStpNone) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 5, kLimit, StpMode::kCancelBoth, 1);  // the resting order's mode is irrelevant
  const auto o = t.buy(2, 100, 5, kLimit, StpMode::kNone, 1);
  EXPECT_EQ(o.of(MT::kTrade).size(), 1u);
  EXPECT_TRUE(t.book(kSell).empty());
}

TYPED_TEST_P(EngineScenarios, ShouldCancelTheRestingOrderAndKeepMatchingUnderCancelResting) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2, kLimit, StpMode::kNone, 1);
  t.sell(2, 100, 3);
  const auto o = t.buy(3, 100, 3, kLimit, StpMode::kCancelResting, 1);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kCancelled, RT::kFill, RT::kFill}));
  EXPECT_EQ(o.reports[1].order_id, 1u);
  EXPECT_EQ(o.reports[1].cancel_reason, CR::kSelfTrade);
  EXPECT_EQ(o.reports[1].leaves_qty, 0);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTrade, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].order_id, 1u);
  EXPECT_EQ(o.md[0].qty, 2);
  EXPECT_TRUE(t.book(kSell).empty());
  EXPECT_TRUE(t.book(kBuy).empty());
}

TYPED_TEST_P(EngineScenarios, ShouldCancelTheIncomingRemainderUnderCancelIncoming) {
  NT_SCENARIO_NAMES;
  t.sell(1, 99, 1);
  t.sell(2, 100, 2, kLimit, StpMode::kNone, 1);
  const auto o = t.buy(3, 100, 5, kLimit, StpMode::kCancelIncoming, 1);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kFill, RT::kFill, RT::kCancelled}));
  EXPECT_EQ(o.reports[3].order_id, 3u);
  EXPECT_EQ(o.reports[3].cancel_reason, CR::kSelfTrade);
  EXPECT_EQ(o.reports[3].cum_qty, 1);
  EXPECT_EQ(o.reports[3].leaves_qty, 0);
  EXPECT_TRUE(o.of(MT::kAdd).empty());
  EXPECT_TRUE(t.book(kBuy).empty());  // a limit order does not rest
  EXPECT_EQ(t.book(kSell), (Book{{2, 100, 2}}));
}

TYPED_TEST_P(EngineScenarios, ShouldCancelBothOrdersUnderCancelBoth) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 2, kLimit, StpMode::kNone, 1);
  t.sell(2, 100, 3);
  const auto o = t.buy(3, 100, 5, kLimit, StpMode::kCancelBoth, 1);
  ASSERT_EQ(types(o.reports), (Reports{RT::kAccepted, RT::kCancelled, RT::kCancelled}));
  EXPECT_EQ(o.reports[1].order_id, 1u);
  EXPECT_EQ(o.reports[2].order_id, 3u);
  EXPECT_EQ(o.reports[2].cancel_reason, CR::kSelfTrade);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[1].ask_qty, 3);
  EXPECT_EQ(t.book(kSell), (Book{{2, 100, 3}}));
  EXPECT_TRUE(t.book(kBuy).empty());
}
