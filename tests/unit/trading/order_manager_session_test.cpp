// The order manager and the session's events (order_manager_fixture.hpp):
// a SessionReject fails only the order message it names; the disconnect rule
// (open orders unknown until settled by reconcile or the exchange's
// answers); a too-late reject for an order believed live is unexpected; and
// messages for no order of ours are counted, not applied.
#include "trading/order_manager.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "unit/trading/order_manager_fixture.hpp"

namespace {

using namespace order_manager_fixture;

TEST_F(OrderManagerTest, SessionRejectOfANewOrderFailsOnlyThatOrder) {
  const auto a = om.submit(limit(nt::Side::kBuy, 100, 1));
  const auto b = om.submit(limit(nt::Side::kBuy, 100, 1));
  const auto c = om.submit(limit(nt::Side::kBuy, 100, 1));
  const auto ev =
      om.on_session_reject(session_reject(b.seq, np::MsgType::kNewOrder, np::SessionRejectReason::kRateLimited));
  EXPECT_EQ(ev.type, nt::OrderEventType::kSessionRejected);
  EXPECT_EQ(ev.id, b.id);
  EXPECT_EQ(ev.reason, 8);
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kSessionRejected);
  EXPECT_EQ(om.find(b.id), nullptr);
  EXPECT_EQ(om.find(a.id)->state, nt::OrderState::kPendingNew);
  EXPECT_EQ(om.find(c.id)->state, nt::OrderState::kPendingNew);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 2);
}

TEST_F(OrderManagerTest, SessionRejectOfACancelOrModifyLeavesTheOrderLive) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const auto c = om.cancel(o.id);
  auto ev =
      om.on_session_reject(session_reject(c.seq, np::MsgType::kCancelOrder, np::SessionRejectReason::kRateLimited));
  EXPECT_EQ(ev.type, nt::OrderEventType::kSessionRejected);
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  const auto m = om.reprice(o.id, 99);
  ASSERT_TRUE(m.ok());
  ev = om.on_session_reject(session_reject(m.seq, np::MsgType::kModifyOrder, np::SessionRejectReason::kRateLimited));
  EXPECT_EQ(ev.state, nt::OrderState::kLive);
  EXPECT_EQ(o.price, 100);
  // A SessionReject for something that is not an order message in flight: unmatched, changes nothing.
  ev = om.on_session_reject(session_reject(1, np::MsgType::kLogon, np::SessionRejectReason::kAlreadyLoggedOn));
  EXPECT_EQ(ev.type, nt::OrderEventType::kUnmatched);
  EXPECT_EQ(om.counters().unmatched.get(), 0u);  // not ours to count: the gateway's
}

