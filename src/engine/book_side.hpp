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
// a memmove of 8-byte keys and 4-byte indices (cheap even for thousands).
// Lookups scan a few entries back from the touch and fall back to a binary
// search for far prices.
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
  std::uint32_t size() const noexcept { return size_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  bool has_free_level() const noexcept { return size_ < capacity_; }

  // Level by rank from the best (0 = best); rank < size().
  NT_ALWAYS_INLINE PriceLevel& at_rank(std::uint32_t rank) noexcept {
    return levels_[ranks_[size_ - 1 - rank]];
  }
  NT_ALWAYS_INLINE const PriceLevel& at_rank(std::uint32_t rank) const noexcept {
    return levels_[ranks_[size_ - 1 - rank]];
  }
  NT_ALWAYS_INLINE PriceLevel* best() noexcept {
    return size_ != 0 ? &levels_[ranks_[size_ - 1]] : nullptr;
  }
  NT_ALWAYS_INLINE const PriceLevel* best() const noexcept {
    return size_ != 0 ? &levels_[ranks_[size_ - 1]] : nullptr;
  }
  NT_ALWAYS_INLINE PriceLevel& level(LevelIndex index) noexcept { return levels_[index]; }
  NT_ALWAYS_INLINE const PriceLevel& level(LevelIndex index) const noexcept { return levels_[index]; }

  // The level at `price`, or nullptr.
  NT_ALWAYS_INLINE PriceLevel* find(Price price) noexcept {
    const Price k = key(price);
    const std::uint32_t pos = lower_bound(k);
    return pos < size_ && keys_[pos] == k ? &levels_[ranks_[pos]] : nullptr;
  }

  // The level at `price`, created (empty) if absent. Precondition: it exists
  // or has_free_level() (the engine checks capacity before matching).
  NT_ALWAYS_INLINE LevelIndex find_or_insert(Price price) noexcept {
    const Price k = key(price);
    const std::uint32_t pos = lower_bound(k);
    if (pos < size_ && keys_[pos] == k) return ranks_[pos];
    NT_DEBUG_ASSERT(free_head_ != kNoLevel, "BookSide: no free level (capacity not checked)");
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
    return index;
  }

  // Removes the (empty) best level: the next best becomes the last entry.
  NT_ALWAYS_INLINE void remove_best() noexcept {
    --size_;
    release(ranks_[size_]);
  }

  // Removes an (empty) level anywhere.
  NT_ALWAYS_INLINE void remove(LevelIndex index) noexcept {
    const std::uint32_t pos = lower_bound(key(levels_[index].price));
    NT_DEBUG_ASSERT(pos < size_ && ranks_[pos] == index, "BookSide::remove: level not found");
    const std::uint32_t tail = size_ - pos - 1;
    if (tail != 0) {
      std::memmove(&keys_[pos], &keys_[pos + 1], tail * sizeof(Price));
      std::memmove(&ranks_[pos], &ranks_[pos + 1], tail * sizeof(LevelIndex));
    }
    --size_;
    release(index);
  }

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

  NT_ALWAYS_INLINE void release(LevelIndex index) noexcept {
    levels_[index].head = levels_[index].tail = nullptr;
    levels_[index].next_free = free_head_;
    free_head_ = index;
  }

  Side side_;
  std::uint32_t capacity_;
  std::uint32_t size_ = 0;
  LevelIndex free_head_ = kNoLevel;
  std::unique_ptr<Price[]> keys_;        // sorted ascending: worst first, best last
  std::unique_ptr<LevelIndex[]> ranks_;  // parallel to keys_: the level's table index
  std::unique_ptr<PriceLevel[]> levels_; // the level table (free ones linked by next_free)
};

}  // namespace nanotick::engine
