// EngineScenarios, part 2: cancel, modify, duplicate ids, sequence numbers,
// top of book, capacity, finished orders; registers the whole suite.
// Included by engine_scenarios.hpp; do not include it directly.
#pragma once

// ---- cancel -------------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldCancelALiveOrderReportingWhatWasFilled) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 5);
  t.buy(2, 100, 2);
  const auto o = t.cancel(1, 2);
  ASSERT_EQ(types(o.reports), Reports{RT::kCancelled});
  const auto& r = o.first();
  EXPECT_EQ(r.order_id, 1u);
  EXPECT_EQ(r.cancel_reason, CR::kUserRequest);
  EXPECT_EQ(r.price, 100);
  EXPECT_EQ(r.order_qty, 5);
  EXPECT_EQ(r.cum_qty, 2);
  EXPECT_EQ(r.leaves_qty, 0);
  EXPECT_EQ(r.side, kSell);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].order_id, 1u);
  EXPECT_EQ(o.md[0].side, kSell);
  EXPECT_EQ(o.md[0].price, 100);
  EXPECT_EQ(o.md[0].qty, 3);
  EXPECT_EQ(t.engine().live_orders(0), 0u);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectACancelOfAFilledOrderAsTooLate) {
  NT_SCENARIO_NAMES;
  t.sell(1, 100, 5);
  t.buy(2, 100, 5);
  const auto o = t.cancel(1, 2);
  ASSERT_EQ(types(o.reports), Reports{RT::kCancelRejected});
  EXPECT_EQ(o.first().reason, RR::kTooLateToCancel);
  EXPECT_EQ(o.first().order_id, 0u);
  EXPECT_TRUE(o.md.empty());
  // Cancelled, IOC never rested, FOK killed: all finished, all too late.
  t.buy(3, 90, 1);
  t.cancel(3, 1);
  EXPECT_EQ(t.cancel(3, 1).first().reason, RR::kTooLateToCancel);
  t.buy(4, 90, 1, kIoc);
  EXPECT_EQ(t.cancel(4, 1).first().reason, RR::kTooLateToCancel);
  t.buy(5, 90, 1, kFok);
  EXPECT_EQ(t.modify(5, 1, 91, 1).first().reason, RR::kTooLateToCancel);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectACancelOfAnOrderNeverSeenAsUnknown) {
  NT_SCENARIO_NAMES;
  EXPECT_EQ(t.cancel(77, 1).first().reason, RR::kUnknownOrder);
  t.buy(1, 100, 5);
  EXPECT_EQ(t.cancel(1, 2).first().reason, RR::kUnknownOrder);     // another client's key
  EXPECT_EQ(t.cancel(1, 1, 1).first().reason, RR::kUnknownOrder);  // live on another instrument
  EXPECT_EQ(t.cancel(1, 1, 1).first().type, RT::kCancelRejected);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 5}}));
}

TYPED_TEST_P(EngineScenarios, ShouldValidateCancelFieldsButIgnoreSideTypeAndStp) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  Request c = make_cancel(0, 1, 1);
  c.reserved = 3;
  EXPECT_EQ(t.send(c).first().reason, RR::kReservedNotZero);
  c = make_cancel(9, 1, 1);
  EXPECT_EQ(t.send(c).first().reason, RR::kUnknownInstrument);
  c = make_cancel(0, kMaxClientId + 1, 1);
  EXPECT_EQ(t.send(c).first().reason, RR::kInvalidClientId);
  c = make_cancel(0, 1, kMaxClientOrderId + 1);
  EXPECT_EQ(t.send(c).first().reason, RR::kInvalidClientOrderId);
  EXPECT_EQ(t.send(c).first().type, RT::kCancelRejected);
  c = make_cancel(0, 1, 1);
  c.side = static_cast<Side>(0);
  c.order_type = static_cast<OrderType>(0);
  c.stp = static_cast<StpMode>(9);
  EXPECT_EQ(t.send(c).first().type, RT::kCancelled);
}

