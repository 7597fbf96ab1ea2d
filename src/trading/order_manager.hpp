// The trade engine's orders (docs/TRADER.md "order_manager"): assigns client
// order ids, sends new / cancel / modify through the Sender (the
// OrderEntryClient, or a test double: a template parameter, static dispatch),
// and moves each order through its state machine as the exchange's answers
// arrive. Any number of orders per instrument, side and price level.
//
// States (OrderState) follow from what is known and what is in flight:
//   pending new --accepted--> live --modify()--> pending modify --modified--> live
//   any open state --cancel()--> pending cancel --cancelled--> done
//   filled (leaves 0), cancelled for any reason, rejected --> done
// A cancel may follow a pending new or a pending modify; a modify needs a
// live limit order with nothing in flight (the protocol's ModifyOrder keeps
// the order id; reprice() is the "price moved" call, cheaper than cancel +
// new and, for a smaller quantity at the same price, keeping priority).
//
// Races, all expected (PROTOCOL.md §1.3, MATCHING.md): a fill in pending
// cancel or pending modify counts (and may finish the order); the cancel or
// modify then gets CancelReject / ModifyReject 202 "too late", which finds
// the order done and is counted in expected_too_late, not as an error. A
// done order is kept until every request in flight for it has its answer,
// then its slot and id are freed. A SessionReject (e.g. RateLimited) names
// our message's seq: a rejected NewOrder fails its order (never reached the
// engine), a rejected cancel or modify leaves the order as it was.
//
// The disconnect rule: when the session ends, every open order becomes
// kUnknown -- it may be resting, filled or cancelled (by the exchange's
// cancel-on-disconnect, or not) and the answers to what was in flight are
// lost. An unknown order still counts in the working exposure as the worst
// case (its last known leaves, or the version of a modify that was in
// flight, whichever is larger) and cannot be modified. Reports that arrive
// later still apply (a fill counts; a cancel or a fill to zero makes it
// done; a modify's report settles which version rests). Once logged on again,
// reconcile() sends one CancelOrder per unknown order; its answer settles
// it: cancelled, or CancelReject 202 (already finished: filled or cancelled
// by cancel-on-disconnect) or 201 (never reached the exchange) -> done. One
// rule for both cancel_on_disconnect settings. Fills that happened while no
// session existed are not reported again (the protocol has no replay):
// finished_unseen counts the orders that ended without their last report.
//
// The working exposure (working_exposure.hpp: open quantity per side, open
// notional, open orders) is the one ledger of working orders in the trader:
// kept here as each order changes, read by the risk manager through
// exposure(), a const view.
//
// Client order ids grow from first_client_order_id (never reused while the
// process runs unless 2^48 wrap, and then never one still in use), so a late
// report can never be mistaken for a newer order's.
//
// Hot path (submit, cancel, modify, on_*): no allocation, no exceptions; all
// tables sized in the constructor. Not thread-safe: the trade engine's thread
// calls everything; counters() may be read from any thread.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/order_entry_client_types.hpp"
#include "core/counter.hpp"
#include "core/int_hash_map.hpp"
#include "core/object_pool.hpp"
#include "market/reject_reason.hpp"
#include "market/types.hpp"
#include "proto/order_entry.hpp"
#include "trading/order_manager_types.hpp"
#include "trading/trading_types.hpp"
#include "trading/working_exposure.hpp"

namespace nanotick::trading {

template <typename Sender>
class OrderManager {
 public:
  // Validates `config` (throws std::invalid_argument) and sizes every table.
  OrderManager(const OrderManagerConfig& config, Sender& sender)
      : config_((validate(config), config)),
        sender_(sender),
        pool_(config.max_orders),
        by_id_(config.max_orders),
        by_seq_(2 * config.max_orders),  // at most two requests in flight per order
        sides_(2 * std::size_t{config.instruments}),
        exposure_(config.instruments, by_id_),
        next_id_(config.first_client_order_id) {}

  OrderManager(const OrderManager&) = delete;
  OrderManager& operator=(const OrderManager&) = delete;

  // ---- commands -----------------------------------------------------------------------

