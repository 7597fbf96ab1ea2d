// The venue's pre-trade checks on one request (docs/CONTROLS.md "Pre-trade
// checks"), run on the engine's thread just before the engine sees it.
//
// Only a request the engine would otherwise take is checked: one of a
// client with an account, well formed (known instrument, a side, an order
// type, qty > 0 -- a malformed one goes on to the engine, which rejects it
// with its own reason). Cancels and mass cancels are never refused. In
// order, the first failing check names the reject:
//   new:     instrument permitted -> qty <= max_order_qty -> notional <=
//            max_notional -> limit price within the client's collar of the
//            last trade -> fewer than max_open_orders working -> buying power
//            (cash) -> for a sell, the position
//   modify:  of a working order only (else the engine answers): the same
//            quantity, notional, collar and buying-power checks on what the
//            order would hold after it, less what it holds now (a modify
//            that lowers the hold always passes them)
// Buying power and position are those of Accounts: cash - reserved_cash,
// position - reserved_sell + short_limit. A modify that passes tells the
// accounts what the order held before (note_modify), which its kModified
// report releases.
//
// Not thread-safe: the engine's thread. noexcept, no allocation.
#pragma once

#include <cstdint>

#include "controls/accounts.hpp"
#include "engine/request.hpp"

namespace nanotick::controls {

template <typename Engine>
engine::RejectReason pre_trade_check(Accounts& accounts, const Engine& engine, const engine::Request& rq) noexcept {
  using engine::RejectReason;
  using engine::RequestType;
  if (rq.type != RequestType::kNew && rq.type != RequestType::kModify) return RejectReason::kNone;
  const Accounts::Account* a = accounts.find(rq.client);
  if (a == nullptr)
    return accounts.accounts_required() && rq.client <= engine::kMaxClientId ? RejectReason::kNoAccount
                                                                             : RejectReason::kNone;
  if (rq.instrument >= accounts.instrument_count() || rq.qty <= 0) return RejectReason::kNone;
  const ClientLimits& lim = a->limits;
  const Accounts::Holding& h = a->holdings[rq.instrument];

  engine::Side side = rq.side;
  engine::OrderType type = rq.order_type;
  Money cash_held_now = 0;
  Qty sell_held_now = 0;
  Qty open_after = rq.qty;
  if (rq.type == RequestType::kNew) {
    if (side != engine::Side::kBuy && side != engine::Side::kSell) return RejectReason::kNone;
    if (static_cast<std::uint8_t>(type) - 1u > 3u) return RejectReason::kNone;
    if (!a->permitted[rq.instrument]) return RejectReason::kInstrumentNotPermitted;
  } else {
    const auto o = engine.resting_order(rq.instrument, rq.client, rq.client_order_id);
    if (!o) return RejectReason::kNone;  // not working: the engine answers
    side = o->side;
    type = engine::OrderType::kLimit;
    open_after = rq.qty - o->cum_qty;
    if (open_after <= 0) return RejectReason::kNone;  // a modify below the filled quantity cancels
    cash_held_now = accounts.cash_unit(rq.instrument, side, type, o->price) * o->open_qty;
    sell_held_now = side == engine::Side::kSell ? o->open_qty : 0;
  }

  if (lim.max_order_qty > 0 && rq.qty > lim.max_order_qty) return RejectReason::kClientQuantityLimit;
  const Price reserve_price = accounts.reserve_price(rq.instrument, side, type, rq.price);
  if (lim.max_notional > 0) {
    const Money notional = (reserve_price < 0 ? -Money{reserve_price} : Money{reserve_price}) * rq.qty;
    if (notional > lim.max_notional) return RejectReason::kClientNotionalLimit;
  }
  if (lim.collar > 0 && type != engine::OrderType::kMarket) {
    if (const auto last = engine.last_trade(rq.instrument)) {
      const Money d = Money{rq.price} - Money{*last};  // a request's price may be any int64
      if ((d < 0 ? -d : d) > lim.collar) return RejectReason::kClientCollar;
    }
  }
  if (rq.type == RequestType::kNew && lim.max_open_orders > 0 && a->working_orders >= lim.max_open_orders)
    return RejectReason::kTooManyOpenOrders;

  const Money cash_needed = accounts.cash_unit(rq.instrument, side, type, rq.price) * open_after - cash_held_now;
  if (cash_needed > 0 && a->cash - a->reserved_cash < cash_needed) return RejectReason::kInsufficientCash;
  if (side == engine::Side::kSell) {
    const Qty qty_needed = open_after - sell_held_now;
    if (qty_needed > 0 && h.position - h.reserved_sell + lim.short_limit < qty_needed)
      return RejectReason::kInsufficientPosition;
  }
  if (rq.type == RequestType::kModify) accounts.note_modify(cash_held_now, sell_held_now);
  return RejectReason::kNone;
}

}  // namespace nanotick::controls
