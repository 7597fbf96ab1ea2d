// The matching engine's requests: validation and the handling of each request
// type (new, cancel, modify, mass cancel), per docs/MATCHING.md. Member
// functions of MatchingEngine (engine/matching_engine.hpp), defined out of the
// class and `inline` as they were inside it (but for the cold, never-inlined
// on_mass_cancel, where GCC rejects `inline`). Included at the end of
// engine/matching_engine.hpp: include that header, not this one.
#pragma once

#include <algorithm>

#include "engine/matching_engine.hpp"

namespace nanotick::engine {

template <EngineSink Sink>
inline void MatchingEngine<Sink>::on_new(const Request& rq) noexcept {
  RejectReason why = check_common(rq);
  if (why == RejectReason::kNone) {
    if (rq.side != Side::kBuy && rq.side != Side::kSell) why = RejectReason::kInvalidSide;
    else if (static_cast<std::uint8_t>(rq.order_type) - 1u > 3u) why = RejectReason::kInvalidOrderType;
    else if (static_cast<std::uint8_t>(rq.stp) > 3u) why = RejectReason::kInvalidStpMode;
    else if (rq.reserved != 0) why = RejectReason::kReservedNotZero;
    else why = check_ids(rq);
  }
  if (why != RejectReason::kNone) return reject(rq, ReportType::kRejected, why);
  OrderBook& b = *books_[rq.instrument];
  if ((why = check_qty(b, rq.qty)) != RejectReason::kNone) return reject(rq, ReportType::kRejected, why);
  const bool is_market = rq.order_type == OrderType::kMarket;
  if (!is_market && (why = check_price(b, rq.price)) != RejectReason::kNone)
    return reject(rq, ReportType::kRejected, why);
  const std::uint64_t key = order_key(rq.client, rq.client_order_id);
  if (live_.find(key) != nullptr) return reject(rq, ReportType::kRejected, RejectReason::kDuplicateClientOrderId);
  if (rq.order_type == OrderType::kLimit) {
    if (b.orders.available() == 0) return reject(rq, ReportType::kRejected, RejectReason::kOrderCapacity);
    BookSide& own = b.side(rq.side);
    if (!own.has_free_level() && own.find(rq.price) == nullptr)
      return reject(rq, ReportType::kRejected, RejectReason::kLevelCapacity);
  }

  const Top before = top(b);
  Order in;
  in.key = key;
  in.order_id = ++next_order_id_;
  in.price = is_market ? 0 : rq.price;
  in.order_qty = rq.qty;
  in.side = rq.side;
  in.stp = rq.stp;
  report(ReportType::kAccepted, in, rq.order_type);

  Price limit = rq.price;
  if (is_market) limit = market_limit(b, rq.side);
  if (rq.order_type == OrderType::kFok && fok_available(b, in, limit) < rq.qty) {
    cancelled(in, rq.order_type, CancelReason::kFokUnfillable);
    b.finished.add(key);
    return;  // nothing touched: no top-of-book change possible
  }
  const MatchEnd end = match(b, in, rq.order_type, limit);
  if (end == MatchEnd::kSelfTradeStop) {
    cancelled(in, rq.order_type, CancelReason::kSelfTrade);
    b.finished.add(key);
  } else if (in.open_qty() == 0) {
    b.finished.add(key);
  } else if (rq.order_type == OrderType::kLimit) {
    Order* o = b.orders.allocate(in);  // capacity checked above
    rest(b, o);
    live_.insert(key, o);  // cannot be full: the pools bound it
  } else {
    cancelled(in, rq.order_type, CancelReason::kIocResidual);
    b.finished.add(key);
  }
  emit_top_if_changed(b, before);
}

// Cancel and modify: validates the request's common fields and ids, then
// finds the client's live order on this instrument. On failure reports
// `reject_type` with the reason and returns nullptr.
template <EngineSink Sink>
NT_ALWAYS_INLINE Order* MatchingEngine<Sink>::find_live_or_reject(const Request& rq, ReportType reject_type) noexcept {
  RejectReason why = check_common(rq);
  if (why == RejectReason::kNone) why = rq.reserved != 0 ? RejectReason::kReservedNotZero : check_ids(rq);
  if (why != RejectReason::kNone) {
    reject(rq, reject_type, why);
    return nullptr;
  }
  OrderBook& b = *books_[rq.instrument];
  const std::uint64_t key = order_key(rq.client, rq.client_order_id);
  Order* o = live_.find(key);
  if (o == nullptr || !b.orders.owns(o)) {  // not live, or live on another instrument
    reject(rq, reject_type, not_live(b, key));
    return nullptr;
  }
  return o;
}

template <EngineSink Sink>
inline void MatchingEngine<Sink>::on_cancel(const Request& rq) noexcept {
  Order* o = find_live_or_reject(rq, ReportType::kCancelRejected);
  if (o == nullptr) return;
  OrderBook& b = *books_[rq.instrument];
  const Top before = top(b);
  remove_resting(b, o, CancelReason::kUserRequest);
  emit_top_if_changed(b, before);
}

// Every live order of the client on the instrument (or on each instrument in
// id order: kAllInstruments), cancelled in the order they were entered
// (order id), each with its report and market data, then one top-of-book
// check per instrument. Nothing live: no output. O(live orders of the
// instruments): the venue's request at a session's end, not a hot path --
// cold, out of line, so process() stays as small as before it existed.
template <EngineSink Sink>
void MatchingEngine<Sink>::on_mass_cancel(const Request& rq) noexcept {
  RejectReason why = rq.instrument == kAllInstruments ? RejectReason::kNone : check_common(rq);
  if (why == RejectReason::kNone && rq.client > kMaxClientId) why = RejectReason::kInvalidClientId;
  if (why == RejectReason::kNone && (rq.reserved != 0 || rq.client_order_id != 0 || rq.price != 0 || rq.qty != 0))
    why = RejectReason::kReservedNotZero;
  if (why != RejectReason::kNone) return reject(rq, ReportType::kCancelRejected, why);
  cancel_all_of(rq.instrument, rq.client, CancelReason::kMassCancel);
}

// `inst`: one instrument or kAllInstruments.
template <EngineSink Sink>
inline void MatchingEngine<Sink>::cancel_all_of(InstrumentId inst, ClientId client, CancelReason reason) noexcept {
  if (inst != kAllInstruments) return cancel_all_in(inst, client, reason);
  for (InstrumentId i = 0; i < books_.size(); ++i) {
    instrument_ = i;  // this instrument's outputs carry its id
    cancel_all_in(i, client, reason);
  }
}

template <EngineSink Sink>
inline void MatchingEngine<Sink>::cancel_all_in(InstrumentId inst, ClientId client, CancelReason reason) noexcept {
  OrderBook& b = *books_[inst];
  mass_cancel_scratch_.clear();
  for (const BookSide* side : {&b.bids, &b.asks})
    side->walk([&](const PriceLevel& lvl) {
      for (Order* o = lvl.head; o != nullptr; o = o->next)
        if (o->client() == client) mass_cancel_scratch_.push_back(o);
      return true;
    });
  if (mass_cancel_scratch_.empty()) return;
  std::sort(mass_cancel_scratch_.begin(), mass_cancel_scratch_.end(),
            [](const Order* x, const Order* y) { return x->order_id < y->order_id; });
  const Top before = top(b);
  for (Order* o : mass_cancel_scratch_) remove_resting(b, o, reason);
  emit_top_if_changed(b, before);
}

template <EngineSink Sink>
inline void MatchingEngine<Sink>::on_modify(const Request& rq) noexcept {
  Order* o = find_live_or_reject(rq, ReportType::kModifyRejected);
  if (o == nullptr) return;
  OrderBook& b = *books_[rq.instrument];
  RejectReason why;
  if ((why = check_qty(b, rq.qty)) != RejectReason::kNone || (why = check_price(b, rq.price)) != RejectReason::kNone)
    return reject(rq, ReportType::kModifyRejected, why);
  if (rq.price == o->price && rq.qty == o->order_qty)
    return reject(rq, ReportType::kModifyRejected, RejectReason::kModifyNoChange);
  BookSide& own = b.side(o->side);
  if (rq.price != o->price && !own.has_free_level() && own.find(rq.price) == nullptr)
    return reject(rq, ReportType::kModifyRejected, RejectReason::kLevelCapacity);

  const Top before = top(b);
  if (rq.qty <= o->cum_qty) {
    remove_resting(b, o, CancelReason::kModifyBelowFilled);
  } else if (rq.price == o->price && rq.qty < o->order_qty) {
    own.level(o->level).qty -= o->order_qty - rq.qty;
    o->order_qty = rq.qty;
    report(ReportType::kModified, *o, OrderType::kLimit);
    md_order(b, MdType::kModify, *o);
  } else {
    md_order(b, MdType::kDelete, *o);
    unlink(b, o);
    o->price = rq.price;
    o->order_qty = rq.qty;
    report(ReportType::kModified, *o, OrderType::kLimit);
    const MatchEnd end = match(b, *o, OrderType::kLimit, o->price);
    if (end == MatchEnd::kSelfTradeStop) {
      cancelled(*o, OrderType::kLimit, CancelReason::kSelfTrade);
      retire(b, o);
    } else if (o->open_qty() == 0) {
      retire(b, o);
    } else {
      rest(b, o);
    }
  }
  emit_top_if_changed(b, before);
}

}  // namespace nanotick::engine
