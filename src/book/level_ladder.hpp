// One side of a replica book: its non-empty price levels kept sorted, each the
// head and tail of a FIFO of orders (linked by index in InstrumentBook's order
// table) with its aggregate open quantity and order count. Not thread-safe:
// owned by the thread that owns its InstrumentBook.
//
// Layout: a fixed table of levels with a free list, plus two parallel sorted
// arrays (key, level index) with the BEST level LAST. Market data changes
// cluster at the touch, so inserting or removing a level near the best moves
// only the few entries behind it, and the best level is always the last entry
// (no stale best after the best level empties). Memory is proportional to
// max_levels, not to the price band. Everything is allocated and written in
// the constructor; no operation allocates afterwards.
//
// Keys make "better" mean "larger" on both sides: bids use the price, asks
// its bitwise complement (~p = -p - 1 reverses the order for every int64,
// INT64_MIN included, so a hostile price cannot overflow as -p would).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/compiler.hpp"
#include "market/types.hpp"

namespace nanotick::book {

using market::Price;
using market::Qty;
using market::Side;

// Index into a table of orders or levels; kNil = none.
using NodeIndex = std::uint32_t;
inline constexpr NodeIndex kNil = ~NodeIndex{0};

struct Level {
  Price price = 0;
  Qty qty = 0;                 // sum of the orders' open quantities
  std::uint32_t orders = 0;    // orders queued
  NodeIndex head = kNil;       // oldest order (first in priority)
  NodeIndex tail = kNil;       // newest order
  NodeIndex next_free = kNil;  // free-list link while the level is unused
};

class LevelLadder {
 public:
  // Start-up only. Precondition (checked by InstrumentBook): 0 < max_levels < kNil.
  LevelLadder(Side side, std::uint32_t max_levels)
      : side_(side),
        capacity_(max_levels),
        keys_(std::make_unique<Price[]>(max_levels)),
        ranks_(std::make_unique<NodeIndex[]>(max_levels)),
        levels_(std::make_unique<Level[]>(max_levels)) {
    // make_unique value-initialises every element: the pages are faulted here.
    reset_free_list();
  }
  LevelLadder(const LevelLadder&) = delete;
  LevelLadder& operator=(const LevelLadder&) = delete;

  Side side() const noexcept { return side_; }
  std::uint32_t size() const noexcept { return size_; }
  std::uint32_t capacity() const noexcept { return capacity_; }

  NT_ALWAYS_INLINE Level& level(NodeIndex index) noexcept { return levels_[index]; }
  NT_ALWAYS_INLINE const Level& level(NodeIndex index) const noexcept { return levels_[index]; }

  NT_ALWAYS_INLINE const Level* best() const noexcept { return size_ != 0 ? &levels_[ranks_[size_ - 1]] : nullptr; }

  // The level at `price`, created empty if absent; kNil when it is absent and
  // the side already holds capacity() levels.
  NT_ALWAYS_INLINE NodeIndex find_or_insert(Price price) noexcept {
    const Price k = key(price);
    const std::uint32_t pos = lower_bound(k);
    if (pos < size_ && keys_[pos] == k) return ranks_[pos];
    if (size_ == capacity_) [[unlikely]]
      return kNil;
    const NodeIndex index = free_head_;
    Level& lvl = levels_[index];
    free_head_ = lvl.next_free;
    lvl = Level{};
    lvl.price = price;
    const std::uint32_t behind = size_ - pos;
    if (behind != 0) {
      std::memmove(&keys_[pos + 1], &keys_[pos], behind * sizeof(Price));
      std::memmove(&ranks_[pos + 1], &ranks_[pos], behind * sizeof(NodeIndex));
    }
    keys_[pos] = k;
    ranks_[pos] = index;
    ++size_;
    return index;
  }

  // Removes level `index`, which must be present and hold no orders.
  NT_ALWAYS_INLINE void erase(NodeIndex index) noexcept {
    const std::uint32_t pos = lower_bound(key(levels_[index].price));
    NT_DEBUG_ASSERT(pos < size_ && ranks_[pos] == index, "LevelLadder::erase of an absent level");
    const std::uint32_t behind = size_ - pos - 1;
    if (behind != 0) {
      std::memmove(&keys_[pos], &keys_[pos + 1], behind * sizeof(Price));
      std::memmove(&ranks_[pos], &ranks_[pos + 1], behind * sizeof(NodeIndex));
    }
    --size_;
    levels_[index].next_free = free_head_;
    free_head_ = index;
  }

  // Calls fn(const Level&) for each level, best first.
  template <typename Fn>
  void walk(Fn&& fn) const {
    for (std::uint32_t pos = size_; pos-- > 0;) fn(static_cast<const Level&>(levels_[ranks_[pos]]));
  }

  // Calls fn(const Level&) for the best `n` levels (fewer if there are fewer), best first.
  template <typename Fn>
  void walk_top(std::uint32_t n, Fn&& fn) const {
    for (std::uint32_t pos = size_; pos-- > 0 && n-- > 0;) fn(static_cast<const Level&>(levels_[ranks_[pos]]));
  }

  // Forgets every level (their orders are the caller's business).
  void clear() noexcept {
    size_ = 0;
    reset_free_list();
  }

 private:
  NT_ALWAYS_INLINE Price key(Price price) const noexcept { return side_ == Side::kBuy ? price : ~price; }

  // First sorted position whose key is >= k. Checks the touch first (most
  // market data is at or next to the best), then binary-searches.
  NT_ALWAYS_INLINE std::uint32_t lower_bound(Price k) const noexcept {
    if (size_ == 0 || keys_[size_ - 1] < k) return size_;
    if (keys_[size_ - 1] == k) return size_ - 1;
    return static_cast<std::uint32_t>(std::lower_bound(keys_.get(), keys_.get() + size_, k) - keys_.get());
  }

  void reset_free_list() noexcept {
    for (std::uint32_t i = 0; i < capacity_; ++i) levels_[i].next_free = i + 1 < capacity_ ? i + 1 : kNil;
    free_head_ = 0;
  }

  Side side_;
  std::uint32_t capacity_;
  std::uint32_t size_ = 0;
  NodeIndex free_head_ = kNil;
  std::unique_ptr<Price[]> keys_;       // sorted ascending: best last
  std::unique_ptr<NodeIndex[]> ranks_;  // level index at each sorted position
  std::unique_ptr<Level[]> levels_;
};

}  // namespace nanotick::book
