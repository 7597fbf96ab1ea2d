// Everything the engine keeps for one instrument: its configuration, two book
// sides, its pool of resting orders, its finished-order memory, its last
// trade price and its own market data sequence number. Not thread-safe: the
// engine's thread owns it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/object_pool.hpp"
#include "engine/book_side.hpp"
#include "engine/finished_orders.hpp"
#include "engine/order.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

struct OrderBook {
  OrderBook(const InstrumentConfig& cfg, InstrumentId id)
      : instrument(id),
        tick_size(cfg.tick_size),
        min_price(cfg.min_price),
        max_price(cfg.max_price),
        collar(cfg.collar),
        max_order_qty(cfg.max_order_qty),
        bids(Side::kBuy, cfg.max_levels),
        asks(Side::kSell, cfg.max_levels),
        orders(cfg.max_orders),
        finished(cfg.max_orders) {}

  NT_ALWAYS_INLINE BookSide& side(Side s) noexcept { return s == Side::kBuy ? bids : asks; }
  NT_ALWAYS_INLINE const BookSide& side(Side s) const noexcept { return s == Side::kBuy ? bids : asks; }

  // Checks this book's own structures; throws std::logic_error naming the
  // broken invariant. Returns the number of orders found in the levels.
  std::size_t validate() const {
    std::size_t total = 0;
    for (const BookSide* s : {&bids, &asks}) {
      if (const char* what = s->inconsistency()) fail(what);
      std::uint32_t levels = 0;
      s->walk([&](const PriceLevel& lvl) {
        ++levels;
        if (lvl.orders == 0) fail("non-empty level counts no orders");
        if (lvl.price < min_price || lvl.price > max_price || lvl.price % tick_size != 0)
          fail("level price outside the band or off tick");
        Qty qty = 0;
        std::uint32_t count = 0;
        const Order* prev = nullptr;
        for (const Order* o = lvl.head; o != nullptr; o = o->next) {
          if (o->prev != prev) fail("broken FIFO back link");
          if (o->price != lvl.price || o->side != s->side() || !orders.owns(o))
            fail("order in the wrong level, side or instrument");
          if (o->cum_qty < 0 || o->open_qty() <= 0 || o->order_qty > max_order_qty)
            fail("resting order with a bad quantity");
          if (&s->level(o->level) != &lvl) fail("order's level index is stale");
          qty += o->open_qty();
          ++count;
          prev = o;
        }
        if (lvl.tail != prev) fail("level tail is not the last order");
        if (qty != lvl.qty) fail("level quantity differs from the sum of its orders");
        if (count != lvl.orders) fail("level order count differs from its queue");
        total += count;
        return true;
      });
      if (levels != s->size()) fail("non-empty level count differs from the side's count");
    }
    if (bids.best() != nullptr && asks.best() != nullptr && bids.best()->price >= asks.best()->price)
      fail("book is crossed");
    if (total != orders.in_use()) fail("order pool use differs from the orders in the book");
    if (const char* what = finished.inconsistency()) fail(what);
    return total;
  }

  // Bytes allocated for one instrument with `cfg` (without the engine-wide
  // live-order index).
  static std::size_t bytes_for(const InstrumentConfig& cfg) {
    return sizeof(OrderBook) + 2 * BookSide::bytes_for(cfg.max_levels) +
           std::size_t{cfg.max_orders} * core::ObjectPool<Order>::slot_size() +
           FinishedOrders::bytes_for(cfg.max_orders);
  }

  [[noreturn]] void fail(const char* what) const {
    throw std::logic_error("instrument " + std::to_string(instrument) + ": " + what);
  }

  InstrumentId instrument;
  Price tick_size;
  Price min_price;
  Price max_price;
  Price collar;
  Qty max_order_qty;
  Price last_trade = 0;
  bool has_last_trade = false;
  Seq md_seq = 0;  // last MdEvent::instrument_seq of this instrument (0: none yet)
  BookSide bids;
  BookSide asks;
  core::ObjectPool<Order> orders;
  FinishedOrders finished;
};

}  // namespace nanotick::engine