// ---- modify ---------------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldKeepPriorityWhenReducingQuantityAtTheSamePrice) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.buy(2, 100, 5);
  const auto o = t.modify(1, 1, 100, 3);
  ASSERT_EQ(types(o.reports), Reports{RT::kModified});
  EXPECT_EQ(o.first().order_id, 1u);
  EXPECT_EQ(o.first().order_qty, 3);
  EXPECT_EQ(o.first().leaves_qty, 3);
  ASSERT_EQ(types(o.md), (Events{MT::kModify, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].qty, 3);
  EXPECT_EQ(o.md[1].bid_qty, 8);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 3}, {2, 100, 5}}));
}

TYPED_TEST_P(EngineScenarios, ShouldLosePriorityWhenIncreasingQuantityOrChangingPrice) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.buy(2, 100, 5);
  auto o = t.modify(1, 1, 100, 7);
  ASSERT_EQ(types(o.reports), Reports{RT::kModified});
  EXPECT_EQ(o.first().leaves_qty, 7);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kAdd, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].qty, 5);
  EXPECT_EQ(o.md[1].order_id, 1u);
  EXPECT_EQ(o.md[1].qty, 7);
  EXPECT_EQ(t.book(kBuy), (Book{{2, 100, 5}, {1, 100, 7}}));
  o = t.modify(2, 1, 99, 5);
  EXPECT_EQ(o.first().price, 99);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 7}, {2, 99, 5}}));
  t.buy(3, 99, 1);
  t.modify(2, 1, 101, 5);
  t.modify(2, 1, 99, 5);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 7}, {3, 99, 1}, {2, 99, 5}}));
}

TYPED_TEST_P(EngineScenarios, ShouldMatchACrossingModifyInsteadOfRestingIt) {
  NT_SCENARIO_NAMES;
  t.sell(1, 101, 3);
  t.buy(2, 100, 5);
  const auto o = t.modify(2, 1, 101, 5);
  ASSERT_EQ(types(o.reports), (Reports{RT::kModified, RT::kFill, RT::kFill}));
  EXPECT_EQ(o.reports[0].price, 101);
  EXPECT_EQ(o.reports[0].leaves_qty, 5);
  EXPECT_EQ(o.reports[1].order_id, 2u);
  EXPECT_FALSE(o.reports[1].is_maker);
  EXPECT_EQ(o.reports[1].last_price, 101);
  EXPECT_EQ(o.reports[1].leaves_qty, 2);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTrade, MT::kAdd, MT::kTopOfBook}));
  EXPECT_EQ(o.md[1].side, kBuy);
  EXPECT_EQ(o.md[1].contra_order_id, 2u);
  EXPECT_EQ(o.md[2].price, 101);
  EXPECT_EQ(o.md[2].qty, 2);
  EXPECT_EQ(t.book(kBuy), (Book{{2, 101, 2}}));
  EXPECT_TRUE(t.book(kSell).empty());
  // Fully filled by its modify: finished.
  t.sell(3, 101, 2);
  EXPECT_EQ(t.cancel(2, 1).first().reason, RR::kTooLateToCancel);
}

TYPED_TEST_P(EngineScenarios, ShouldApplyTheOrdersOwnStpModeWhenAModifyMatches) {
  NT_SCENARIO_NAMES;
  t.sell(1, 101, 3, kLimit, StpMode::kNone, 1);
  t.buy(2, 100, 5, kLimit, StpMode::kCancelIncoming, 1);
  const auto o = t.modify(2, 1, 101, 5);
  ASSERT_EQ(types(o.reports), (Reports{RT::kModified, RT::kCancelled}));
  EXPECT_EQ(o.reports[1].cancel_reason, CR::kSelfTrade);
  EXPECT_TRUE(t.book(kBuy).empty());
  EXPECT_EQ(t.book(kSell), (Book{{1, 101, 3}}));
}

TYPED_TEST_P(EngineScenarios, ShouldKeepFilledQuantityAcrossAModify) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.sell(2, 100, 2);
  const auto o = t.modify(1, 1, 100, 4);
  EXPECT_EQ(o.first().order_qty, 4);
  EXPECT_EQ(o.first().cum_qty, 2);
  EXPECT_EQ(o.first().leaves_qty, 2);
  EXPECT_EQ(o.md[0].qty, 2);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 2}}));
}