TEST_F(OrderManagerTest, DisconnectMakesOpenOrdersUnknownUntilSettled) {
  const nt::Order& resting = live(nt::Side::kBuy, 100, 10);     // cancel-on-disconnect will cancel it
  const nt::Order& other = live(nt::Side::kBuy, 99, 10);        // still live (no cancel-on-disconnect)
  const nt::Order& filling = live(nt::Side::kSell, 110, 5);     // fills while we are away
  const auto pending = om.submit(limit(nt::Side::kSell, 111, 5));  // never reached the exchange
  const nt::Order& done_pending_cancel = live(nt::Side::kSell, 112, 5);
  const nt::ClientOrderId done_id = done_pending_cancel.id;
  (void)om.cancel(done_id);
  (void)om.on_execution_report(fill(done_pending_cancel, 5));  // done, its cancel still unanswered
  const auto m = om.reprice(other.id, 98);                     // modify in flight at the disconnect
  ASSERT_TRUE(m.ok());

  om.on_disconnected();
  EXPECT_EQ(om.count(nt::OrderState::kUnknown), 4u);
  EXPECT_EQ(om.count(nt::OrderState::kDone), 0u);
  EXPECT_EQ(om.find(done_id), nullptr) << "a done order's answers will never come: freed";
  EXPECT_EQ(other.price, 99) << "the modify's fate is unknown: the old price stays";
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 20) << "unknown orders still count (worst case)";
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 10);
  EXPECT_EQ(om.modify(resting.id, 101, 10).status, nt::SubmitStatus::kStateUnknown);
  EXPECT_TRUE(om.needs_reconcile());

  // Not logged on yet: nothing goes out.
  sender.status = nanotick::client::SendStatus::kNotLoggedOn;
  EXPECT_EQ(om.reconcile(100), 0u);
  // A fill of an unknown order arriving on the new session (ref_seq 0) still counts.
  sender.status = nanotick::client::SendStatus::kSent;
  sender.new_session();
  auto ev = om.on_execution_report(fill(filling, 5));
  EXPECT_EQ(ev.type, nt::OrderEventType::kFill);
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(om.count(nt::OrderState::kUnknown), 3u);

  // Logged on: one cancel per unknown order; a RateLimited reject sends one back to unknown.
  const std::size_t before = sender.sent.size();
  EXPECT_EQ(om.reconcile(100), 3u);
  EXPECT_FALSE(om.needs_reconcile());
  ASSERT_EQ(sender.sent.size(), before + 3);
  auto seq_of = [&](nt::ClientOrderId id) {
    for (const Sent& s : sender.sent)
      if (s.type == np::MsgType::kCancelOrder && s.id == id) return s.seq;
    return 0u;
  };
  ev = om.on_session_reject(
      session_reject(seq_of(pending.id), np::MsgType::kCancelOrder, np::SessionRejectReason::kRateLimited));
  EXPECT_EQ(ev.state, nt::OrderState::kUnknown);
  EXPECT_TRUE(om.needs_reconcile());
  EXPECT_EQ(om.reconcile(100), 1u);

  // The answers settle each one: 202 (cancel-on-disconnect took it), cancelled, 201 (never arrived).
  ev = om.on_cancel_reject(
      order_reject(np::MsgType::kCancelReject, resting, seq_of(resting.id), ne::RejectReason::kTooLateToCancel));
  EXPECT_EQ(ev.type, nt::OrderEventType::kCancelRejected);
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kFinishedUnseen);
  ev = om.on_execution_report(cancelled(other, seq_of(other.id)));
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kCancelled);
  const nt::Order& p = *om.find(pending.id);
  std::uint32_t last_cancel_seq = 0;
  for (const Sent& s : sender.sent)
    if (s.type == np::MsgType::kCancelOrder && s.id == pending.id) last_cancel_seq = s.seq;
  ev = om.on_cancel_reject(
      order_reject(np::MsgType::kCancelReject, p, last_cancel_seq, ne::RejectReason::kUnknownOrder));
  EXPECT_EQ(ev.done_reason, nt::DoneReason::kUnknownAtExchange);

  EXPECT_EQ(om.open_orders(), 0u);
  EXPECT_EQ(om.count(nt::OrderState::kUnknown), 0u);
  EXPECT_EQ(om.open_qty(0, nt::Side::kBuy), 0);
  EXPECT_EQ(om.open_qty(0, nt::Side::kSell), 0);
  EXPECT_EQ(om.counters().unexpected_rejects.get(), 0u) << "all expected after a session loss";
  EXPECT_EQ(om.counters().done[static_cast<std::size_t>(nt::DoneReason::kFinishedUnseen)].get(), 1u);
}

TEST_F(OrderManagerTest, TooLateForAnOrderBelievedLiveIsCountedAsUnexpected) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  const auto c = om.cancel(o.id);
  const auto ev =
      om.on_cancel_reject(order_reject(np::MsgType::kCancelReject, o, c.seq, ne::RejectReason::kTooLateToCancel));
  EXPECT_EQ(ev.state, nt::OrderState::kDone);
  EXPECT_EQ(om.counters().unexpected_rejects.get(), 1u);
}

TEST_F(OrderManagerTest, MessagesForNoOrderOfOursAreCountedNotApplied) {
  const nt::Order& o = live(nt::Side::kBuy, 100, 10);
  nt::Order stranger = o;
  stranger.id = 999;
  EXPECT_EQ(om.on_execution_report(fill(stranger, 1)).type, nt::OrderEventType::kUnmatched);
  nt::Order wrong_instrument = o;
  wrong_instrument.instrument = 1;
  EXPECT_EQ(om.on_execution_report(fill(wrong_instrument, 1)).type, nt::OrderEventType::kUnmatched);
  EXPECT_EQ(
      om.on_cancel_reject(order_reject(np::MsgType::kCancelReject, stranger, 0, ne::RejectReason::kUnknownOrder)).type,
      nt::OrderEventType::kUnmatched);
  EXPECT_EQ(
      om.on_session_reject(session_reject(77, np::MsgType::kNewOrder, np::SessionRejectReason::kRateLimited)).type,
      nt::OrderEventType::kUnmatched);
  EXPECT_EQ(om.counters().unmatched.get(), 4u);
  EXPECT_EQ(o.cum_qty, 0);
  // A non-fill report for an order already done is ignored (a fill still counts).
  const nt::ClientOrderId id = o.id;
  const auto c = om.cancel(id);
  (void)om.on_execution_report(fill(o, 10));
  EXPECT_EQ(om.on_execution_report(accepted(o, 0)).type, nt::OrderEventType::kNone);
  EXPECT_EQ(om.counters().late_reports.get(), 1u);
  (void)om.on_cancel_reject(order_reject(np::MsgType::kCancelReject, o, c.seq, ne::RejectReason::kTooLateToCancel));
  EXPECT_EQ(om.find(id), nullptr);
}

}  // namespace
