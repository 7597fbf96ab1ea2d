// Peer order books for the engine benchmark: the textbook way to write a
// price-time book with the standard library, so the fast engine is measured
// beside what a careful programmer writes first.
//
//   MapPeerBook<Sink>        levels: std::map<price, std::list<order>> per side;
//                            order index: std::map<key, locator>
//   UnorderedPeerBook<Sink>  the same levels; order index: std::unordered_map
//
// Semantics: the subset of docs/MATCHING.md that every peer supports --
// limit, IOC, FOK and market orders with price-time priority and trades at the
// maker's price; cancel; modify as cancel + new (always loses priority; the
// filled quantity is kept, so `qty` stays the new TOTAL). Validation covers
// what keeps the book sane (instrument, side, type, quantity, tick, band,
// duplicate live id). Out of scope for these peers: self-trade prevention (same-client
// orders trade, as with StpMode::kNone), the collar, capacities, reports and
// market data (fills go to the sink, nothing else is emitted).
//
// Not thread-safe: one thread owns a book. Allocates on every insert (that is
// the point of the comparison).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <unordered_map>
#include <vector>

#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::bench {

// One trade, as every peer (and the engine, through its fill reports) sees it:
// orders are named by their client key, so streams from different books compare.
struct PeerFill {
  engine::InstrumentId instrument;
  std::uint64_t maker_key;
  std::uint64_t taker_key;
  engine::Price price;
  engine::Qty qty;
  friend bool operator==(const PeerFill&, const PeerFill&) = default;
};

template <typename S>
concept PeerFillSink = requires(S& s, const PeerFill& f) { s.on_fill(f); };

// A sink that also wants to hear, at the point in the flow where the engine
// reports it, that a new order was accepted or a modify applied (before the
// fills either may cause): regime_bench's report set.
template <typename S>
concept PeerAckSink = requires(S& s, std::uint64_t key, engine::Price price, engine::Qty qty) {
  s.on_accepted(key, price, qty);
  s.on_modified(key, price, qty);
};

// Counts fills and sums their quantity (so the work cannot be optimised away).
struct CountingFillSink {
  std::uint64_t fills = 0;
  std::int64_t qty = 0;
  void on_fill(const PeerFill& f) noexcept {
    ++fills;
    qty += f.qty;
  }
};

// Keeps every fill, for tests.
struct CollectingFillSink {
  std::vector<PeerFill> fills;
  void on_fill(const PeerFill& f) { fills.push_back(f); }
};

// (client, client order id) packed as the engine packs it: both are bounded
// (kMaxClientId, kMaxClientOrderId), so the key is unique.
constexpr std::uint64_t order_key(engine::ClientId client, engine::ClientOrderId id) noexcept {
  return (std::uint64_t{client} << 48) | id;
}

// What a peer did with one request (the benchmark counts them to check that
// every book saw the same kind of work).
enum class PeerResult : std::uint8_t {
  kDone,          // new order finished without resting (filled, IOC/FOK/market residual)
  kRested,        // new or modified order rests (possibly after fills)
  kCancelled,     // cancel (or modify below filled) removed a live order
  kRejected,      // invalid request or duplicate live id
  kUnknownOrder,  // cancel/modify of an order that is not live
};

// A request to the peer book's handler of its kind (the peers' process()).
template <typename Peer>
PeerResult dispatch_to_peer(Peer& peer, const engine::Request& r) {
  switch (r.type) {
    case engine::RequestType::kNew: return peer.on_new(r);
    case engine::RequestType::kCancel: return peer.on_cancel(r);
    case engine::RequestType::kModify: return peer.on_modify(r);
    case engine::RequestType::kMassCancel: break;  // the venue's request: in no workload a peer replays
    default: break;                                // admin requests: the venue's controls', not a book's
  }
  return PeerResult::kRejected;
}

