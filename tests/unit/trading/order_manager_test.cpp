// The order manager's state machine without sockets (order_manager_fixture.hpp):
// an order's life through the exchange's answers -- acks, fills, cancels,
// modifies, their rejects and the races between them --, the sides' order,
// command validation, the pool and the sender refusing, no allocation in the
// steady state. Session rejects, the disconnect rule and messages for no
// order of ours: order_manager_session_test.cpp.
#include "trading/order_manager.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "support/allocation_counter.hpp"
#include "unit/trading/order_manager_fixture.hpp"

namespace {

using namespace order_manager_fixture;

TEST_F(OrderManagerTest, NewOrderIsPendingNewUntilAcceptedThenLive) {
  const auto s = om.submit(limit(nt::Side::kBuy, 100, 10), ne::StpMode::kNone, 7);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(sender.sent.size(), 1u);
  EXPECT_EQ(sender.last().type, np::MsgType::kNewOrder);
  EXPECT_EQ(sender.last().id, s.id);
  EXPECT_EQ(s.seq, sender.last().seq);
  const nt::Order* o = om.find(s.id);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->state, nt::OrderState::kPendingNew);
  EXPECT_EQ(om.count(nt::OrderState::kPendingNew), 1u);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 10);

  const auto ev = om.on_execution_report(accepted(*o, s.seq));
  EXPECT_EQ(ev.type, nt::OrderEventType::kAccepted);
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  EXPECT_EQ(ev.tag, 7u);
  EXPECT_EQ(o->exchange_id, 1000 + s.id);
  EXPECT_EQ(om.count(nt::OrderState::kPendingNew), 0u);
  EXPECT_EQ(om.count(nt::OrderState::kLive), 1u);
  EXPECT_EQ(om.counters().in_state[static_cast<std::size_t>(nt::OrderState::kLive)].get(), 1u);
}

TEST_F(OrderManagerTest, IdsAreUniqueAndNotReusedWhileKept) {
  std::vector<nt::ClientOrderId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(om.submit(limit(nt::Side::kBuy, 100, 1)).id);
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i], ids[i - 1]);
  // At the top of the 48-bit range the ids wrap to 1 and skip the ones still held.
  RecordingSender s2;
  nt::OrderManager<RecordingSender> top({8, 1, ne::kMaxClientOrderId - 1}, s2);
  const auto a = top.submit(limit(nt::Side::kBuy, 100, 1));
  const auto b = top.submit(limit(nt::Side::kBuy, 100, 1));
  const auto c = top.submit(limit(nt::Side::kBuy, 100, 1));
  EXPECT_EQ(a.id, ne::kMaxClientOrderId - 1);
  EXPECT_EQ(b.id, ne::kMaxClientOrderId);
  EXPECT_EQ(c.id, 1u);
  // Wrap again while 1 is still held: it is skipped.
  RecordingSender s3;
  nt::OrderManager<RecordingSender> small({8, 1, ne::kMaxClientOrderId}, s3);
  const auto x = small.submit(limit(nt::Side::kBuy, 100, 1));  // kMax
  const auto y = small.submit(limit(nt::Side::kBuy, 100, 1));  // 1
  EXPECT_EQ(x.id, ne::kMaxClientOrderId);
  EXPECT_EQ(y.id, 1u);
}

TEST_F(OrderManagerTest, RejectedNewOrderIsDoneAndFreed) {
  const auto s = om.submit(limit(nt::Side::kSell, 105, 10));
  auto r = report(np::ExecType::kRejected, *om.find(s.id), s.seq);
  r.reject_reason = static_cast<std::uint16_t>(ne::RejectReason::kPriceOffTick);
  const auto ev = om.on_execution_report(r);
  EXPECT_EQ(ev.type, nt::OrderEventType::kRejected);
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kRejected);
  EXPECT_EQ(ev.reason, 105);
  EXPECT_EQ(om.find(s.id), nullptr);  // nothing in flight: freed
  EXPECT_EQ(om.open_orders(), 0u);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 0);
  EXPECT_EQ(om.counters().done[static_cast<std::size_t>(nt::DoneReason::kRejected)].get(), 1u);
}