TYPED_TEST_P(EngineScenarios, ShouldCancelWhenModifiedToAtMostTheFilledQuantity) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.sell(2, 100, 2);
  const auto o = t.modify(1, 1, 100, 2);
  ASSERT_EQ(types(o.reports), Reports{RT::kCancelled});
  EXPECT_EQ(o.first().cancel_reason, CR::kModifyBelowFilled);
  EXPECT_EQ(o.first().order_qty, 5);
  EXPECT_EQ(o.first().price, 100);
  EXPECT_EQ(o.first().cum_qty, 2);
  EXPECT_EQ(o.first().leaves_qty, 0);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].qty, 3);
  EXPECT_EQ(t.cancel(1, 1).first().reason, RR::kTooLateToCancel);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectAModifyWithNoChangeOrInvalidValues) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.buy(2, 1000, 5, kLimit, StpMode::kNone, 1, 1);
  auto reason = [&](Request r) {
    const auto o = t.send(r);
    EXPECT_EQ(o.first().type, RT::kModifyRejected);
    EXPECT_EQ(o.first().order_id, 0u);
    EXPECT_TRUE(o.md.empty());
    return o.first().reason;
  };
  EXPECT_EQ(reason(make_modify(0, 1, 1, 100, 5)), RR::kModifyNoChange);
  EXPECT_EQ(reason(make_modify(0, 1, 1, 100, 0)), RR::kZeroQuantity);
  EXPECT_EQ(reason(make_modify(0, 1, 1, 100, 1'000'001)), RR::kQuantityTooLarge);
  EXPECT_EQ(reason(make_modify(0, 1, 1, 0, 5)), RR::kPriceOutOfBand);
  EXPECT_EQ(reason(make_modify(1, 1, 2, 1003, 5)), RR::kPriceOffTick);
  EXPECT_EQ(reason(make_modify(1, 1, 2, 1000, 0)), RR::kZeroQuantity);
  EXPECT_EQ(reason(make_modify(0, 1, 99, 100, 5)), RR::kUnknownOrder);
  EXPECT_EQ(reason(make_modify(1, 1, 1, 1000, 5)), RR::kUnknownOrder);
  EXPECT_EQ(reason(make_modify(7, 1, 1, 100, 5)), RR::kUnknownInstrument);
  Request r = make_modify(0, 1, 1, 100, 6);
  r.reserved = 1;
  EXPECT_EQ(reason(r), RR::kReservedNotZero);
  t.sell(3, 1000, 1, kLimit, StpMode::kNone, 2, 1);  // trades with 2: last trade 1000
  EXPECT_EQ(reason(make_modify(1, 1, 2, 1505, 5)), RR::kPriceOutsideCollar);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 5}}));
}

// ---- duplicate ids ----------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldRejectADuplicateLiveIdWithoutTouchingTheBook) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  t.sell(2, 105, 5);
  EXPECT_EQ(t.buy(1, 101, 3).first().reason, RR::kDuplicateClientOrderId);
  EXPECT_EQ(t.sell(1, 100, 3, kLimit, StpMode::kNone, 1).first().reason, RR::kDuplicateClientOrderId);
  EXPECT_EQ(t.buy(1, 1000, 3, kIoc, StpMode::kNone, 1, 1).first().reason,
            RR::kDuplicateClientOrderId);  // any instrument
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 5}}));
  EXPECT_EQ(t.book(kSell), (Book{{2, 105, 5}}));
  EXPECT_EQ(t.engine().live_orders(0), 2u);
  // Another client may use the same id; the id is reusable once done.
  EXPECT_EQ(t.buy(1, 99, 1, kLimit, StpMode::kNone, 3).first().type, RT::kAccepted);
  t.cancel(1, 1);
  const auto o = t.buy(1, 98, 2);
  EXPECT_EQ(o.first().type, RT::kAccepted);
  EXPECT_EQ(o.first().order_id, 4u);
  EXPECT_EQ(t.cancel(1, 1).first().order_id, 4u);
}