  // A new order (rq.client_order_id must be 0: the id is assigned and
  // returned). `tag` is kept for the owner.
  Submitted submit(const OrderRequest& rq, market::StpMode stp = market::StpMode::kNone,
                   std::uint64_t tag = 0) noexcept {
    static_assert(OrderSender<Sender>, "OrderManager<Sender>: Sender lacks send_new_order/send_cancel/send_modify");
    SubmitStatus bad = SubmitStatus::kSent;
    if (rq.client_order_id != 0) bad = SubmitStatus::kClientOrderIdSet;
    else if (rq.instrument >= config_.instruments) bad = SubmitStatus::kInvalidInstrument;
    else if (!is_valid(rq.side)) bad = SubmitStatus::kInvalidSide;
    else if (rq.type < OrderType::kLimit || rq.type > OrderType::kMarket) bad = SubmitStatus::kInvalidOrderType;
    else if (stp > market::StpMode::kCancelBoth) bad = SubmitStatus::kInvalidStp;
    else if (rq.qty <= 0) bad = SubmitStatus::kInvalidQty;
    else if (pool_.available() == 0) bad = SubmitStatus::kPoolExhausted;
    if (bad != SubmitStatus::kSent) return refuse(bad, 0);
    const ClientOrderId id = take_id();
    const client::SendResult r = sender_.send_new_order(id, rq.instrument, rq.side, rq.type, stp, rq.price, rq.qty);
    if (!r.sent()) return refuse(status_of(r), id);
    Order* o = pool_.allocate();  // available() was checked
    o->id = id;
    o->instrument = rq.instrument;
    o->side = rq.side;
    o->type = rq.type;
    o->stp = stp;
    o->price = rq.price;
    o->qty = o->leaves_qty = rq.qty;
    o->tag = tag;
    o->new_seq = r.seq;
    (void)by_id_.insert(id, o);   // capacity = pool capacity: cannot be full
    (void)by_seq_.insert(r.seq, o);
    link(o);
    counts_[static_cast<std::size_t>(OrderState::kPendingNew)] += 1;
    publish_count(OrderState::kPendingNew);
    account(*o);
    counters_.submitted.add();
    return {SubmitStatus::kSent, id, r.seq};
  }

  // Cancels an open order (pending new, live, pending modify) or settles an
  // unknown one (see reconcile()).
  Submitted cancel(ClientOrderId id) noexcept {
    Order* o = find_mut(id);
    if (o == nullptr) return refuse(SubmitStatus::kUnknownOrder, id);
    if (o->done) return refuse(SubmitStatus::kOrderDone, id);
    if (o->cancel_seq != 0) return refuse(SubmitStatus::kRequestInFlight, id);
    const client::SendResult r = sender_.send_cancel(id, o->instrument);
    if (!r.sent()) return refuse(status_of(r), id);
    o->cancel_seq = r.seq;
    (void)by_seq_.insert(r.seq, o);
    if (o->unknown) set_reconciling(*o, true);
    settle(*o);
    return {SubmitStatus::kSent, id, r.seq};
  }

  // Modifies a live limit order: new price and new *total* quantity (filled
  // part included; at or below the filled quantity the exchange cancels it).
  Submitted modify(ClientOrderId id, Price price, Qty total_qty) noexcept {
    Order* o = find_mut(id);
    if (o == nullptr) return refuse(SubmitStatus::kUnknownOrder, id);
    if (o->done) return refuse(SubmitStatus::kOrderDone, id);
    if (o->unknown) return refuse(SubmitStatus::kStateUnknown, id);
    if (o->new_seq != 0 || o->modify_seq != 0 || o->cancel_seq != 0) return refuse(SubmitStatus::kRequestInFlight, id);
    if (o->type != OrderType::kLimit) return refuse(SubmitStatus::kNotModifiable, id);
    if (total_qty <= 0) return refuse(SubmitStatus::kInvalidQty, id);
    if (price == o->price && total_qty == o->qty) return refuse(SubmitStatus::kNoChange, id);
    const client::SendResult r = sender_.send_modify(id, o->instrument, price, total_qty);
    if (!r.sent()) return refuse(status_of(r), id);
    o->modify_seq = r.seq;
    o->pending_price = price;
    o->pending_qty = total_qty;
    (void)by_seq_.insert(r.seq, o);
    settle(*o);
    return {SubmitStatus::kSent, id, r.seq};
  }

  // The price moved: modify to `price`, same total quantity.
  Submitted reprice(ClientOrderId id, Price price) noexcept {
    const Order* o = find(id);
    return modify(id, price, o != nullptr ? o->qty : 0);
  }

  // After a logon: sends a CancelOrder for up to `max_messages` unknown
  // orders without one in flight; returns how many were sent. Call again
  // while needs_reconcile() (e.g. when a RateLimited reject sent some back).
  std::size_t reconcile(std::size_t max_messages) noexcept {
    std::size_t sent = 0;
    for (SideList& side : sides_) {
      for (Order* o = side.head; o != nullptr && sent < max_messages; o = o->next) {
        if (o->state != OrderState::kUnknown || o->reconciling) continue;
        if (!cancel(o->id).ok()) return sent;  // not logged on or output full: later
        counters_.reconcile_cancels.add();
        ++sent;
      }
    }
    return sent;
  }
  bool needs_reconcile() const noexcept { return count(OrderState::kUnknown) > reconciling_; }

