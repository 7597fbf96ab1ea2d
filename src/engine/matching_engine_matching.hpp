// The matching engine's matching: price-time matching of an incoming order
// against the opposite side with self-trade prevention, the FOK pre-check, the
// market order's bound, and resting, unlinking and retiring orders. Member
// functions of MatchingEngine (engine/matching_engine.hpp), defined out of the
// class and `inline` as they were inside it. Included at the end of
// engine/matching_engine.hpp: include that header, not this one.
#pragma once

#include <algorithm>

#include "engine/matching_engine.hpp"

namespace nanotick::engine {

// A market order's bound: the collar around the last trade before this
// request, else the band (every resting price is inside it).
template <EngineSink Sink>
inline Price MatchingEngine<Sink>::market_limit(const OrderBook& b, Side side) noexcept {
  const bool collared = b.collar > 0 && b.has_last_trade;
  if (side == Side::kBuy) {
    if (!collared || b.collar >= b.max_price - b.last_trade) return b.max_price;
    return b.last_trade + b.collar;
  }
  if (!collared || b.collar >= b.last_trade - b.min_price) return b.min_price;
  return b.last_trade - b.collar;
}
template <EngineSink Sink>
NT_ALWAYS_INLINE bool MatchingEngine<Sink>::crosses(Side taker, Price maker_price, Price limit) noexcept {
  return taker == Side::kBuy ? maker_price <= limit : maker_price >= limit;
}

// What a FOK could trade: the matching walk without side effects.
template <EngineSink Sink>
inline Qty MatchingEngine<Sink>::fok_available(const OrderBook& b, const Order& in, Price limit) noexcept {
  const BookSide& opp = b.side(opposite(in.side));
  const ClientId client = in.client();
  Qty sum = 0;
  opp.walk([&](const PriceLevel& lvl) {
    if (!crosses(in.side, lvl.price, limit)) return false;
    for (const Order* o = lvl.head; o != nullptr; o = o->next) {
      if (o->client() == client && in.stp != StpMode::kNone) {
        if (in.stp == StpMode::kCancelResting) continue;
        return false;  // the walk ends at an own order
      }
      sum += o->open_qty();
      if (sum >= in.order_qty) return false;
    }
    return true;
  });
  return sum;
}

// Trades `in` against the opposite side while it has open quantity and the
// best level crosses `limit`; applies self-trade prevention with in.stp.
template <EngineSink Sink>
inline auto MatchingEngine<Sink>::match(OrderBook& b, Order& in, OrderType type, Price limit) noexcept -> MatchEnd {
  BookSide& opp = b.side(opposite(in.side));
  const ClientId client = in.client();
  while (in.open_qty() > 0) {
    PriceLevel* lvl = opp.best();
    if (lvl == nullptr || !crosses(in.side, lvl->price, limit)) break;
    Order* maker = lvl->head;
    if (maker->client() == client && in.stp != StpMode::kNone) [[unlikely]] {
      if (in.stp == StpMode::kCancelIncoming) return MatchEnd::kSelfTradeStop;
      remove_resting(b, maker, CancelReason::kSelfTrade);
      if (in.stp == StpMode::kCancelBoth) return MatchEnd::kSelfTradeStop;
      continue;
    }
    const Qty q = std::min(in.open_qty(), maker->open_qty());
    const Price px = maker->price;
    in.cum_qty += q;
    maker->cum_qty += q;
    lvl->qty -= q;
    fill(in, type, px, q, maker->order_id, false);
    fill(*maker, OrderType::kLimit, px, q, in.order_id, true);
    md(b, [&](MdEvent& m) NT_LAMBDA_INLINE_NOEXCEPT {
      m.type = MdType::kTrade;
      m.side = in.side;
      m.order_id = maker->order_id;
      m.contra_order_id = in.order_id;
      m.price = px;
      m.qty = q;
    });
    b.last_trade = px;
    b.has_last_trade = true;
    if (maker->open_qty() == 0) {
      lvl->head = maker->next;  // the maker is the level's head
      if (lvl->head != nullptr) {
        lvl->head->prev = nullptr;
      } else {
        lvl->tail = nullptr;
      }
      --lvl->orders;
      if (lvl->head == nullptr) opp.level_emptied(maker->level);
      retire(b, maker);
    }
  }
  return MatchEnd::kNoMore;
}

// ---- book maintenance ------------------------------------------------------
template <EngineSink Sink>
inline void MatchingEngine<Sink>::rest(OrderBook& b, Order* o) noexcept {
  BookSide& s = b.side(o->side);
  o->level = s.find_or_insert(o->price);
  s.level(o->level).push_back(o);
  md_order(b, MdType::kAdd, *o);
}
// Takes `o` out of its level (removing the level if it empties).
template <EngineSink Sink>
NT_ALWAYS_INLINE void MatchingEngine<Sink>::unlink(OrderBook& b, Order* o) noexcept {
  BookSide& s = b.side(o->side);
  PriceLevel& lvl = s.level(o->level);
  lvl.unlink(o);
  if (lvl.empty()) s.level_emptied(o->level);
  o->level = kNoLevel;
}
// The order is done: out of the live index, into the finished memory, slot freed.
template <EngineSink Sink>
NT_ALWAYS_INLINE void MatchingEngine<Sink>::retire(OrderBook& b, Order* o) noexcept {
  live_.erase(o->key);
  b.finished.add(o->key);
  b.orders.release(o);
}
// Cancels a resting order: kCancelled, market data kDelete, gone.
template <EngineSink Sink>
inline void MatchingEngine<Sink>::remove_resting(OrderBook& b, Order* o, CancelReason why) noexcept {
  cancelled(*o, OrderType::kLimit, why);
  md_order(b, MdType::kDelete, *o);
  unlink(b, o);
  retire(b, o);
}

}  // namespace nanotick::engine