TEST_F(OrderManagerTest, PartialFillsThenLastFillFinishTheOrder) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const nt::ClientOrderId id = o.id;
  auto ev = om.on_execution_report(fill(o, 4, 0, 100));
  EXPECT_EQ(ev.type, nt::OrderEventType::kFill);
  EXPECT_EQ(ev.last_qty, 4);
  EXPECT_EQ(ev.cum_qty, 4);
  EXPECT_EQ(ev.leaves_qty, 6);
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  const nt::FillEvent f = ev.fill();
  EXPECT_EQ(f.client_order_id, id);
  EXPECT_EQ(f.side, nt::Side::kBuy);
  EXPECT_EQ(f.price, 100);
  EXPECT_EQ(f.qty, 4);
  EXPECT_TRUE(f.is_maker);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 6);
  ev = om.on_execution_report(fill(o, 6));
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kFilled);
  EXPECT_EQ(om.find(id), nullptr);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 0);
  EXPECT_EQ(om.counters().fills.get(), 2u);
}

TEST_F(OrderManagerTest, CancelOfALiveOrderEndsCancelled) {
  const nt::Order& o = live(nt::Side::kSell, 101, 5);
  const nt::ClientOrderId id = o.id;
  const auto c = om.cancel(id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(sender.last().type, np::MsgType::kCancelOrder);
  EXPECT_EQ(o.state, nt::OrderState::kPendingCancel);
  EXPECT_EQ(om.cancel(id).status, nt::SubmitStatus::kRequestInFlight);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 5);  // still working until the answer
  const auto ev = om.on_execution_report(cancelled(o, c.seq));
  EXPECT_EQ(ev.type, nt::OrderEventType::kCancelled);
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.reason, 1);
  EXPECT_EQ(om.find(id), nullptr);
  EXPECT_EQ(om.cancel(id).status, nt::SubmitStatus::kUnknownOrder);
}

TEST_F(OrderManagerTest, FillWhilePendingCancelCountsThenTooLateIsExpected) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const nt::ClientOrderId id = o.id;
  const auto c = om.cancel(id);
  // The order fills completely before the exchange sees the cancel.
  const auto ev = om.on_execution_report(fill(o, 10));
  EXPECT_EQ(ev.type, nt::OrderEventType::kFill);
  EXPECT_EQ(ev.last_qty, 10);
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kFilled);
  ASSERT_NE(om.find(id), nullptr) << "kept until the cancel's answer";
  EXPECT_EQ(om.count(nt::OrderState::kDone), 1u);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 0);
  // Then the cancel's answer: 202 too late. Expected, not an error.
  const auto rj =
      om.on_cancel_reject(order_reject(np::MsgType::kCancelReject, o, c.seq, ne::RejectReason::kTooLateToCancel));
  EXPECT_EQ(rj.type, nt::OrderEventType::kNone);
  EXPECT_EQ(om.counters().expected_too_late.get(), 1u);
  EXPECT_EQ(om.counters().unexpected_rejects.get(), 0u);
  EXPECT_EQ(om.find(id), nullptr);
  EXPECT_EQ(om.count(nt::OrderState::kDone), 0u);
}

TEST_F(OrderManagerTest, PartialFillWhilePendingCancelThenCancelled) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const auto c = om.cancel(o.id);
  auto ev = om.on_execution_report(fill(o, 3));
  EXPECT_EQ(ev.type, nt::OrderEventType::kFill);
  EXPECT_EQ(ev.state, nt::OrderState::kPendingCancel);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 7);
  ev = om.on_execution_report(cancelled(o, c.seq));
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.cum_qty, 3);
  EXPECT_EQ(om.open_orders(), 0u);
}