// ---- sequence numbers and top of book ------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldNumberReportsAndEventsWithoutGaps) {
  NT_SCENARIO_NAMES;
  for (std::uint64_t i = 1; i <= 12; ++i) {
    t.buy(i, 100 - static_cast<Price>(i % 3), 2);
    t.sell(100 + i, 99 + static_cast<Price>(i % 4), 3, i % 2 ? kIoc : kLimit);
    t.cancel(i, 1);
    t.modify(100 + i, 2, 110, 4);
    t.buy(200 + i, 100, 0);
  }
  const auto& s = t.sink();
  for (std::size_t i = 0; i < s.reports.size(); ++i) {
    EXPECT_EQ(s.reports[i].seq, i + 1);
    EXPECT_EQ(s.reports[i].event_id, s.reports[i].request_seq);  // send() numbers event ids from 1
    if (i > 0) {
      EXPECT_GE(s.reports[i].request_seq, s.reports[i - 1].request_seq);
    }
  }
  for (std::size_t i = 0; i < s.md.size(); ++i) {
    EXPECT_EQ(s.md[i].seq, i + 1);
    EXPECT_GE(s.md[i].event_id, 1u);
  }
  EXPECT_EQ(t.engine().requests_processed(), 60u);
  EXPECT_EQ(s.reports.back().request_seq, 60u);
  EXPECT_EQ(t.engine().last_report_seq(), s.reports.size());
  EXPECT_EQ(t.engine().last_md_seq(), s.md.size());
}

TYPED_TEST_P(EngineScenarios, ShouldNumberEachInstrumentsEventsFromOneWithoutGaps) {
  NT_SCENARIO_NAMES;
  EXPECT_EQ(t.engine().last_instrument_md_seq(0), 0u);
  EXPECT_EQ(t.engine().last_instrument_md_seq(1), 0u);
  for (std::uint64_t i = 1; i <= 6; ++i) {
    t.buy(i, 100, 2);                                               // instrument 0
    t.sell(100 + i, 1000, 3, kLimit, StpMode::kNone, 2, 1);         // instrument 1
    t.buy(200 + i, 1000, 1, kIoc, StpMode::kNone, 1, 1);            // trades on instrument 1
    if (i % 2 == 0) t.cancel(i, 1);                                 // instrument 0
    t.buy(300 + i, 7, 1, kLimit, StpMode::kNone, 1, 1);             // rejected (off tick): no event
  }
  const auto& s = t.sink();
  std::vector<std::uint64_t> last(2, 0);
  for (std::size_t i = 0; i < s.md.size(); ++i) {
    const auto& m = s.md[i];
    ASSERT_LT(m.instrument, 2u);
    EXPECT_EQ(m.instrument_seq, last[m.instrument] + 1) << "event " << i << " (global seq " << m.seq << ")";
    last[m.instrument] = m.instrument_seq;
  }
  EXPECT_GT(last[0], 0u);
  EXPECT_GT(last[1], last[0]) << "the instruments' counts differ: each counts its own events only";
  EXPECT_EQ(t.engine().last_instrument_md_seq(0), last[0]);
  EXPECT_EQ(t.engine().last_instrument_md_seq(1), last[1]);
  EXPECT_EQ(last[0] + last[1], t.engine().last_md_seq());
  EXPECT_EQ(t.engine().last_instrument_md_seq(2), 0u) << "no such instrument";
}

TYPED_TEST_P(EngineScenarios, ShouldEmitTopOfBookOnlyWhenTheBestChanges) {
  NT_SCENARIO_NAMES;
  EXPECT_EQ(types(t.buy(1, 100, 5).md), (Events{MT::kAdd, MT::kTopOfBook}));
  EXPECT_EQ(types(t.buy(2, 99, 5).md), Events{MT::kAdd});       // deeper level
  EXPECT_EQ(types(t.sell(3, 105, 5).md), (Events{MT::kAdd, MT::kTopOfBook}));
  EXPECT_EQ(types(t.cancel(2, 1).md), Events{MT::kDelete});     // deeper level
  EXPECT_EQ(types(t.buy(4, 100, 1).md), (Events{MT::kAdd, MT::kTopOfBook}));  // best qty
  EXPECT_TRUE(t.buy(4, 100, 1).md.empty());                     // rejected
  EXPECT_TRUE(t.buy(5, 90, 1, kIoc).md.empty());                // nothing happened
}