// Shared validation of a new order's fields against its instrument.
inline bool peer_new_order_valid(const engine::Request& r, const std::vector<engine::InstrumentConfig>& instruments) {
  using engine::OrderType;
  using engine::Side;
  if (r.instrument >= instruments.size()) return false;
  if (r.side != Side::kBuy && r.side != Side::kSell) return false;
  if (r.order_type < OrderType::kLimit || r.order_type > OrderType::kMarket) return false;
  const engine::InstrumentConfig& ic = instruments[r.instrument];
  if (r.qty <= 0 || r.qty > ic.max_order_qty) return false;
  if (r.order_type == OrderType::kMarket) return true;
  return r.price % ic.tick_size == 0 && r.price >= ic.min_price && r.price <= ic.max_price;
}

template <template <typename...> class IndexMap, PeerFillSink Sink>
class StdPeerBook {
  struct Order {
    std::uint64_t key;
    engine::Qty open;
    engine::Qty filled;  // kept across modifies: `qty` of a modify is the new total
  };
  using Level = std::list<Order>;
  using Bids = std::map<engine::Price, Level, std::greater<>>;
  using Asks = std::map<engine::Price, Level, std::less<>>;
  struct Book {
    Bids bids;
    Asks asks;
  };
  struct Locator {
    engine::InstrumentId instrument;
    engine::Side side;
    engine::Price price;
    typename Level::iterator it;
  };

 public:
  StdPeerBook(const engine::EngineConfig& config, Sink& sink)
      : instruments_(config.instruments), books_(config.instruments.size()), sink_(sink) {}

  PeerResult process(const engine::Request& r) { return dispatch_to_peer(*this, r); }

  std::size_t live_orders() const { return index_.size(); }

  // Visits (key, price, open qty) of one side's orders in priority order: best
  // price first, FIFO within a level.
  template <typename F>
  void for_each_order(engine::InstrumentId instrument, engine::Side side, F&& fn) const {
    const Book& b = books_[instrument];
    const auto visit = [&](const auto& levels) {
      for (const auto& [price, level] : levels) {
        for (const Order& o : level) fn(o.key, price, o.open);
      }
    };
    if (side == engine::Side::kBuy) {
      visit(b.bids);
    } else {
      visit(b.asks);
    }
  }

  // Best price and total quantity of one side; false when empty.
  bool best(engine::InstrumentId instrument, engine::Side side, engine::Price& price, engine::Qty& qty) const {
    const Book& b = books_[instrument];
    return side == engine::Side::kBuy ? best_of(b.bids, price, qty) : best_of(b.asks, price, qty);
  }

 private:
  template <typename Peer>
  friend PeerResult dispatch_to_peer(Peer&, const engine::Request&);
  template <typename Levels>
  static bool best_of(const Levels& levels, engine::Price& price, engine::Qty& qty) {
    if (levels.empty()) return false;
    price = levels.begin()->first;
    qty = 0;
    for (const Order& o : levels.begin()->second) qty += o.open;
    return true;
  }

  PeerResult on_new(const engine::Request& r) {
    if (!peer_new_order_valid(r, instruments_)) return PeerResult::kRejected;
    const std::uint64_t key = order_key(r.client, r.client_order_id);
    if (index_.find(key) != index_.end()) return PeerResult::kRejected;
    Book& b = books_[r.instrument];
    const bool market = r.order_type == engine::OrderType::kMarket;
    if constexpr (PeerAckSink<Sink>) sink_.on_accepted(key, market ? 0 : r.price, r.qty);
    if (r.side == engine::Side::kBuy) {
      return enter(r.instrument, key, r.side, r.order_type, market, r.price, r.qty, 0, b.asks, b.bids);
    }
    return enter(r.instrument, key, r.side, r.order_type, market, r.price, r.qty, 0, b.bids, b.asks);
  }