TEST_F(OrderManagerTest, CancelBeforeTheAckIsAnsweredInOrder) {
  const auto s = om.submit(limit(nt::Side::kBuy, 100, 10));
  const nt::Order& o = *om.find(s.id);
  const auto c = om.cancel(s.id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(o.state, nt::OrderState::kPendingCancel);
  EXPECT_EQ(om.on_execution_report(accepted(o, s.seq)).state, nt::OrderState::kPendingCancel);
  EXPECT_EQ(om.on_execution_report(cancelled(o, c.seq)).state, nt::OrderState::kDone);
  EXPECT_EQ(om.find(s.id), nullptr);
}

TEST_F(OrderManagerTest, RepriceModifiesInPlaceAndKeepsTheSideSorted) {
  const nt::Order& a = live(nt::Side::kBuy, 100, 10);
  const nt::Order& b = live(nt::Side::kBuy, 99, 10);
  const auto m = om.reprice(b.id, 101);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(sender.last().type, np::MsgType::kModifyOrder);
  EXPECT_EQ(sender.last().price, 101);
  EXPECT_EQ(sender.last().qty, 10);  // same total
  EXPECT_EQ(b.state, nt::OrderState::kPendingModify);
  EXPECT_EQ(om.modify(b.id, 102, 10).status, nt::SubmitStatus::kRequestInFlight);
  const auto ev = om.on_execution_report(modified(b, m.seq, 101, 10));
  EXPECT_EQ(ev.type, nt::OrderEventType::kModified);
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  EXPECT_EQ(b.price, 101);
  std::vector<nt::ClientOrderId> order;
  om.for_each_order(0, nt::Side::kBuy, [&](const nt::Order& o) { order.push_back(o.id); });
  EXPECT_EQ(order, (std::vector<nt::ClientOrderId>{b.id, a.id}));  // 101 is now the best bid
  EXPECT_EQ(om.reprice(b.id, 101).status, nt::SubmitStatus::kNoChange);
}

TEST_F(OrderManagerTest, ModifyRejectLeavesTheOrderAsItWas) {
  const nt::Order& o = live(nt::Side::kSell, 105, 10);
  const auto m = om.modify(o.id, 90, 20);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 20);  // the larger of old and new while in flight
  const auto ev =
      om.on_modify_reject(order_reject(np::MsgType::kModifyReject, o, m.seq, ne::RejectReason::kPriceOutOfBand));
  EXPECT_EQ(ev.type, nt::OrderEventType::kModifyRejected);
  EXPECT_EQ(ev.reason, 106);
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  EXPECT_EQ(o.price, 105);
  EXPECT_EQ(o.qty, 10);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 10);
  EXPECT_TRUE(om.reprice(o.id, 104).ok()) << "nothing in flight any more";
}

TEST_F(OrderManagerTest, FillWhilePendingModifyThenTooLateModifyReject) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const nt::ClientOrderId id = o.id;
  const auto m = om.reprice(id, 101);
  EXPECT_EQ(om.on_execution_report(fill(o, 10)).state, nt::OrderState::kDone);
  const auto ev =
      om.on_modify_reject(order_reject(np::MsgType::kModifyReject, o, m.seq, ne::RejectReason::kTooLateToCancel));
  EXPECT_EQ(ev.type, nt::OrderEventType::kNone);
  EXPECT_EQ(om.counters().expected_too_late.get(), 1u);
  EXPECT_EQ(om.find(id), nullptr);
}

TEST_F(OrderManagerTest, ModifyBelowTheFilledQuantityCancels) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  (void)om.on_execution_report(fill(o, 4));
  const auto m = om.modify(o.id, 100, 3);
  ASSERT_TRUE(m.ok());
  const auto ev = om.on_execution_report(cancelled(o, m.seq, 5));
  EXPECT_EQ(ev.type, nt::OrderEventType::kCancelled);
  EXPECT_EQ(ev.reason, 5);
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(ev.cum_qty, 4);
  EXPECT_EQ(om.open_orders(), 0u);
}

TEST_F(OrderManagerTest, MakerFillCausedByAnotherOfOurOrdersAnswersNothing) {
  const nt::Order& maker = live(nt::Side::kSell, 100, 10);
  const auto c = om.cancel(maker.id);
  const auto taker = om.submit(limit(nt::Side::kBuy, 100, 4));
  // Our taker trades with our own resting order: the maker's fill quotes the taker's seq.
  const auto ev = om.on_execution_report(fill(maker, 4, taker.seq));
  EXPECT_EQ(ev.state, nt::OrderState::kPendingCancel) << "the cancel is still in flight";
  EXPECT_EQ(maker.cancel_seq, c.seq);
  EXPECT_EQ(om.find(taker.id)->new_seq, taker.seq) << "the taker's NewOrder is unanswered";
}