// ---- capacity ---------------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldRejectWhenOrderCapacityIsExhaustedEvenIfItWouldFill) {
  NT_SCENARIO_NAMES;
  t.make(scenario_config(2, 8));
  t.buy(1, 100, 5);
  t.buy(2, 99, 5);
  EXPECT_EQ(t.buy(3, 98, 5).first().reason, RR::kOrderCapacity);
  EXPECT_EQ(t.sell(4, 99, 1).first().reason, RR::kOrderCapacity);  // conservative
  const auto o = t.sell(5, 100, 1, kIoc);  // needs no slot
  EXPECT_EQ(o.first().type, RT::kAccepted);
  EXPECT_EQ(o.of(MT::kTrade).size(), 1u);
  t.cancel(2, 1);
  EXPECT_EQ(t.buy(3, 98, 5).first().type, RT::kAccepted);
}

TYPED_TEST_P(EngineScenarios, ShouldRejectWhenLevelCapacityIsExhausted) {
  NT_SCENARIO_NAMES;
  t.make(scenario_config(16, 2));
  t.buy(1, 100, 5);
  t.buy(2, 99, 5);
  EXPECT_EQ(t.buy(3, 98, 5).first().reason, RR::kLevelCapacity);
  EXPECT_EQ(t.buy(3, 99, 5).first().type, RT::kAccepted);  // existing level
  t.sell(4, 200, 1);
  t.sell(5, 201, 1);
  EXPECT_EQ(t.sell(6, 202, 1).first().reason, RR::kLevelCapacity);
  EXPECT_EQ(t.sell(6, 100, 1).first().reason, RR::kLevelCapacity);  // conservative
  EXPECT_EQ(t.modify(4, 2, 203, 1).first().reason, RR::kLevelCapacity);
  EXPECT_EQ(t.modify(4, 2, 201, 1).first().type, RT::kModified);
  EXPECT_EQ(t.sell(7, 202, 1).first().type, RT::kAccepted);
  EXPECT_EQ(t.book(kSell), (Book{{5, 201, 1}, {4, 201, 1}, {7, 202, 1}}));
}

// ---- finished orders --------------------------------------------------------------

TYPED_TEST_P(EngineScenarios, ShouldForgetFinishedOrdersAGenerationAtATime) {
  NT_SCENARIO_NAMES;
  t.make(scenario_config(2, 8));  // generations of 2 finished orders
  t.buy(1, 90, 1, kIoc);  // current [1]
  EXPECT_EQ(t.cancel(1, 1).first().reason, RR::kTooLateToCancel);  // a reject finishes nothing
  t.buy(2, 90, 1, kIoc);  // current [1 2]: full
  t.buy(3, 90, 1, kIoc);  // previous [1 2], current [3]
  EXPECT_EQ(t.cancel(1, 1).first().reason, RR::kTooLateToCancel);
  t.buy(4, 90, 1, kIoc);  // previous [1 2], current [3 4]
  EXPECT_EQ(t.cancel(2, 1).first().reason, RR::kTooLateToCancel);
  t.buy(5, 90, 1, kIoc);  // previous [3 4], current [5]: 1 and 2 forgotten together
  EXPECT_EQ(t.cancel(1, 1).first().reason, RR::kUnknownOrder);
  EXPECT_EQ(t.cancel(2, 1).first().reason, RR::kUnknownOrder);
  EXPECT_EQ(t.cancel(3, 1).first().reason, RR::kTooLateToCancel);
  // A key stays finished while either generation has it, even when reused.
  t.buy(7, 90, 1, kIoc);  // previous [3 4], current [5 7]
  t.buy(7, 90, 1);        // id reused, live
  EXPECT_EQ(t.cancel(7, 1).first().type, RT::kCancelled);  // previous [5 7], current [7]
  t.buy(8, 90, 1, kIoc);  // previous [5 7], current [7 8]
  t.buy(9, 90, 1, kIoc);  // previous [7 8], current [9]
  EXPECT_EQ(t.cancel(7, 1).first().reason, RR::kTooLateToCancel);
  t.buy(10, 90, 1, kIoc);  // previous [7 8], current [9 10]
  t.buy(11, 90, 1, kIoc);  // previous [9 10], current [11]
  EXPECT_EQ(t.cancel(7, 1).first().reason, RR::kUnknownOrder);
  EXPECT_EQ(t.cancel(8, 1).first().reason, RR::kUnknownOrder);
  // Per instrument: instrument 1 never finished key 9.
  EXPECT_EQ(t.cancel(9, 1, 1).first().reason, RR::kUnknownOrder);
  EXPECT_EQ(t.cancel(9, 1).first().reason, RR::kTooLateToCancel);
}