  // Matches `open` against `contra`, then rests a limit order's remainder in `own`.
  template <typename Contra, typename Own>
  PeerResult enter(engine::InstrumentId instrument, std::uint64_t key, engine::Side side, engine::OrderType type,
                   bool market, engine::Price limit, engine::Qty open, engine::Qty filled, Contra& contra, Own& own) {
    const auto crosses = [&](engine::Price maker_price) {
      return market || (side == engine::Side::kBuy ? maker_price <= limit : maker_price >= limit);
    };
    if (type == engine::OrderType::kFok) {
      engine::Qty available = 0;
      for (auto lvl = contra.begin(); lvl != contra.end() && available < open && crosses(lvl->first); ++lvl) {
        for (const Order& o : lvl->second) available += o.open;
      }
      if (available < open) return PeerResult::kDone;
    }
    while (open > 0 && !contra.empty() && crosses(contra.begin()->first)) {
      auto lvl = contra.begin();
      Level& queue = lvl->second;
      while (open > 0 && !queue.empty()) {
        Order& maker = queue.front();
        const engine::Qty q = std::min(open, maker.open);
        open -= q;
        filled += q;
        maker.open -= q;
        maker.filled += q;
        sink_.on_fill(PeerFill{instrument, maker.key, key, lvl->first, q});
        if (maker.open == 0) {
          index_.erase(maker.key);
          queue.pop_front();
        }
      }
      if (queue.empty()) contra.erase(lvl);
    }
    if (open == 0 || type != engine::OrderType::kLimit) return PeerResult::kDone;
    Level& level = own[limit];
    level.push_back(Order{key, open, filled});
    index_.emplace(key, Locator{instrument, side, limit, std::prev(level.end())});
    return PeerResult::kRested;
  }

  // Removes a live order from its level; returns its filled quantity.
  engine::Qty unlink(const Locator& loc) {
    Book& b = books_[loc.instrument];
    const engine::Qty filled = loc.it->filled;
    if (loc.side == engine::Side::kBuy) {
      erase_from(b.bids, loc);
    } else {
      erase_from(b.asks, loc);
    }
    return filled;
  }
  template <typename Levels>
  static void erase_from(Levels& levels, const Locator& loc) {
    auto lvl = levels.find(loc.price);
    lvl->second.erase(loc.it);
    if (lvl->second.empty()) levels.erase(lvl);
  }

  PeerResult on_cancel(const engine::Request& r) {
    auto found = index_.find(order_key(r.client, r.client_order_id));
    if (found == index_.end() || found->second.instrument != r.instrument) {
      return PeerResult::kUnknownOrder;
    }
    unlink(found->second);
    index_.erase(found);
    return PeerResult::kCancelled;
  }

  PeerResult on_modify(const engine::Request& r) {
    const std::uint64_t key = order_key(r.client, r.client_order_id);
    auto found = index_.find(key);
    if (found == index_.end() || found->second.instrument != r.instrument) {
      return PeerResult::kUnknownOrder;
    }
    const engine::InstrumentConfig& ic = instruments_[r.instrument];
    if (r.qty <= 0 || r.qty > ic.max_order_qty || r.price % ic.tick_size != 0 || r.price < ic.min_price ||
        r.price > ic.max_price) {
      return PeerResult::kRejected;
    }
    const Locator loc = found->second;
    const engine::Qty total = loc.it->filled + loc.it->open;
    if (r.price == loc.price && r.qty == total) return PeerResult::kRejected;
    const engine::Qty filled = unlink(loc);
    index_.erase(found);
    if (r.qty <= filled) return PeerResult::kCancelled;
    if constexpr (PeerAckSink<Sink>) sink_.on_modified(key, r.price, r.qty);
    Book& b = books_[r.instrument];
    const engine::Qty open = r.qty - filled;
    if (loc.side == engine::Side::kBuy) {
      return enter(r.instrument, key, loc.side, engine::OrderType::kLimit, false, r.price, open, filled, b.asks,
                   b.bids);
    }
    return enter(r.instrument, key, loc.side, engine::OrderType::kLimit, false, r.price, open, filled, b.bids, b.asks);
  }

  std::vector<engine::InstrumentConfig> instruments_;
  std::vector<Book> books_;
  IndexMap<std::uint64_t, Locator> index_;
  Sink& sink_;
};

template <PeerFillSink Sink>
using MapPeerBook = StdPeerBook<std::map, Sink>;
template <PeerFillSink Sink>
using UnorderedPeerBook = StdPeerBook<std::unordered_map, Sink>;

}  // namespace nanotick::bench
