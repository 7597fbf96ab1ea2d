#include "workload/book_model.hpp"

#include <algorithm>
#include <stdexcept>

#include "workload/rng.hpp"

namespace nanotick::workload {

using engine::OrderType;
using engine::Price;
using engine::Qty;
using engine::Side;

namespace {
constexpr std::size_t kFinishedMemory = 256;
}  // namespace

BookModel::BookModel(std::size_t instruments, GenStats& stats)
    : stats_(stats),
      books_(instruments),
      live_(instruments),
      finished_(instruments),
      finished_next_(instruments, 0),
      peak_live_(instruments, 0),
      peak_levels_(instruments, 0) {}

BookModel::Key BookModel::random_live(engine::InstrumentId instrument, Rng& rng) const {
  const auto& keys = live_[instrument];
  return keys[rng.below(keys.size())];
}

std::optional<BookModel::Key> BookModel::recent_finished(engine::InstrumentId instrument, Rng& rng) const {
  const auto& ring = finished_[instrument];
  if (ring.empty()) return std::nullopt;
  return ring[rng.below(ring.size())];
}

std::optional<Price> BookModel::best(engine::InstrumentId instrument, Side side) const {
  const Book& book = books_[instrument];
  if (side == Side::kBuy) {
    if (book.bids.empty()) return std::nullopt;
    return book.bids.begin()->first;
  }
  if (book.asks.empty()) return std::nullopt;
  return book.asks.begin()->first;
}

void BookModel::apply_new(const engine::Request& r) {
  const Key key = key_of(r.client, r.client_order_id);
  if (orders_.count(key) != 0) throw std::logic_error("book model: new order reuses a live id");
  Qty open = r.qty;
  switch (r.order_type) {
    case OrderType::kLimit:
    case OrderType::kIoc: open = match(r.instrument, r.side, r.price, open); break;
    case OrderType::kMarket: open = match(r.instrument, r.side, std::nullopt, open); break;
    case OrderType::kFok:
      if (available(r.instrument, r.side, r.price, r.qty) >= r.qty) open = match(r.instrument, r.side, r.price, open);
      break;
  }
  if (open > 0 && r.order_type == OrderType::kLimit) {
    rest(key, Order{r.instrument, r.client, r.client_order_id, r.side, r.price, r.qty, r.qty - open, false, 0, {}});
    ++stats_.rested;
    return;
  }
  // Done without resting: remembered as finished, like the engine does.
  orders_.emplace(key, Order{r.instrument, r.client, r.client_order_id, r.side, r.price, r.qty, 0, false, 0, {}});
  finish(key, false, false);
}

void BookModel::apply_cancel(Key key) {
  unlink(key);
  finish(key, true, true);
}

void BookModel::apply_modify(Key key, Price price, Qty total_qty) {
  Order& o = orders_.at(key);
  if (!o.modified) {
    o.modified = true;
    ++stats_.rested_modified;
  }
  if (total_qty <= o.filled) {
    apply_cancel(key);
    return;
  }
  if (price == o.price && total_qty < o.order_qty) {
    o.order_qty = total_qty;  // keeps its place
    return;
  }
  unlink(key);
  Order moved = o;
  moved.price = price;
  moved.order_qty = total_qty;
  const Qty open = match(moved.instrument, moved.side, price, total_qty - moved.filled);
  moved.filled = total_qty - open;
  if (open > 0) {
    orders_.erase(key);
    rest(key, moved);
  } else {
    finish(key, true, false);
  }
}

Qty BookModel::match(engine::InstrumentId instrument, Side side, std::optional<Price> limit, Qty qty) {
  Book& book = books_[instrument];
  auto walk = [&](auto& opposite, auto crosses) {
    while (qty > 0 && !opposite.empty()) {
      auto level = opposite.begin();
      if (limit && !crosses(level->first, *limit)) break;
      const Price price = level->first;
      bool level_gone = false;
      while (qty > 0 && !level_gone) {
        const Key maker_key = level->second.front();
        Order& maker = orders_.at(maker_key);
        const Qty traded = std::min(qty, maker.order_qty - maker.filled);
        qty -= traded;
        maker.filled += traded;
        ++stats_.trades;
        if (stats_.trades == 1 || price < stats_.min_trade_price) stats_.min_trade_price = price;
        if (stats_.trades == 1 || price > stats_.max_trade_price) stats_.max_trade_price = price;
        if (maker.filled == maker.order_qty) {
          level_gone = level->second.size() == 1;  // unlink erases an emptied level
          unlink(maker_key);
          finish(maker_key, true, false);
        }
      }
    }
  };
  if (side == Side::kBuy) {
    walk(book.asks, [](Price ask, Price lim) { return ask <= lim; });
  } else {
    walk(book.bids, [](Price bid, Price lim) { return bid >= lim; });
  }
  return qty;
}

Qty BookModel::available(engine::InstrumentId instrument, Side side, Price limit, Qty wanted) const {
  const Book& book = books_[instrument];
  Qty sum = 0;
  auto add = [&](const auto& opposite, auto crosses) {
    for (const auto& [price, level] : opposite) {
      if (!crosses(price) || sum >= wanted) break;
      for (const Key k : level) {
        const Order& o = orders_.at(k);
        sum += o.order_qty - o.filled;
      }
    }
  };
  if (side == Side::kBuy) {
    add(book.asks, [&](Price ask) { return ask <= limit; });
  } else {
    add(book.bids, [&](Price bid) { return bid >= limit; });
  }
  return sum;
}

void BookModel::rest(Key key, Order order) {
  Book& book = books_[order.instrument];
  std::size_t levels = 0;
  Level* level = nullptr;
  if (order.side == Side::kBuy) {
    level = &book.bids[order.price];
    levels = book.bids.size();
  } else {
    level = &book.asks[order.price];
    levels = book.asks.size();
  }
  level->push_back(key);
  order.queue_pos = std::prev(level->end());
  auto& live = live_[order.instrument];
  order.live_index = live.size();
  live.push_back(key);
  peak_live_[order.instrument] = std::max<std::uint64_t>(peak_live_[order.instrument], live.size());
  peak_levels_[order.instrument] = std::max<std::uint64_t>(peak_levels_[order.instrument], levels);
  stats_.peak_live_orders = std::max<std::uint64_t>(stats_.peak_live_orders, live.size());
  stats_.peak_levels = std::max<std::uint64_t>(stats_.peak_levels, levels);
  orders_.insert_or_assign(key, order);
}

void BookModel::unlink(Key key) {
  Order& o = orders_.at(key);
  Book& book = books_[o.instrument];
  auto erase_from = [&](auto& side) {
    auto it = side.find(o.price);
    it->second.erase(o.queue_pos);
    if (it->second.empty()) side.erase(it);
  };
  if (o.side == Side::kBuy) {
    erase_from(book.bids);
  } else {
    erase_from(book.asks);
  }
  auto& live = live_[o.instrument];
  const Key last = live.back();
  live[o.live_index] = last;
  orders_.at(last).live_index = o.live_index;
  live.pop_back();
}

void BookModel::finish(Key key, bool rested, bool cancelled) {
  const engine::InstrumentId instrument = orders_.at(key).instrument;
  orders_.erase(key);
  if (rested) {
    if (cancelled) {
      ++stats_.rested_cancelled;
    } else {
      ++stats_.rested_filled;
    }
  }
  auto& ring = finished_[instrument];
  if (ring.size() < kFinishedMemory) {
    ring.push_back(key);
  } else {
    ring[finished_next_[instrument]] = key;
    finished_next_[instrument] = (finished_next_[instrument] + 1) % kFinishedMemory;
  }
}

}  // namespace nanotick::workload
