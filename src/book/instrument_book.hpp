// One instrument's order-by-order book as market data describes it: orders
// keyed by exchange order id, queued FIFO in price levels on two sides. It
// applies the feed's events (add at the back of a level, modify = reduce in
// place keeping priority, delete, trade = reduce the maker and remove it at
// zero) and refuses any event that does not fit its state with a specific
// BookResult, checking everything before changing anything, so a bad event
// never leaves the book half-updated. Not thread-safe: one owning thread.
//
// Storage is fixed at construction: an order table (free list through the
// `next` link), an order id -> table index hash map and two LevelLadders.
// No operation allocates afterwards.
#pragma once

#include <cstdint>
#include <optional>

#include "book/book_result.hpp"
#include "book/level_ladder.hpp"
#include "core/compiler.hpp"
#include "core/int_hash_map.hpp"
#include "market/level_view.hpp"
#include "market/types.hpp"

namespace nanotick::book {

using market::OrderId;

// A resting order as the feed shows it: what iteration yields and what a
// snapshot loads.
struct RestingOrder {
  OrderId order_id = 0;
  Price price = 0;
  Qty qty = 0;  // open quantity, > 0
  Side side = Side::kBuy;
};

class InstrumentBook {
 public:
  // Start-up only. Throws std::invalid_argument unless 1 <= max_orders and
  // 1 <= max_levels (per side) and both are below 2^32 - 1.
  InstrumentBook(std::uint32_t max_orders, std::uint32_t max_levels);
  InstrumentBook(const InstrumentBook&) = delete;
  InstrumentBook& operator=(const InstrumentBook&) = delete;

  // The order rests at the back of its price level.
  [[nodiscard]] NT_ALWAYS_INLINE BookResult add(OrderId id, Side side, Price price, Qty qty) noexcept {
    if (side != Side::kBuy && side != Side::kSell) return BookResult::kBadSide;
    if (qty <= 0) return BookResult::kBadQty;
    if (ids_.contains(id)) return BookResult::kDuplicateOrder;
    if (free_head_ == kNil) return BookResult::kOrderCapacity;
    LevelLadder& ladder = ladder_of(side);
    const NodeIndex li = ladder.find_or_insert(price);
    if (li == kNil) return BookResult::kLevelCapacity;
    const NodeIndex ni = free_head_;
    Node& n = nodes_[ni];
    free_head_ = n.next;
    n.order = RestingOrder{id, price, qty, side};
    n.level = li;
    (void)ids_.insert(id, ni);  // cannot fail: ids_ holds max_orders and a node was free
    Level& lvl = ladder.level(li);
    n.prev = lvl.tail;
    n.next = kNil;
    if (lvl.tail != kNil) {
      nodes_[lvl.tail].next = ni;
    } else {
      lvl.head = ni;
    }
    lvl.tail = ni;
    lvl.qty += qty;
    ++lvl.orders;
    ++live_;
    return BookResult::kOk;
  }

  // The order's open quantity becomes `qty` (smaller than now), priority kept.
  [[nodiscard]] NT_ALWAYS_INLINE BookResult modify(OrderId id, Qty qty) noexcept {
    if (qty <= 0) return BookResult::kBadQty;
    const NodeIndex* ni = ids_.find(id);
    if (ni == nullptr) return BookResult::kUnknownOrder;
    Node& n = nodes_[*ni];
    if (qty >= n.order.qty) return BookResult::kNotAReduction;
    ladder_of(n.order.side).level(n.level).qty -= n.order.qty - qty;
    n.order.qty = qty;
    return BookResult::kOk;
  }

  // The order leaves the book.
  [[nodiscard]] NT_ALWAYS_INLINE BookResult remove(OrderId id) noexcept {
    const NodeIndex* ni = ids_.find(id);
    if (ni == nullptr) return BookResult::kUnknownOrder;
    unlink_and_free(*ni);
    return BookResult::kOk;
  }

  // `qty` of the resting maker traded at its price: its open quantity goes
  // down, and it leaves the book at zero.
  [[nodiscard]] NT_ALWAYS_INLINE BookResult trade(OrderId maker, Price price, Qty qty) noexcept {
    if (qty <= 0) return BookResult::kBadQty;
    const NodeIndex* ni = ids_.find(maker);
    if (ni == nullptr) return BookResult::kUnknownOrder;
    Node& n = nodes_[*ni];
    if (price != n.order.price) return BookResult::kTradePriceMismatch;
    if (qty > n.order.qty) return BookResult::kTradeExceedsOrder;
    if (qty == n.order.qty) {
      unlink_and_free(*ni);
    } else {
      ladder_of(n.order.side).level(n.level).qty -= qty;
      n.order.qty -= qty;
    }
    return BookResult::kOk;
  }