// ---- mass cancel (the venue's request: cancel-on-disconnect) --------------------

TYPED_TEST_P(EngineScenarios, ShouldMassCancelTheClientsOrdersOnTheInstrumentInEntryOrder) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);                               // order id 1
  t.sell(3, 105, 4);                              // 2, client 2
  t.buy(2, 101, 3);                               // 3: the new best bid
  t.sell(4, 106, 2, kLimit, StpMode::kNone, 1);   // 4, client 1's sell
  t.buy(5, 500, 1, kLimit, StpMode::kNone, 1, 1); // 5, instrument 1
  const auto o = t.mass_cancel(1, 0);
  ASSERT_EQ(types(o.reports), (Reports{RT::kCancelled, RT::kCancelled, RT::kCancelled}));
  EXPECT_EQ(o.reports[0].order_id, 1u);
  EXPECT_EQ(o.reports[1].order_id, 3u);
  EXPECT_EQ(o.reports[2].order_id, 4u);
  for (const auto& r : o.reports) {
    EXPECT_EQ(r.cancel_reason, CR::kMassCancel);
    EXPECT_EQ(r.client, 1u);
    EXPECT_EQ(r.instrument, 0u);
    EXPECT_EQ(r.leaves_qty, 0);
  }
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kDelete, MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[3].bid_qty, 0);   // no bid left
  EXPECT_EQ(o.md[3].ask_price, 105);
  EXPECT_EQ(t.book(kBuy), Book{});
  EXPECT_EQ(t.book(kSell), (Book{{3, 105, 4}}));
  EXPECT_EQ(t.book(kBuy, 1), (Book{{5, 500, 1}}));  // another instrument: untouched
  EXPECT_EQ(t.cancel(2, 1).first().reason, RR::kTooLateToCancel);  // remembered as finished
}

TYPED_TEST_P(EngineScenarios, ShouldMassCancelOnEveryInstrumentInIdOrder) {
  NT_SCENARIO_NAMES;
  t.buy(1, 500, 1, kLimit, StpMode::kNone, 1, 1);
  t.buy(2, 100, 5);
  t.sell(3, 105, 4);  // client 2
  const auto o = t.mass_cancel(1);
  ASSERT_EQ(types(o.reports), (Reports{RT::kCancelled, RT::kCancelled}));
  EXPECT_EQ(o.reports[0].instrument, 0u);
  EXPECT_EQ(o.reports[0].client_order_id, 2u);
  EXPECT_EQ(o.reports[1].instrument, 1u);
  EXPECT_EQ(o.reports[1].client_order_id, 1u);
  ASSERT_EQ(types(o.md), (Events{MT::kDelete, MT::kTopOfBook, MT::kDelete, MT::kTopOfBook}));
  EXPECT_EQ(o.md[0].instrument, 0u);
  EXPECT_EQ(o.md[2].instrument, 1u);
  EXPECT_EQ(o.md[2].instrument_seq, 3u);  // instrument 1's own numbering: add, top, delete
  EXPECT_EQ(t.book(kSell), (Book{{3, 105, 4}}));
  EXPECT_EQ(t.engine().live_orders(1), 0u);
}

TYPED_TEST_P(EngineScenarios, ShouldProduceNothingForAMassCancelWithNothingToCancel) {
  NT_SCENARIO_NAMES;
  t.sell(3, 105, 4);  // client 2
  const auto o = t.mass_cancel(1);
  EXPECT_TRUE(o.reports.empty());
  EXPECT_TRUE(o.md.empty());
  EXPECT_EQ(t.mass_cancel(1, 1).reports.size(), 0u);
  EXPECT_EQ(t.book(kSell), (Book{{3, 105, 4}}));
}