TEST_F(OrderManagerTest, ManyOrdersPerSideAndLevelBestPriceFirstFifoWithinALevel) {
  const nt::Order& b1 = live(nt::Side::kBuy, 100, 1);
  const nt::Order& b2 = live(nt::Side::kBuy, 101, 2);
  const nt::Order& b3 = live(nt::Side::kBuy, 100, 3);
  const nt::Order& b4 = live(nt::Side::kBuy, 99, 4);
  const nt::Order& a1 = live(nt::Side::kSell, 103, 5);
  const nt::Order& a2 = live(nt::Side::kSell, 102, 6);
  const nt::Order& a3 = live(nt::Side::kSell, 103, 7);
  const nt::Order& other = live(nt::Side::kBuy, 100, 8, 1);  // another instrument
  std::vector<nt::ClientOrderId> bids, asks, other_bids;
  om.for_each_order(0, nt::Side::kBuy, [&](const nt::Order& o) { bids.push_back(o.id); });
  om.for_each_order(0, nt::Side::kSell, [&](const nt::Order& o) { asks.push_back(o.id); });
  om.for_each_order(1, nt::Side::kBuy, [&](const nt::Order& o) { other_bids.push_back(o.id); });
  EXPECT_EQ(bids, (std::vector<nt::ClientOrderId>{b2.id, b1.id, b3.id, b4.id}));
  EXPECT_EQ(asks, (std::vector<nt::ClientOrderId>{a2.id, a1.id, a3.id}));
  EXPECT_EQ(other_bids, (std::vector<nt::ClientOrderId>{other.id}));
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 10);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 18);
  EXPECT_EQ(om.open_qty(1, nt::Side::kBuy), 8);
  EXPECT_EQ(om.count(nt::OrderState::kLive), 8u);
  EXPECT_EQ(om.open_orders(), 8u);
}

TEST_F(OrderManagerTest, CommandsAreValidatedWithSpecificResults) {
  auto rq = limit(nt::Side::kBuy, 100, 10);
  rq.client_order_id = 5;
  EXPECT_EQ(om.submit(rq).status, nt::SubmitStatus::kClientOrderIdSet);
  EXPECT_EQ(om.submit(limit(nt::Side::kBuy, 100, 10, 2)).status, nt::SubmitStatus::kInvalidInstrument);
  EXPECT_EQ(om.submit(limit(static_cast<nt::Side>(3), 100, 10)).status, nt::SubmitStatus::kInvalidSide);
  rq = limit(nt::Side::kBuy, 100, 10);
  rq.type = static_cast<nt::OrderType>(9);
  EXPECT_EQ(om.submit(rq).status, nt::SubmitStatus::kInvalidOrderType);
  EXPECT_EQ(om.submit(limit(nt::Side::kBuy, 100, 10), static_cast<ne::StpMode>(4)).status,
            nt::SubmitStatus::kInvalidStp);
  EXPECT_EQ(om.submit(limit(nt::Side::kBuy, 100, 0)).status, nt::SubmitStatus::kInvalidQty);
  EXPECT_EQ(om.submit(limit(nt::Side::kBuy, 100, -1)).status, nt::SubmitStatus::kInvalidQty);
  EXPECT_TRUE(sender.sent.empty());
  EXPECT_EQ(om.counters().refused[static_cast<std::size_t>(nt::SubmitStatus::kInvalidQty)].get(), 2u);

  EXPECT_EQ(om.cancel(12345).status, nt::SubmitStatus::kUnknownOrder);
  EXPECT_EQ(om.modify(12345, 1, 1).status, nt::SubmitStatus::kUnknownOrder);
  const auto pending = om.submit(limit(nt::Side::kBuy, 100, 10));
  EXPECT_EQ(om.modify(pending.id, 101, 10).status, nt::SubmitStatus::kRequestInFlight);
  rq = limit(nt::Side::kBuy, 100, 10);
  rq.type = nt::OrderType::kIoc;
  const auto ioc = om.submit(rq);
  (void)om.on_execution_report(accepted(*om.find(ioc.id), ioc.seq));
  EXPECT_EQ(om.modify(ioc.id, 101, 10).status, nt::SubmitStatus::kNotModifiable);
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  EXPECT_EQ(om.modify(o.id, 100, 0).status, nt::SubmitStatus::kInvalidQty);
  EXPECT_EQ(om.modify(o.id, 100, 10).status, nt::SubmitStatus::kNoChange);
  const nt::ClientOrderId id = o.id;
  const auto c = om.cancel(id);
  (void)om.on_execution_report(fill(o, 10));  // done, cancel unanswered
  EXPECT_EQ(om.cancel(id).status, nt::SubmitStatus::kOrderDone);
  EXPECT_EQ(om.modify(id, 1, 1).status, nt::SubmitStatus::kOrderDone);
  (void)c;
}

