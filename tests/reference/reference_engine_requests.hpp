// The reference engine's matching (price-time, self-trade prevention, FOK,
// the market order's collar) and its requests (new, cancel, mass cancel,
// modify), written for clarity, not speed: member functions of
// ReferenceEngine (reference/reference_engine.hpp), defined out of the class.
// Included at the end of that header: include it, not this one.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "reference/reference_engine.hpp"

namespace nanotick::reference {

// ---- matching ------------------------------------------------------------

// May `taker` trade with a resting order at `maker_price`? `last_before` is
// the last trade before the request started (the market order's collar).
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::crosses(const Book& b, const Order& taker, Price maker_price,
                                    std::optional<Price> last_before) -> bool {
  if (taker.type == OrderType::kMarket) {
    if (b.config.collar == 0 || !last_before.has_value()) return true;
    return taker.side == Side::kBuy ? maker_price - *last_before <= b.config.collar
                                    : *last_before - maker_price <= b.config.collar;
  }
  return taker.side == Side::kBuy ? maker_price <= taker.price : maker_price >= taker.price;
}

// The FOK walk: what the taker could trade (stops counting once it is enough).
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::fok_available(const Book& b, const Order& taker, std::optional<Price> last_before) -> Qty {
  Qty sum = 0;
  for (const Level* level : levels_in_priority(b, engine::opposite(taker.side))) {
    if (!crosses(b, taker, level->price, last_before)) return sum;
    for (const Order& maker : level->orders) {
      if (maker.client == taker.client && taker.stp != StpMode::kNone) {
        if (taker.stp == StpMode::kCancelResting) continue;
        return sum;
      }
      sum += maker.open();
      if (sum >= taker.order_qty) return sum;
    }
  }
  return sum;
}

// Matches `taker` against the opposite side. Returns true when self-trade
// prevention cancelled the taker's remainder (already reported).
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::match(Book& b, Order& taker, std::optional<Price> last_before) -> bool {
  const Side maker_side = engine::opposite(taker.side);
  while (taker.open() > 0) {
    Level* level = best_level(b, maker_side);
    if (level == nullptr || !crosses(b, taker, level->price, last_before)) return false;
    Order& maker = level->orders.front();
    if (maker.client == taker.client && taker.stp != StpMode::kNone) {
      if (taker.stp == StpMode::kCancelResting || taker.stp == StpMode::kCancelBoth) {
        const Order gone = remove_resting(b, maker.id, maker.side, maker.price);
        report_cancelled(gone, CancelReason::kSelfTrade);
        md_order(MdType::kDelete, gone, gone.open());
        remember_finished(b, gone);
      }
      if (taker.stp == StpMode::kCancelIncoming || taker.stp == StpMode::kCancelBoth) {
        report_cancelled(taker, CancelReason::kSelfTrade);
        return true;
      }
      continue;
    }
    const Qty qty = std::min(taker.open(), maker.open());
    const Price price = maker.price;
    taker.cum_qty += qty;
    maker.cum_qty += qty;
    report_fill(taker, price, qty, maker.id, false);
    report_fill(maker, price, qty, taker.id, true);
    engine::MdEvent trade = md(MdType::kTrade);
    trade.side = taker.side;
    trade.order_id = maker.id;
    trade.contra_order_id = taker.id;
    trade.price = price;
    trade.qty = qty;
    sink_.on_market_data(trade);
    b.last_trade = price;
    if (maker.open() == 0) {
      const Order done = remove_resting(b, maker.id, maker.side, maker.price);
      remember_finished(b, done);
    }
  }
  return false;
}

// After matching: rest a limit remainder, cancel an IOC/market remainder,
// remember a finished order.
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::finish_incoming(Book& b, const Order& o, bool stp_cancelled) -> void {
  if (!stp_cancelled && o.open() > 0) {
    if (o.type == OrderType::kLimit) {
      rest(b, o);
      return;
    }
    report_cancelled(o, CancelReason::kIocResidual);
  }
  remember_finished(b, o);
}

// ---- requests ------------------------------------------------------------

template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::on_new(Book& b) -> void {
  if (auto bad = validate_new(b)) {
    reject(ReportType::kRejected, *bad);
    return;
  }
  const Request& r = request_;
  Order o{++last_order_id_,
          r.instrument,
          r.client,
          r.client_order_id,
          r.side,
          r.order_type,
          r.stp,
          r.order_type == OrderType::kMarket ? Price{0} : r.price,
          r.qty,
          0};
  report_order(ReportType::kAccepted, o);
  const std::optional<Price> last_before = b.last_trade;
  if (o.type == OrderType::kFok && fok_available(b, o, last_before) < o.order_qty) {
    report_cancelled(o, CancelReason::kFokUnfillable);
    remember_finished(b, o);
    return;
  }
  const bool stp_cancelled = match(b, o, last_before);
  finish_incoming(b, o, stp_cancelled);
}

// Steps 1-4 for a cancel/modify, then the live lookup. nullopt: rejected.
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::find_target(const Book& b) -> std::optional<Location> {
  if (request_.reserved != 0) {
    reject(reject_type(), RejectReason::kReservedNotZero);
    return std::nullopt;
  }
  if (auto bad = check_ids()) {
    reject(reject_type(), *bad);
    return std::nullopt;
  }
  const Key k = key(request_.client, request_.client_order_id);
  const auto it = live_.find(k);
  if (it == live_.end() || it->second.instrument != request_.instrument) {
    const bool finished = b.finished_current.contains(k) || b.finished_previous.contains(k);
    reject(reject_type(), finished ? RejectReason::kTooLateToCancel : RejectReason::kUnknownOrder);
    return std::nullopt;
  }
  return it->second;
}

template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::on_cancel(Book& b) -> void {
  const std::optional<Location> loc = find_target(b);
  if (!loc) return;
  const Order gone = remove_resting(b, loc->order_id, loc->side, loc->price);
  report_cancelled(gone, CancelReason::kUserRequest);
  md_order(MdType::kDelete, gone, gone.open());
  remember_finished(b, gone);
}

// docs/MATCHING.md "Mass cancel": checks in order (instrument unless all,
// client id, every other field zero), then per instrument in id order the
// client's resting orders cancelled by order id, then its top of book.
template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::on_mass_cancel() -> void {
  const bool all = request_.instrument == engine::kAllInstruments;
  std::optional<RejectReason> bad;
  if (!all && request_.instrument >= books_.size()) bad = RejectReason::kUnknownInstrument;
  else if (request_.client > engine::kMaxClientId) bad = RejectReason::kInvalidClientId;
  else if (request_.reserved != 0 || request_.client_order_id != 0 || request_.price != 0 || request_.qty != 0)
    bad = RejectReason::kReservedNotZero;
  if (bad) return reject(ReportType::kCancelRejected, *bad);
  const InstrumentId first = all ? 0 : request_.instrument;
  const InstrumentId last = all ? static_cast<InstrumentId>(books_.size()) : request_.instrument + 1;
  for (InstrumentId i = first; i < last; ++i) {
    request_.instrument = i;  // this instrument's outputs carry its id
    Book& b = books_[i];
    std::vector<Order> mine;
    for (const auto* side_levels : {&b.bids, &b.asks})
      for (const auto& [price, level] : *side_levels)
        for (const Order& o : level.orders)
          if (o.client == request_.client) mine.push_back(o);
    std::sort(mine.begin(), mine.end(), [](const Order& x, const Order& y) { return x.id < y.id; });
    const Top before = top(b);
    for (const Order& o : mine) {
      const Order gone = remove_resting(b, o.id, o.side, o.price);
      report_cancelled(gone, CancelReason::kMassCancel);
      md_order(MdType::kDelete, gone, gone.open());
      remember_finished(b, gone);
    }
    publish_top_if_changed(b, before);
  }
}

template <engine::EngineSink Sink>
auto ReferenceEngine<Sink>::on_modify(Book& b) -> void {
  const std::optional<Location> loc = find_target(b);
  if (!loc) return;
  const Order current = *find_live(b, *loc);
  const Price new_price = request_.price;
  const Qty new_total = request_.qty;
  std::optional<RejectReason> bad = check_qty(b, new_total);
  if (!bad) bad = check_price(b, new_price);
  if (!bad && new_price == current.price && new_total == current.order_qty) {
    bad = RejectReason::kModifyNoChange;
  }
  const auto& own = levels(b, current.side);
  if (!bad && new_price != current.price && !own.contains(new_price) && own.size() >= b.config.max_levels) {
    bad = RejectReason::kLevelCapacity;
  }
  if (bad) {
    reject(ReportType::kModifyRejected, *bad);
    return;
  }
  if (new_total <= current.cum_qty) {
    const Order gone = remove_resting(b, current.id, current.side, current.price);
    report_cancelled(gone, CancelReason::kModifyBelowFilled);
    md_order(MdType::kDelete, gone, gone.open());
    remember_finished(b, gone);
    return;
  }
  if (new_price == current.price && new_total < current.order_qty) {
    Order& in_place = *find_live(b, *loc);
    in_place.order_qty = new_total;
    report_order(ReportType::kModified, in_place);
    md_order(MdType::kModify, in_place, in_place.open());
    return;
  }
  Order moved = remove_resting(b, current.id, current.side, current.price);
  md_order(MdType::kDelete, moved, moved.open());
  moved.price = new_price;
  moved.order_qty = new_total;
  report_order(ReportType::kModified, moved);
  const bool stp_cancelled = match(b, moved, b.last_trade);
  finish_incoming(b, moved, stp_cancelled);
}

}  // namespace nanotick::reference