TYPED_TEST_P(EngineScenarios, ShouldRejectAMassCancelWithABadField) {
  NT_SCENARIO_NAMES;
  t.buy(1, 100, 5);
  const auto bad = [&](auto tweak, RejectReason why) {
    Request rq = make_mass_cancel(0, 1);
    tweak(rq);
    const auto o = t.send(rq);
    ASSERT_EQ(types(o.reports), Reports{RT::kCancelRejected});
    EXPECT_EQ(o.first().reason, why);
    EXPECT_TRUE(o.md.empty());
  };
  bad([](Request& r) { r.instrument = 2; }, RR::kUnknownInstrument);
  bad([](Request& r) { r.client = kMaxClientId + 1; }, RR::kInvalidClientId);
  bad([](Request& r) { r.client_order_id = 1; }, RR::kReservedNotZero);
  bad([](Request& r) { r.price = 100; }, RR::kReservedNotZero);
  bad([](Request& r) { r.qty = 5; }, RR::kReservedNotZero);
  bad([](Request& r) { r.reserved = 1; }, RR::kReservedNotZero);
  EXPECT_EQ(t.book(kBuy), (Book{{1, 100, 5}}));  // nothing was cancelled
}

REGISTER_TYPED_TEST_SUITE_P(
    EngineScenarios, ShouldRestALimitOrderThatDoesNotCrossAndAnnounceIt,
    ShouldRejectEachInvalidNewOrderFieldWithItsReason, ShouldReportTheFirstFailingValidationStep,
    ShouldAssignOrderIdsInSequenceToAcceptedOrdersOnly, ShouldTradeAtTheMakersPriceNotTheAggressors,
    ShouldFillOrdersOfALevelInArrivalOrder, ShouldKeepFifoAfterACancelInTheMiddleOfALevel,
    ShouldMoveTheBestPriceWhenTheBestLevelEmpties, ShouldSweepLevelsUpToItsLimitAndRestTheRemainderThere,
    ShouldSweepBidsWithASellSymmetrically, ShouldCancelAnIocResidualInsteadOfRestingIt,
    ShouldLetAMarketOrderTradeAtAnyPriceWithoutACollar, ShouldStopAMarketOrderAtTheCollarOfTheLastTradeBeforeTheRequest,
    ShouldRejectLimitPricesOutsideTheCollarOnlyOnceATradeExists, ShouldLeaveTheBookUntouchedWhenAFokCannotFill,
    ShouldExecuteAFillableFokCompletely, ShouldApplySelfTradePreventionInTheFokWalk, ShouldTradeWithItselfUnderStpNone,
    ShouldCancelTheRestingOrderAndKeepMatchingUnderCancelResting, ShouldCancelTheIncomingRemainderUnderCancelIncoming,
    ShouldCancelBothOrdersUnderCancelBoth, ShouldCancelALiveOrderReportingWhatWasFilled,
    ShouldRejectACancelOfAFilledOrderAsTooLate, ShouldRejectACancelOfAnOrderNeverSeenAsUnknown,
    ShouldValidateCancelFieldsButIgnoreSideTypeAndStp, ShouldKeepPriorityWhenReducingQuantityAtTheSamePrice,
    ShouldLosePriorityWhenIncreasingQuantityOrChangingPrice, ShouldMatchACrossingModifyInsteadOfRestingIt,
    ShouldApplyTheOrdersOwnStpModeWhenAModifyMatches, ShouldKeepFilledQuantityAcrossAModify,
    ShouldCancelWhenModifiedToAtMostTheFilledQuantity, ShouldRejectAModifyWithNoChangeOrInvalidValues,
    ShouldRejectADuplicateLiveIdWithoutTouchingTheBook, ShouldNumberReportsAndEventsWithoutGaps,
    ShouldNumberEachInstrumentsEventsFromOneWithoutGaps, ShouldEmitTopOfBookOnlyWhenTheBestChanges,
    ShouldRejectWhenOrderCapacityIsExhaustedEvenIfItWouldFill, ShouldRejectWhenLevelCapacityIsExhausted,
    ShouldForgetFinishedOrdersAGenerationAtATime, ShouldMassCancelTheClientsOrdersOnTheInstrumentInEntryOrder,
    ShouldMassCancelOnEveryInstrumentInIdOrder, ShouldProduceNothingForAMassCancelWithNothingToCancel,
    ShouldRejectAMassCancelWithABadField);

#undef NT_SCENARIO_NAMES
