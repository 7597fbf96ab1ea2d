// One side of an instrument's book: its price levels, sorted, best last.
// Not thread-safe: the engine's thread owns it.
//
// Why a sorted array with the best level at the END: activity (new orders,
// cancels, trades) concentrates near the touch, so inserting or removing a
// level near the best moves only the few entries behind it, and emptying the
// best level is a pop_back -- the next best is simply the new last entry, so a
// stale best price cannot happen. Any price in the band works (each distinct
// price is its own entry; no modulo slots, no collisions), and memory is
// proportional to max_levels, not to the band's width. A deep insertion costs
// a memmove of 8-byte keys and 4-byte indices over the levels between it and
// the touch. Lookups scan a few entries back from the touch and fall back to a
// binary search for far prices.
//
// Deep levels are deleted lazily: a level that empties away from the touch
// stays in the array as an empty entry (a cancel deep in a wide book is O(1)
// instead of a memmove of everything better than it), is reused if an order
// arrives at its price, and is swept out when it becomes the last entry
// (empty entries are popped whenever the best empties, so the last entry is
// always a non-empty best level) or when the array needs room (compact(), one
// pass). Capacity counts non-empty levels only, exactly as docs/MATCHING.md
// defines it; the lingering entries are invisible outside this class.
//
// Keys are ordered so that "better" is "larger" on both sides: the bid side
// stores price, the ask side -price (prices are within +-2^61, so negation
// cannot overflow). Levels live in a fixed table indexed by LevelIndex with a
// free list; everything is allocated and pre-faulted in the constructor.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "core/compiler.hpp"
#include "engine/price_level.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

class BookSide {
 public:
  BookSide(Side side, std::uint32_t max_levels)
      : side_(side),
        capacity_(max_levels),
        keys_(std::make_unique<Price[]>(max_levels)),
        ranks_(std::make_unique<LevelIndex[]>(max_levels)),
        levels_(std::make_unique<PriceLevel[]>(max_levels)) {
    // make_unique value-initialises (writes) every element: pages are faulted here.
    for (std::uint32_t i = 0; i < max_levels; ++i)
      levels_[i].next_free = i + 1 < max_levels ? i + 1 : kNoLevel;
    free_head_ = 0;
  }

  Side side() const noexcept { return side_; }
  // Non-empty price levels.
  std::uint32_t size() const noexcept { return active_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return active_ == 0; }
  bool has_free_level() const noexcept { return active_ < capacity_; }

  // Calls fn(const PriceLevel&) for each non-empty level, best first, while fn
  // returns true.
  template <typename F>
  NT_ALWAYS_INLINE void walk(F&& fn) const {
    for (std::uint32_t pos = size_; pos-- > 0;) {
      const PriceLevel& lvl = levels_[ranks_[pos]];
      if (lvl.empty()) continue;
      if (!fn(lvl)) return;
    }
  }
  NT_ALWAYS_INLINE PriceLevel* best() noexcept {
    return size_ != 0 ? &levels_[ranks_[size_ - 1]] : nullptr;
  }
  NT_ALWAYS_INLINE const PriceLevel* best() const noexcept {
    return size_ != 0 ? &levels_[ranks_[size_ - 1]] : nullptr;
  }
  NT_ALWAYS_INLINE PriceLevel& level(LevelIndex index) noexcept { return levels_[index]; }
  NT_ALWAYS_INLINE const PriceLevel& level(LevelIndex index) const noexcept { return levels_[index]; }

  // The non-empty level at `price`, or nullptr.
  NT_ALWAYS_INLINE const PriceLevel* find(Price price) const noexcept {
    const Price k = key(price);
    const std::uint32_t pos = lower_bound(k);
    if (pos < size_ && keys_[pos] == k && !levels_[ranks_[pos]].empty()) return &levels_[ranks_[pos]];
    return nullptr;
  }