TEST_F(OrderManagerTest, SenderRefusalChangesNothing) {
  sender.status = nanotick::client::SendStatus::kNotLoggedOn;
  EXPECT_EQ(om.submit(limit(nt::Side::kBuy, 100, 10)).status, nt::SubmitStatus::kNotLoggedOn);
  EXPECT_EQ(om.open_orders(), 0u);
  sender.status = nanotick::client::SendStatus::kSent;
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  sender.status = nanotick::client::SendStatus::kOutputFull;
  EXPECT_EQ(om.cancel(o.id).status, nt::SubmitStatus::kOutputFull);
  EXPECT_EQ(om.reprice(o.id, 99).status, nt::SubmitStatus::kOutputFull);
  EXPECT_EQ(o.state, nt::OrderState::kLive);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 10);
}

TEST_F(OrderManagerTest, PoolExhaustionIsAResultNotACrash) {
  RecordingSender s;
  nt::OrderManager<RecordingSender> tiny({2, 1, 1}, s);
  EXPECT_TRUE(tiny.submit(limit(nt::Side::kBuy, 100, 1)).ok());
  const auto b = tiny.submit(limit(nt::Side::kBuy, 100, 1));
  EXPECT_TRUE(b.ok());
  EXPECT_EQ(tiny.submit(limit(nt::Side::kBuy, 100, 1)).status, nt::SubmitStatus::kPoolExhausted);
  auto r = report(np::ExecType::kRejected, *tiny.find(b.id), b.seq);
  (void)tiny.on_execution_report(r);
  EXPECT_TRUE(tiny.submit(limit(nt::Side::kBuy, 100, 1)).ok()) << "a freed slot is reused";
}

TEST_F(OrderManagerTest, SteadyStateDoesNotAllocate) {
  sender.sent.reserve(16);  // the recorder's own storage, before counting
  const nanotick::test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    const auto s = om.submit(limit(nt::Side::kBuy, 100 + i % 5, 10));
    const nt::Order& o = *om.find(s.id);
    (void)om.on_execution_report(accepted(o, s.seq));
    const auto m = om.reprice(s.id, 90);
    (void)om.on_execution_report(modified(o, m.seq, 90, 10));
    (void)om.on_execution_report(fill(o, 4));
    const auto c = om.cancel(s.id);
    (void)om.on_execution_report(cancelled(o, c.seq));
    sender.sent.clear();  // the recorder's vector keeps its capacity
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(om.open_orders(), 0u);
}

TEST(OrderManagerConfig, IsValidatedWithTheFieldNamed) {
  RecordingSender s;
  auto expect_error = [&](nt::OrderManagerConfig c, const std::string& field) {
    try {
      nt::OrderManager<RecordingSender> m(c, s);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error({0, 1, 1}, "max_orders");
  expect_error({8, 0, 1}, "instruments");
  expect_error({8, 1, 0}, "first_client_order_id");
  expect_error({8, 1, ne::kMaxClientOrderId + 1}, "first_client_order_id");
}

}  // namespace
