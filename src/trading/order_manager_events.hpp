// The order manager's events from the gateway (order_manager.hpp, which
// includes this at its end): an ExecutionReport, a CancelReject or
// ModifyReject, a SessionReject naming one of our order messages, each
// applied to the order it answers and turned into the OrderEvent the trade
// engine hands on. Not included on its own.
#pragma once

#include "trading/order_manager.hpp"

namespace nanotick::trading {

template <typename Sender>
OrderEvent OrderManager<Sender>::on_execution_report(const proto::ExecutionReport& r) noexcept {
  Order* o = lookup(r.client_order_id, r.instrument);
  if (o == nullptr) return unmatched(r.client_order_id, r.instrument);
  answer(*o, r.ref_seq);
  OrderEvent ev{};
  if (o->done && r.exec_type != proto::ExecType::kFill) {
    counters_.late_reports.add();  // e.g. settled by a 202 before its own report arrived
  } else {
    switch (r.exec_type) {
      case proto::ExecType::kAccepted:
        ev.type = OrderEventType::kAccepted;
        o->exchange_id = r.order_id;
        o->cum_qty = r.cum_qty;
        o->leaves_qty = r.leaves_qty;
        break;
      case proto::ExecType::kRejected:
        ev.type = OrderEventType::kRejected;
        ev.reason = o->reject_reason = r.reject_reason;
        finish(*o, DoneReason::kRejected);
        break;
      case proto::ExecType::kFill:
        // Counts in every state, done included: the position must see it.
        ev.type = OrderEventType::kFill;
        ev.last_price = r.last_price;
        ev.last_qty = r.last_qty;
        ev.is_maker = r.is_maker != 0;
        counters_.fills.add();
        o->cum_qty = r.cum_qty;
        o->leaves_qty = r.leaves_qty;
        if (r.leaves_qty == 0 && !o->done) finish(*o, DoneReason::kFilled);
        break;
      case proto::ExecType::kCancelled:
        ev.type = OrderEventType::kCancelled;
        ev.reason = r.cancel_reason;
        o->cum_qty = r.cum_qty;
        o->leaves_qty = 0;
        finish(*o, DoneReason::kCancelled);
        break;
      case proto::ExecType::kModified:
        ev.type = OrderEventType::kModified;
        o->qty = r.order_qty;
        o->cum_qty = r.cum_qty;
        o->leaves_qty = r.leaves_qty;
        if (o->modify_seq == 0) {  // no modify in flight: a version a session loss left unknown is now known
          o->pending_price = 0;
          o->pending_qty = 0;
        }
        if (r.price != o->price) {
          unlink(o);
          o->price = r.price;
          link(o);
        }
        break;
      default:
        counters_.unmatched.add();  // an exec type the spec does not define
        ev.type = OrderEventType::kUnmatched;
        break;
    }
  }
  return conclude(*o, ev);
}

template <typename Sender>
OrderEvent OrderManager<Sender>::on_session_reject(const proto::SessionReject& m) noexcept {
  Order** found = m.ref_seq != 0 ? by_seq_.find(m.ref_seq) : nullptr;
  if (found == nullptr) {
    // Not an order message of ours in flight (a Heartbeat, the Logon...): the gateway's business.
    const auto t = static_cast<proto::MsgType>(m.ref_type);
    if (t == proto::MsgType::kNewOrder || t == proto::MsgType::kCancelOrder || t == proto::MsgType::kModifyOrder)
      counters_.unmatched.add();
    OrderEvent ev{};
    ev.type = OrderEventType::kUnmatched;
    ev.reason = m.reason;
    return ev;
  }
  Order& o = **found;
  (void)by_seq_.erase(m.ref_seq);
  OrderEvent ev{};
  ev.type = OrderEventType::kSessionRejected;
  ev.rejected_request = static_cast<proto::MsgType>(m.ref_type);
  ev.reason = o.reject_reason = m.reason;
  if (o.new_seq == m.ref_seq) {
    o.new_seq = 0;
    finish(o, DoneReason::kSessionRejected);  // the engine never saw it
  } else if (o.cancel_seq == m.ref_seq) {
    o.cancel_seq = 0;
    if (o.reconciling) set_reconciling(o, false);  // reconcile() tries again
  } else if (o.modify_seq == m.ref_seq) {
    o.modify_seq = 0;
    o.pending_price = 0;
    o.pending_qty = 0;
  }
  return conclude(o, ev);
}

template <typename Sender>
OrderEvent OrderManager<Sender>::on_order_reject(const proto::OrderReject& m, bool is_cancel) noexcept {
  Order* o = lookup(m.client_order_id, m.instrument);
  if (o == nullptr) return unmatched(m.client_order_id, m.instrument);
  const bool was_reconciling = o->reconciling;
  answer(*o, m.ref_seq);
  OrderEvent ev{};
  ev.reason = m.reason;
  const auto why = static_cast<market::RejectReason>(m.reason);
  const bool gone = why == market::RejectReason::kTooLateToCancel || why == market::RejectReason::kUnknownOrder;
  if (o->done) {
    // A fill or cancel finished it while the request was on its way: the race, expected.
    if (gone) counters_.expected_too_late.add();
    else counters_.late_reports.add();
  } else {
    o->reject_reason = m.reason;
    ev.type = is_cancel ? OrderEventType::kCancelRejected : OrderEventType::kModifyRejected;
    if (gone) {
      // The exchange has no live order: finished (202) or never there (201).
      // Expected only when a session loss hid what happened.
      if (!was_reconciling && !o->unknown) counters_.unexpected_rejects.add();
      finish(*o, why == market::RejectReason::kTooLateToCancel ? DoneReason::kFinishedUnseen
                                                               : DoneReason::kUnknownAtExchange);
    }
    // Any other reason (no change, price, capacity...): the request was refused, the order is as it was.
  }
  return conclude(*o, ev);
}

}  // namespace nanotick::trading
