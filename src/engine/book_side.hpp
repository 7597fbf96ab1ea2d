// One side of an instrument's book: its price levels, sorted, best last.
// Not thread-safe: the engine's thread owns it.
//
// Layout: a two-level sorted array. The sorted (key, level index) entries are
// cut into blocks of at most kBlock entries; a directory lists the blocks in
// key order with each block's largest key. The best level is the last entry
// of the last block.
//
// Why blocks and not one sorted array: a flat array moves every entry
// between an insertion and the touch, so a level inserted deep in a wide book
// cost a memmove of the whole book (seed 10's regime-flash-crash: ~13,000
// levels a side and new orders priced anywhere along a 60,000-tick path, so
// ~80 KB moved per new level, ~2.7 M msgs/s and a p99 of 5.7 us, slower than
// a std::map book). In blocks an insertion moves at most kBlock entries, plus
// the directory (one entry per block) when a full block splits, once per
// ~kBlock/2 insertions into it. Activity concentrates near the touch, where
// the search is a short scan back from the end (of the directory, then of the
// block); far prices use binary searches. A level is removed as soon as it
// empties (at most kBlock entries move), so every entry is a non-empty level
// and the last entry is always the best.
//
// Capacity counts levels, exactly as docs/MATCHING.md defines it. Blocks come
// from a fixed pool of about twice the blocks max_levels needs; when a split
// finds the pool empty (blocks left sparse by removals), the side is repacked
// into blocks three-quarters full through a scratch copy (O(levels), rare).
// Everything is allocated and pre-faulted in the constructor; memory is
// proportional to max_levels, not to the band's width.
//
// Keys are ordered so that "better" is "larger" on both sides: the bid side
// stores price, the ask side -price (prices are within +-2^61, so negation
// cannot overflow). Levels live in a fixed table indexed by LevelIndex with a
// free list.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/compiler.hpp"
#include "engine/price_level.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

class BookSide {
  static constexpr std::uint32_t kBlock = 64;           // entries per block at most
  static constexpr std::uint32_t kRepackFill = 48;      // entries per block after a repack
  struct Block {
    Price keys[kBlock];        // ascending
    LevelIndex ranks[kBlock];  // parallel to keys: the level's table index
    std::uint32_t n = 0;
    std::uint32_t next_free = 0;  // free-list link while unused
  };

 public:
  BookSide(Side side, std::uint32_t max_levels)
      : side_(side),
        capacity_(max_levels),
        block_capacity_(pool_blocks(max_levels)),
        levels_(std::make_unique<PriceLevel[]>(max_levels)),
        blocks_(std::make_unique<Block[]>(block_capacity_)),
        dir_(std::make_unique<std::uint32_t[]>(block_capacity_)),
        dir_max_(std::make_unique<Price[]>(block_capacity_)),
        scratch_keys_(std::make_unique<Price[]>(max_levels)),
        scratch_ranks_(std::make_unique<LevelIndex[]>(max_levels)) {
    // make_unique value-initialises (writes) every element: pages are faulted here.
    for (std::uint32_t i = 0; i < max_levels; ++i) levels_[i].next_free = i + 1 < max_levels ? i + 1 : kNoLevel;
    free_level_ = max_levels != 0 ? 0 : kNoLevel;
    for (std::uint32_t i = 0; i < block_capacity_; ++i) blocks_[i].next_free = i + 1;
    free_block_ = 0;
    free_blocks_ = block_capacity_;
  }

  Side side() const noexcept { return side_; }
  // Non-empty price levels.
  std::uint32_t size() const noexcept { return size_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return size_ == 0; }
  bool has_free_level() const noexcept { return size_ < capacity_; }

  // Calls fn(const PriceLevel&) for each level, best first, while fn returns true.
  template <typename F>
  NT_ALWAYS_INLINE void walk(F&& fn) const {
    for (std::uint32_t b = blocks_used_; b-- > 0;) {
      const Block& blk = blocks_[dir_[b]];
      for (std::uint32_t p = blk.n; p-- > 0;)
        if (!fn(static_cast<const PriceLevel&>(levels_[blk.ranks[p]]))) return;
    }
  }
  NT_ALWAYS_INLINE PriceLevel* best() noexcept { return best_ != kNoLevel ? &levels_[best_] : nullptr; }
  NT_ALWAYS_INLINE const PriceLevel* best() const noexcept { return best_ != kNoLevel ? &levels_[best_] : nullptr; }
  NT_ALWAYS_INLINE PriceLevel& level(LevelIndex index) noexcept { return levels_[index]; }
  NT_ALWAYS_INLINE const PriceLevel& level(LevelIndex index) const noexcept { return levels_[index]; }

