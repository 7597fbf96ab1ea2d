// The generators' own model of the books: just enough of docs/MATCHING.md
// (price-time priority, trades at the maker's price, limit/IOC/FOK/market,
// cancel, modify; no self-trade prevention, no collar) to know which orders
// are live when choosing what to cancel or modify, and to measure the shape of
// the generated flow. Written for clarity; std containers. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/request.hpp"
#include "workload/generators.hpp"

namespace nanotick::workload {

class Rng;

class BookModel {
 public:
  using Key = std::uint64_t;  // client << 48 | client_order_id
  static Key key_of(engine::ClientId client, engine::ClientOrderId id) noexcept {
    return (std::uint64_t{client} << 48) | id;
  }

  struct Order {
    engine::InstrumentId instrument;
    engine::ClientId client;
    engine::ClientOrderId client_order_id;
    engine::Side side;
    engine::Price price;
    engine::Qty order_qty;  // total
    engine::Qty filled;
    bool modified = false;
    std::size_t live_index = 0;          // position in live_[instrument]
    std::list<Key>::iterator queue_pos;  // position in its level
  };

  BookModel(std::size_t instruments, GenStats& stats);

  // Applies a request the generator emits. New orders must be valid and use a
  // fresh client order id; cancel/modify must name a live order.
  void apply_new(const engine::Request& request);
  void apply_cancel(Key key);
  void apply_modify(Key key, engine::Price price, engine::Qty total_qty);

  bool is_live(Key key) const { return orders_.count(key) != 0; }
  const Order& order(Key key) const { return orders_.at(key); }
  std::size_t live_count(engine::InstrumentId instrument) const { return live_[instrument].size(); }
  // Uniformly random live order of the instrument (requires live_count > 0).
  Key random_live(engine::InstrumentId instrument, Rng& rng) const;
  // All live orders of an instrument (arbitrary but deterministic order).
  const std::vector<Key>& live(engine::InstrumentId instrument) const { return live_[instrument]; }
  // A recently finished order of the instrument, if any (for late cancels).
  std::optional<Key> recent_finished(engine::InstrumentId instrument, Rng& rng) const;

  std::optional<engine::Price> best(engine::InstrumentId instrument, engine::Side side) const;
  std::size_t level_count(engine::InstrumentId instrument, engine::Side side) const {
    return side == engine::Side::kBuy ? books_[instrument].bids.size() : books_[instrument].asks.size();
  }
  std::uint64_t peak_live(engine::InstrumentId instrument) const { return peak_live_[instrument]; }
  std::uint64_t peak_levels(engine::InstrumentId instrument) const { return peak_levels_[instrument]; }

 private:
  using Level = std::list<Key>;
  struct Book {
    std::map<engine::Price, Level, std::greater<>> bids;
    std::map<engine::Price, Level> asks;
  };

  // Trades `qty` of an incoming `side` order against the opposite side up to
  // `limit` (nullopt: market); returns the quantity left.
  engine::Qty match(engine::InstrumentId instrument, engine::Side side, std::optional<engine::Price> limit,
                    engine::Qty qty);
  engine::Qty available(engine::InstrumentId instrument, engine::Side side, engine::Price limit,
                        engine::Qty wanted) const;
  void rest(Key key, Order order);
  void unlink(Key key);  // removes from level and live list, not from orders_
  void finish(Key key, bool rested, bool cancelled);

  GenStats& stats_;
  std::vector<Book> books_;
  std::unordered_map<Key, Order> orders_;
  std::vector<std::vector<Key>> live_;
  std::vector<std::vector<Key>> finished_;  // ring of recent finished keys per instrument
  std::vector<std::size_t> finished_next_;
  std::vector<std::uint64_t> peak_live_;
  std::vector<std::uint64_t> peak_levels_;
};

}  // namespace nanotick::workload