  // Empties the book (before loading a snapshot). O(resting orders + max_levels).
  void clear() noexcept;

  // The best level of `side`, or nothing when the side is empty.
  std::optional<market::LevelView> best(Side side) const noexcept {
    if (side != Side::kBuy && side != Side::kSell) return std::nullopt;
    const Level* l = ladder_of(side).best();
    if (l == nullptr) return std::nullopt;
    return market::LevelView{l->price, l->qty, l->orders};
  }

  // The resting order `id`, or nullptr. Valid until the next change.
  const RestingOrder* find(OrderId id) const noexcept {
    const NodeIndex* ni = ids_.find(id);
    return ni != nullptr ? &nodes_[*ni].order : nullptr;
  }

  // Calls fn(const RestingOrder&) for every resting order in priority order:
  // bids best price first, FIFO within a level, then asks best price first.
  template <typename Fn>
  void for_each_order(Fn&& fn) const {
    for_each_order(Side::kBuy, fn);
    for_each_order(Side::kSell, fn);
  }
  template <typename Fn>
  void for_each_order(Side side, Fn&& fn) const {
    if (side != Side::kBuy && side != Side::kSell) return;
    ladder_of(side).walk([this, &fn](const Level& lvl) {
      for (NodeIndex i = lvl.head; i != kNil; i = nodes_[i].next) fn(static_cast<const RestingOrder&>(nodes_[i].order));
    });
  }

  // Calls fn(const market::LevelView&) for each level of `side`, best first.
  template <typename Fn>
  void for_each_level(Side side, Fn&& fn) const {
    if (side != Side::kBuy && side != Side::kSell) return;
    ladder_of(side).walk([&fn](const Level& l) { fn(market::LevelView{l.price, l.qty, l.orders}); });
  }

  // The same for the best `n` levels only: O(n), whatever the book's depth.
  template <typename Fn>
  void for_each_top_level(Side side, std::uint32_t n, Fn&& fn) const {
    if (side != Side::kBuy && side != Side::kSell) return;
    ladder_of(side).walk_top(n, [&fn](const Level& l) { fn(market::LevelView{l.price, l.qty, l.orders}); });
  }

  std::uint32_t order_count() const noexcept { return live_; }
  std::uint32_t level_count(Side side) const noexcept {
    return side == Side::kBuy || side == Side::kSell ? ladder_of(side).size() : 0;
  }
  std::uint32_t max_orders() const noexcept { return max_orders_; }
  std::uint32_t max_levels() const noexcept { return bids_.capacity(); }

 private:
  struct Node {
    RestingOrder order;
    NodeIndex prev = kNil;  // towards the level's head (older); free list: unused
    NodeIndex next = kNil;  // towards the level's tail (newer); free list: next free node
    NodeIndex level = kNil;
  };

  NT_ALWAYS_INLINE LevelLadder& ladder_of(Side side) noexcept { return side == Side::kBuy ? bids_ : asks_; }
  NT_ALWAYS_INLINE const LevelLadder& ladder_of(Side side) const noexcept { return side == Side::kBuy ? bids_ : asks_; }

  // Takes node `ni` out of its level (erasing the level when it empties), out
  // of the id map, and back onto the free list.
  NT_ALWAYS_INLINE void unlink_and_free(NodeIndex ni) noexcept {
    Node& n = nodes_[ni];
    LevelLadder& ladder = ladder_of(n.order.side);
    Level& lvl = ladder.level(n.level);
    if (n.prev != kNil) {
      nodes_[n.prev].next = n.next;
    } else {
      lvl.head = n.next;
    }
    if (n.next != kNil) {
      nodes_[n.next].prev = n.prev;
    } else {
      lvl.tail = n.prev;
    }
    lvl.qty -= n.order.qty;
    if (--lvl.orders == 0) ladder.erase(n.level);
    (void)ids_.erase(n.order.order_id);
    n.prev = kNil;
    n.level = kNil;
    n.next = free_head_;
    free_head_ = ni;
    --live_;
  }

  std::uint32_t max_orders_;
  std::uint32_t live_ = 0;
  NodeIndex free_head_ = kNil;
  std::unique_ptr<Node[]> nodes_;
  core::IntHashMap<OrderId, NodeIndex> ids_;
  LevelLadder bids_;
  LevelLadder asks_;
};

}  // namespace nanotick::book