  // The level at `price`, or nullptr.
  NT_ALWAYS_INLINE const PriceLevel* find(Price price) const noexcept {
    const Price k = key(price);
    const std::uint32_t b = dir_lower_bound(k);
    if (b == blocks_used_) return nullptr;
    const Block& blk = blocks_[dir_[b]];
    const std::uint32_t p = block_lower_bound(blk, k);
    return blk.keys[p] == k ? &levels_[blk.ranks[p]] : nullptr;
  }

  // The level at `price`, created (empty) if absent. Precondition: it exists
  // or has_free_level() (the engine checks capacity before matching). The
  // caller puts an order in a created level before anything else touches
  // this side.
  NT_ALWAYS_INLINE LevelIndex find_or_insert(Price price) noexcept {
    const Price k = key(price);
    std::uint32_t b = dir_lower_bound(k);
    std::uint32_t p;
    if (b == blocks_used_) {  // beyond every key (or no block): appended at the very end
      if (blocks_used_ == 0) return insert_first(price, k);
      b = blocks_used_ - 1;
      p = blocks_[dir_[b]].n;
    } else {
      const Block& blk = blocks_[dir_[b]];
      p = block_lower_bound(blk, k);
      if (blk.keys[p] == k) return blk.ranks[p];
    }
    NT_DEBUG_ASSERT(size_ < capacity_, "BookSide: no free level (capacity not checked)");
    if (blocks_[dir_[b]].n == kBlock) [[unlikely]]
      return insert_into_full(b, p, price, k);
    return insert_at(b, p, price, k);
  }

  // Level `index` just lost its last order: its entry goes (at most kBlock
  // entries move) and the level returns to the free list.
  NT_ALWAYS_INLINE void level_emptied(LevelIndex index) noexcept {
    std::uint32_t b = blocks_used_ - 1;
    std::uint32_t p = blocks_[dir_[b]].n - 1;
    if (blocks_[dir_[b]].ranks[p] != index) {  // not the best: find it by its key
      const Price k = key(levels_[index].price);
      b = dir_lower_bound(k);
      p = block_lower_bound(blocks_[dir_[b]], k);
    }
    NT_DEBUG_ASSERT(blocks_[dir_[b]].ranks[p] == index, "BookSide::level_emptied: level not in the side");
    remove_at(b, p);
    release(index);
  }

  // Times the side was repacked (for tests: the path must be exercised).
  std::uint64_t repacks() const noexcept { return repacks_; }

  // "Better" is larger: bids by price, asks by -price.
  NT_ALWAYS_INLINE Price key(Price price) const noexcept { return side_ == Side::kBuy ? price : -price; }

  // Tests only: the first broken invariant of this side's own structures
  // (sorted keys, directory maxima, counts, the cached best), or nullptr.
  const char* inconsistency() const noexcept {
    std::uint32_t count = 0;
    bool have_prev = false;
    Price prev = 0;
    for (std::uint32_t b = 0; b < blocks_used_; ++b) {
      const Block& blk = blocks_[dir_[b]];
      if (blk.n == 0 || blk.n > kBlock) return "a level block is empty or overfull";
      for (std::uint32_t p = 0; p < blk.n; ++p) {
        if (have_prev && !(prev < blk.keys[p])) return "levels not strictly sorted";
        if (key(levels_[blk.ranks[p]].price) != blk.keys[p]) return "a level's key differs from its price";
        if (levels_[blk.ranks[p]].empty()) return "an empty price level left in the book";
        prev = blk.keys[p];
        have_prev = true;
      }
      if (dir_max_[b] != blk.keys[blk.n - 1]) return "a level block's directory key is stale";
      count += blk.n;
    }
    if (count != size_) return "level count differs from the side's entries";
    if (size_ > capacity_) return "more levels than capacity";
    if (blocks_used_ + free_blocks_ != block_capacity_) return "level blocks lost";
    if (best_ != last_entry()) return "the cached best level is not the last entry";
    return nullptr;
  }

  // Bytes allocated for `max_levels` levels (for memory reports).
  static constexpr std::size_t bytes_for(std::uint32_t max_levels) noexcept {
    return std::size_t{max_levels} * (sizeof(PriceLevel) + sizeof(Price) + sizeof(LevelIndex)) +
           std::size_t{pool_blocks(max_levels)} * (sizeof(Block) + sizeof(std::uint32_t) + sizeof(Price));
  }