  // ---- events from the gateway (order_manager_events.hpp) ----------------------------------

  OrderEvent on_execution_report(const proto::ExecutionReport& r) noexcept;

  OrderEvent on_cancel_reject(const proto::OrderReject& m) noexcept { return on_order_reject(m, true); }
  OrderEvent on_modify_reject(const proto::OrderReject& m) noexcept { return on_order_reject(m, false); }

  OrderEvent on_session_reject(const proto::SessionReject& m) noexcept;

  // The session ended: see the disconnect rule at the top. Call it when the
  // gateway reports a Disconnect with was_logged_on (orders go out only on a
  // logged-on session; a second call changes nothing).
  void on_disconnected() noexcept {
    counters_.disconnects.add();
    by_seq_.clear();
    for (SideList& side : sides_) {
      for (Order* o = side.head; o != nullptr;) {
        Order* next = o->next;
        // The answers are lost. A modify's pending version stays: it may
        // have been applied, so it keeps counting (the worst case).
        o->new_seq = o->modify_seq = o->cancel_seq = 0;
        if (o->reconciling) set_reconciling(*o, false);
        if (!o->done) o->unknown = true;
        settle(*o);
        release_if_settled(o);
        o = next;
      }
    }
  }

  // ---- queries --------------------------------------------------------------------------------

  const Order* find(ClientOrderId id) const noexcept {
    Order* const* p = by_id_.find(id);
    return p != nullptr ? *p : nullptr;
  }
  std::size_t count(OrderState s) const noexcept { return counts_[static_cast<std::size_t>(s)]; }
  // Orders not done (pending, live, unknown).
  std::size_t open_orders() const noexcept { return pool_.in_use() - count(OrderState::kDone); }
  // Quantity that may still trade on a side: the working exposure's (leaves
  // of every open order, the larger of old and new for a modify in flight,
  // unknown orders included).
  Qty open_qty(InstrumentId instrument, Side side) const noexcept { return exposure_.open_qty(instrument, side); }
  // The working exposure: the view the risk manager checks against.
  const WorkingExposure& exposure() const noexcept { return exposure_; }
  // Calls fn(const Order&) for every order kept on a side (done ones awaiting
  // answers too: check state), best price first, in sending order within a price.
  template <typename Fn>
  void for_each_order(InstrumentId instrument, Side side, Fn&& fn) const {
    if (instrument >= config_.instruments || !is_valid(side)) return;
    for (const Order* o = sides_[side_index(instrument, side)].head; o != nullptr; o = o->next) fn(*o);
  }
  std::size_t capacity() const noexcept { return pool_.capacity(); }
  const OrderManagerCounters& counters() const noexcept { return counters_; }
  // Start-up, before the engine's thread runs.
  void place_counters(core::CountersFile& file) { place_order_manager_counters(file, counters_); }

 private:
  struct SideList {
    Order* head = nullptr;
  };

  static std::size_t side_index(InstrumentId instrument, Side side) noexcept {
    return 2 * std::size_t{instrument} + (side == Side::kBuy ? 0 : 1);
  }
  Order* find_mut(ClientOrderId id) noexcept {
    Order** p = by_id_.find(id);
    return p != nullptr ? *p : nullptr;
  }
  Order* lookup(ClientOrderId id, InstrumentId instrument) noexcept {
    Order* o = find_mut(id);
    return o != nullptr && o->instrument == instrument ? o : nullptr;
  }

  Submitted refuse(SubmitStatus s, ClientOrderId id) noexcept {
    counters_.refused[static_cast<std::size_t>(s)].add();
    return {s, id, 0};
  }
  static SubmitStatus status_of(client::SendResult r) noexcept {
    return r.status == client::SendStatus::kOutputFull ? SubmitStatus::kOutputFull : SubmitStatus::kNotLoggedOn;
  }

  // The next id not held by a kept order (the loop ends: at most max_orders are held).
  ClientOrderId take_id() noexcept {
    for (;;) {
      const ClientOrderId id = next_id_;
      next_id_ = next_id_ >= market::kMaxClientOrderId ? 1 : next_id_ + 1;
      if (!by_id_.contains(id)) return id;
    }
  }

  // The request this message answers (ref_seq names it), if any, is no longer in flight.
  void answer(Order& o, std::uint32_t ref_seq) noexcept {
    if (ref_seq == 0) return;
    if (o.new_seq == ref_seq) {
      o.new_seq = 0;
    } else if (o.cancel_seq == ref_seq) {
      o.cancel_seq = 0;
      if (o.reconciling) set_reconciling(o, false);
    } else if (o.modify_seq == ref_seq) {
      o.modify_seq = 0;
      o.pending_price = 0;
      o.pending_qty = 0;
    } else {
      return;  // e.g. a maker fill caused by another of our orders' message
    }
    (void)by_seq_.erase(ref_seq);
  }