  // The level at `price`, created (empty) if absent. Precondition: it exists
  // or has_free_level() (the engine checks capacity before matching).
  NT_ALWAYS_INLINE LevelIndex find_or_insert(Price price) noexcept {
    const Price k = key(price);
    std::uint32_t pos = lower_bound(k);
    if (pos < size_ && keys_[pos] == k) {
      if (levels_[ranks_[pos]].empty()) ++active_;  // a lingering empty level comes back
      return ranks_[pos];
    }
    NT_DEBUG_ASSERT(active_ < capacity_, "BookSide: no free level (capacity not checked)");
    if (size_ == capacity_) [[unlikely]] {
      compact();
      pos = lower_bound(k);
    }
    const LevelIndex index = free_head_;
    PriceLevel& lvl = levels_[index];
    free_head_ = lvl.next_free;
    lvl = PriceLevel{};
    lvl.price = price;
    const std::uint32_t tail = size_ - pos;
    if (tail != 0) {
      std::memmove(&keys_[pos + 1], &keys_[pos], tail * sizeof(Price));
      std::memmove(&ranks_[pos + 1], &ranks_[pos], tail * sizeof(LevelIndex));
    }
    keys_[pos] = k;
    ranks_[pos] = index;
    ++size_;
    ++active_;
    return index;
  }

  // Level `index` just lost its last order. The best level is removed at
  // once (with any empty entries behind it, so the next best is the last
  // entry); a deeper one lingers until swept.
  NT_ALWAYS_INLINE void level_emptied(LevelIndex index) noexcept {
    --active_;
    if (ranks_[size_ - 1] != index) return;
    do {
      --size_;
      release(ranks_[size_]);
    } while (size_ != 0 && levels_[ranks_[size_ - 1]].empty());
  }

  // Physical entries, lingering empty ones included (for invariant checks).
  std::uint32_t entries() const noexcept { return size_; }

  // "Better" is larger: bids by price, asks by -price.
  NT_ALWAYS_INLINE Price key(Price price) const noexcept {
    return side_ == Side::kBuy ? price : -price;
  }
  // Internal key at sorted position (0 = worst); for invariant checks.
  Price key_at(std::uint32_t pos) const noexcept { return keys_[pos]; }

  // Bytes allocated for `max_levels` levels (for memory reports).
  static constexpr std::size_t bytes_for(std::uint32_t max_levels) noexcept {
    return std::size_t{max_levels} * (sizeof(Price) + sizeof(LevelIndex) + sizeof(PriceLevel));
  }

 private:
  // First sorted position whose key is >= k. Scans back from the best a few
  // entries (the common case), then binary-searches the rest.
  NT_ALWAYS_INLINE std::uint32_t lower_bound(Price k) const noexcept {
    std::uint32_t hi = size_;  // answer is in [0, hi]
    constexpr std::uint32_t kScan = 8;
    for (std::uint32_t n = 0; n < kScan; ++n) {
      if (hi == 0 || keys_[hi - 1] < k) return hi;
      --hi;
    }
    std::uint32_t lo = 0;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (keys_[mid] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // Drops every lingering empty entry in one pass (only when the array is full).
  NT_COLD void compact() noexcept {
    std::uint32_t out = 0;
    for (std::uint32_t pos = 0; pos < size_; ++pos) {
      if (levels_[ranks_[pos]].empty()) {
        release(ranks_[pos]);
      } else {
        keys_[out] = keys_[pos];
        ranks_[out] = ranks_[pos];
        ++out;
      }
    }
    size_ = out;
  }

  NT_ALWAYS_INLINE void release(LevelIndex index) noexcept {
    levels_[index].head = levels_[index].tail = nullptr;
    levels_[index].next_free = free_head_;
    free_head_ = index;
  }

  Side side_;
  std::uint32_t capacity_;
  std::uint32_t size_ = 0;    // entries in keys_/ranks_, lingering empty levels included
  std::uint32_t active_ = 0;  // non-empty levels
  LevelIndex free_head_ = kNoLevel;
  std::unique_ptr<Price[]> keys_;        // sorted ascending: worst first, best last
  std::unique_ptr<LevelIndex[]> ranks_;  // parallel to keys_: the level's table index
  std::unique_ptr<PriceLevel[]> levels_; // the level table (free ones linked by next_free)
};

}  // namespace nanotick::engine