 private:
  // About twice the blocks max_levels needs when full, so repacks are rare.
  static constexpr std::uint32_t pool_blocks(std::uint32_t max_levels) noexcept {
    return 2 * ((max_levels + kBlock - 1) / kBlock) + 2;
  }

  // First directory position whose block's largest key is >= k (blocks_used_:
  // none). Scans back from the last block (the touch) a few, then binary-searches.
  NT_ALWAYS_INLINE std::uint32_t dir_lower_bound(Price k) const noexcept {
    std::uint32_t hi = blocks_used_;
    constexpr std::uint32_t kScan = 4;
    for (std::uint32_t n = 0; n < kScan; ++n) {
      if (hi == 0 || dir_max_[hi - 1] < k) return hi;
      --hi;
    }
    std::uint32_t lo = 0;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (dir_max_[mid] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  // First position in `blk` whose key is >= k. Precondition: blk's largest key >= k.
  NT_ALWAYS_INLINE static std::uint32_t block_lower_bound(const Block& blk, Price k) noexcept {
    std::uint32_t hi = blk.n;
    constexpr std::uint32_t kScan = 8;
    for (std::uint32_t n = 0; n < kScan; ++n) {
      if (hi == 0 || blk.keys[hi - 1] < k) return hi;
      --hi;
    }
    std::uint32_t lo = 0;
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (blk.keys[mid] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  NT_ALWAYS_INLINE LevelIndex new_level(Price price) noexcept {
    const LevelIndex index = free_level_;
    PriceLevel& lvl = levels_[index];
    free_level_ = lvl.next_free;
    lvl = PriceLevel{};
    lvl.price = price;
    return index;
  }
  NT_ALWAYS_INLINE void release(LevelIndex index) noexcept {
    levels_[index].head = levels_[index].tail = nullptr;
    levels_[index].next_free = free_level_;
    free_level_ = index;
  }
  std::uint32_t take_block() noexcept {
    const std::uint32_t i = free_block_;
    free_block_ = blocks_[i].next_free;
    --free_blocks_;
    blocks_[i].n = 0;
    return i;
  }
  void give_block(std::uint32_t i) noexcept {
    blocks_[i].next_free = free_block_;
    free_block_ = i;
    ++free_blocks_;
  }
  // The level of the last entry (the best), kNoLevel when the side is empty.
  NT_ALWAYS_INLINE LevelIndex last_entry() const noexcept {
    if (blocks_used_ == 0) return kNoLevel;
    const Block& last = blocks_[dir_[blocks_used_ - 1]];
    return last.ranks[last.n - 1];
  }
  NT_ALWAYS_INLINE void refresh_best() noexcept { best_ = last_entry(); }

  LevelIndex insert_first(Price price, Price k) noexcept {
    dir_[0] = take_block();
    blocks_used_ = 1;
    return insert_at(0, 0, price, k);
  }

  // Inserts key k at position p of directory block b (which has room).
  NT_ALWAYS_INLINE LevelIndex insert_at(std::uint32_t b, std::uint32_t p, Price price, Price k) noexcept {
    Block& blk = blocks_[dir_[b]];
    const std::uint32_t tail = blk.n - p;
    if (tail != 0) {
      std::memmove(&blk.keys[p + 1], &blk.keys[p], tail * sizeof(Price));
      std::memmove(&blk.ranks[p + 1], &blk.ranks[p], tail * sizeof(LevelIndex));
    }
    const LevelIndex index = new_level(price);
    blk.keys[p] = k;
    blk.ranks[p] = index;
    ++blk.n;
    dir_max_[b] = blk.keys[blk.n - 1];
    ++size_;
    if (b + 1 == blocks_used_ && p + 1 == blk.n) best_ = index;  // a new best
    return index;
  }

  NT_ALWAYS_INLINE void remove_at(std::uint32_t b, std::uint32_t p) noexcept {
    Block& blk = blocks_[dir_[b]];
    const std::uint32_t tail = blk.n - p - 1;
    if (tail != 0) {
      std::memmove(&blk.keys[p], &blk.keys[p + 1], tail * sizeof(Price));
      std::memmove(&blk.ranks[p], &blk.ranks[p + 1], tail * sizeof(LevelIndex));
    }
    --blk.n;
    --size_;
    if (blk.n == 0) {
      give_block(dir_[b]);
      const std::uint32_t after = blocks_used_ - b - 1;
      if (after != 0) {
        std::memmove(&dir_[b], &dir_[b + 1], after * sizeof(std::uint32_t));
        std::memmove(&dir_max_[b], &dir_max_[b + 1], after * sizeof(Price));
      }
      --blocks_used_;
    } else {
      dir_max_[b] = blk.keys[blk.n - 1];
    }
    refresh_best();
  }

  // Inserts key k at position p of full directory block b: splits the block,
  // or first repacks the side when the pool has no block left to split into.
  NT_COLD LevelIndex insert_into_full(std::uint32_t b, std::uint32_t p, Price price, Price k) noexcept {
    if (free_blocks_ == 0) {
      repack();  // every block now holds kRepackFill < kBlock entries: no split needed
      b = dir_lower_bound(k);
      if (b == blocks_used_) {
        b = blocks_used_ - 1;
        p = blocks_[dir_[b]].n;
      } else {
        p = block_lower_bound(blocks_[dir_[b]], k);
      }
      return insert_at(b, p, price, k);
    }
    split(b);
    if (p > kBlock / 2) {
      ++b;
      p -= kBlock / 2;
    }
    return insert_at(b, p, price, k);
  }

  // Moves the upper half of full directory block b into a new block right after it.
  NT_COLD void split(std::uint32_t b) noexcept {
    const std::uint32_t fresh = take_block();
    Block& from = blocks_[dir_[b]];
    Block& to = blocks_[fresh];
    constexpr std::uint32_t kHalf = kBlock / 2;
    std::memcpy(to.keys, &from.keys[kHalf], kHalf * sizeof(Price));
    std::memcpy(to.ranks, &from.ranks[kHalf], kHalf * sizeof(LevelIndex));
    to.n = kHalf;
    from.n = kHalf;
    const std::uint32_t after = blocks_used_ - b - 1;
    if (after != 0) {
      std::memmove(&dir_[b + 2], &dir_[b + 1], after * sizeof(std::uint32_t));
      std::memmove(&dir_max_[b + 2], &dir_max_[b + 1], after * sizeof(Price));
    }
    dir_[b + 1] = fresh;
    dir_max_[b + 1] = dir_max_[b];
    dir_max_[b] = from.keys[kHalf - 1];
    ++blocks_used_;
  }

  // Every entry, in order, into blocks kRepackFill full (through the scratch copy).
  NT_COLD void repack() noexcept {
    ++repacks_;
    std::uint32_t n = 0;
    for (std::uint32_t b = 0; b < blocks_used_; ++b) {
      const Block& blk = blocks_[dir_[b]];
      std::memcpy(&scratch_keys_[n], blk.keys, blk.n * sizeof(Price));
      std::memcpy(&scratch_ranks_[n], blk.ranks, blk.n * sizeof(LevelIndex));
      n += blk.n;
      give_block(dir_[b]);
    }
    blocks_used_ = 0;
    for (std::uint32_t at = 0; at < n; at += kRepackFill) {
      const std::uint32_t take = std::min(kRepackFill, n - at);
      const std::uint32_t i = take_block();
      std::memcpy(blocks_[i].keys, &scratch_keys_[at], take * sizeof(Price));
      std::memcpy(blocks_[i].ranks, &scratch_ranks_[at], take * sizeof(LevelIndex));
      blocks_[i].n = take;
      dir_[blocks_used_] = i;
      dir_max_[blocks_used_] = blocks_[i].keys[take - 1];
      ++blocks_used_;
    }
  }

  Side side_;
  std::uint32_t capacity_;
  std::uint32_t block_capacity_;
  std::uint32_t size_ = 0;         // levels (all non-empty)
  std::uint32_t blocks_used_ = 0;  // directory entries
  std::uint32_t free_blocks_ = 0;
  std::uint32_t free_block_ = 0;
  LevelIndex free_level_ = kNoLevel;
  LevelIndex best_ = kNoLevel;     // the last entry's level (kNoLevel: empty side)
  std::uint64_t repacks_ = 0;
  std::unique_ptr<PriceLevel[]> levels_;        // the level table (free ones linked by next_free)
  std::unique_ptr<Block[]> blocks_;             // the block pool (free ones linked by next_free)
  std::unique_ptr<std::uint32_t[]> dir_;        // blocks in key order
  std::unique_ptr<Price[]> dir_max_;            // parallel to dir_: each block's largest key
  std::unique_ptr<Price[]> scratch_keys_;       // repack() only
  std::unique_ptr<LevelIndex[]> scratch_ranks_;
};

}  // namespace nanotick::engine