  OrderEvent on_order_reject(const proto::OrderReject& m, bool is_cancel) noexcept;

  OrderEvent unmatched(ClientOrderId id, InstrumentId instrument) noexcept {
    counters_.unmatched.add();
    OrderEvent ev{};
    ev.type = OrderEventType::kUnmatched;
    ev.id = id;
    ev.instrument = instrument;
    return ev;
  }

  // Fills the event from the order's settled state, then frees the order if it is finished.
  OrderEvent conclude(Order& o, OrderEvent ev) noexcept {
    settle(o);
    ev.id = o.id;
    ev.instrument = o.instrument;
    ev.side = o.side;
    ev.state = o.state;
    ev.done_reason = o.done_reason;
    ev.cum_qty = o.cum_qty;
    ev.leaves_qty = o.leaves_qty;
    ev.tag = o.tag;
    release_if_settled(&o);
    return ev;
  }

  void finish(Order& o, DoneReason why) noexcept {
    o.done = true;
    o.done_reason = why;
    o.leaves_qty = 0;
    o.unknown = false;
    if (o.reconciling) set_reconciling(o, false);
    counters_.done[static_cast<std::size_t>(why)].add();
  }

  void set_reconciling(Order& o, bool on) noexcept {
    o.reconciling = on;
    reconciling_ = on ? reconciling_ + 1 : reconciling_ - 1;
  }

  // The state follows from the facts: done, unknown, then what is in flight.
  void settle(Order& o) noexcept {
    OrderState s = OrderState::kLive;
    if (o.done) s = OrderState::kDone;
    else if (o.unknown) s = OrderState::kUnknown;
    else if (o.cancel_seq != 0) s = OrderState::kPendingCancel;
    else if (o.modify_seq != 0) s = OrderState::kPendingModify;
    else if (o.new_seq != 0) s = OrderState::kPendingNew;
    if (s != o.state) {
      counts_[static_cast<std::size_t>(o.state)] -= 1;
      publish_count(o.state);
      counts_[static_cast<std::size_t>(s)] += 1;
      publish_count(s);
      o.state = s;
    }
    account(o);
  }

  void publish_count(OrderState s) noexcept {
    counters_.in_state[static_cast<std::size_t>(s)].set(counts_[static_cast<std::size_t>(s)]);
  }

  void account(Order& o) noexcept { exposure_.update(o, exposure_of(o)); }

  void release_if_settled(Order* o) noexcept {
    if (!o->done || o->new_seq != 0 || o->modify_seq != 0 || o->cancel_seq != 0) return;
    exposure_.update(*o, OrderExposure{});
    unlink(o);
    (void)by_id_.erase(o->id);
    counts_[static_cast<std::size_t>(OrderState::kDone)] -= 1;
    publish_count(OrderState::kDone);
    pool_.release(o);
  }

  // Keeps each side sorted best price first (bids high to low, asks low to
  // high), FIFO within a price. Walks from the best: a side holds a strategy's
  // few orders, not a book.
  void link(Order* o) noexcept {
    SideList& side = sides_[side_index(o->instrument, o->side)];
    const bool buy = o->side == Side::kBuy;
    Order* prev = nullptr;
    Order* cur = side.head;
    while (cur != nullptr && (buy ? cur->price >= o->price : cur->price <= o->price)) {
      prev = cur;
      cur = cur->next;
    }
    o->prev = prev;
    o->next = cur;
    if (cur != nullptr) cur->prev = o;
    if (prev != nullptr) prev->next = o;
    else side.head = o;
  }
  void unlink(Order* o) noexcept {
    SideList& side = sides_[side_index(o->instrument, o->side)];
    if (o->prev != nullptr) o->prev->next = o->next;
    else side.head = o->next;
    if (o->next != nullptr) o->next->prev = o->prev;
    o->prev = o->next = nullptr;
  }

  const OrderManagerConfig config_;
  Sender& sender_;
  core::ObjectPool<Order> pool_;
  core::IntHashMap<ClientOrderId, Order*> by_id_;   // every kept order
  core::IntHashMap<std::uint32_t, Order*> by_seq_;  // requests in flight on this session
  std::vector<SideList> sides_;                     // per (instrument, side)
  WorkingExposure exposure_;                        // after by_id_: it reads it
  std::array<std::size_t, kOrderStates> counts_{};
  std::size_t reconciling_ = 0;
  ClientOrderId next_id_;
  OrderManagerCounters counters_;
};

}  // namespace nanotick::trading

#include "trading/order_manager_events.hpp"  // the exchange's answers applied to the orders
