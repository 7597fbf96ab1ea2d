// The keys of an instrument's most recently finished orders, to tell a late
// cancel/modify (kTooLateToCancel) from one naming an order never seen
// (kUnknownOrder); see docs/MATCHING.md "Finished orders". Not thread-safe:
// the engine's thread owns it.
//
// A fixed ring of the last `capacity` keys (oldest overwritten first) plus a
// counted hash set key -> number of ring entries holding it, so a key stays
// "finished" while any remembered entry has it, and lookups are O(1).
//
// Every finished order costs an add() (and, once the ring is full, the
// eviction of the oldest key), so this is on the engine's hottest path. The
// set is therefore specialised rather than a core::IntHashMap: a slot is
// {key, count, home}; count == 0 marks an empty slot (no separate bitmap),
// adding or evicting a key is ONE probe (find-or-insert, decrement-or-erase at
// the found slot), and the stored home slot lets backward-shift deletion move
// entries without rehashing them. Linear probing at load <= 1/2 with the
// murmur3 finaliser (keys come from clients: a weak hash would let them build
// clusters). All storage is allocated and pre-faulted in the constructor.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>

#include "core/compiler.hpp"
#include "core/int_hash_map.hpp"

namespace nanotick::engine {

class FinishedOrders {
  struct Slot {
    std::uint64_t key;
    std::uint32_t count;  // 0 = empty slot
    std::uint32_t home;   // the key's home slot (saves rehashing on erase)
  };

 public:
  explicit FinishedOrders(std::uint32_t capacity)
      : capacity_(capacity),
        table_size_(std::bit_ceil(std::max<std::uint64_t>(2 * std::uint64_t{capacity}, 16))),
        mask_(static_cast<std::uint32_t>(table_size_ - 1)),
        shift_(static_cast<unsigned>(64 - std::countr_zero(table_size_))),
        ring_(std::make_unique<std::uint64_t[]>(capacity)),
        slots_(std::make_unique<Slot[]>(table_size_)) {}  // value-initialised: written, all empty

  // Remembers `key`; forgets the oldest entry when full.
  NT_ALWAYS_INLINE void add(std::uint64_t key) noexcept {
    if (size_ == capacity_) {
      forget(ring_[head_]);
    } else {
      ++size_;
    }
    ring_[head_] = key;
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    const std::uint32_t home = home_of(key);
    std::uint32_t i = home;
    while (slots_[i].count != 0) {
      if (slots_[i].key == key) {
        ++slots_[i].count;
        return;
      }
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{key, 1, home};  // distinct keys <= ring entries <= capacity: never full
    ++distinct_;
  }

  NT_ALWAYS_INLINE bool contains(std::uint64_t key) const noexcept {
    std::uint32_t i = home_of(key);
    while (slots_[i].count != 0) {
      if (slots_[i].key == key) return true;
      i = (i + 1) & mask_;
    }
    return false;
  }

  // Starts loading the slots the next add(key) will touch (its own and, when
  // full, the oldest entry's), so the cache misses overlap the caller's work.
  NT_ALWAYS_INLINE void prefetch_add(std::uint64_t key) const noexcept {
    __builtin_prefetch(&slots_[home_of(key)], 1);
    if (size_ == capacity_) __builtin_prefetch(&slots_[home_of(ring_[head_])], 1);
  }

  // Calls fn(key) for every remembered entry, oldest first (snapshots:
  // add()ing them in this order to an empty memory recreates this one).
  template <typename Fn>
  void for_each_oldest_first(Fn&& fn) const {
    const std::uint32_t start = size_ == capacity_ ? head_ : 0;
    for (std::uint32_t i = 0; i < size_; ++i) fn(ring_[(start + i) % capacity_]);
  }

  std::uint32_t size() const noexcept { return size_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  std::size_t distinct_keys() const noexcept { return distinct_; }

  // Sum of the counts; equals size() when consistent (for invariant checks).
  std::uint64_t total_count() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < table_size_; ++i) n += slots_[i].count;
    return n;
  }

  static std::size_t bytes_for(std::uint32_t capacity) noexcept {
    return std::size_t{capacity} * sizeof(std::uint64_t) +
           std::bit_ceil(std::max<std::uint64_t>(2 * std::uint64_t{capacity}, 16)) * sizeof(Slot);
  }

 private:
  NT_ALWAYS_INLINE std::uint32_t home_of(std::uint64_t key) const noexcept {
    return static_cast<std::uint32_t>(core::mix64(key) >> shift_);
  }

  // Drops one ring entry's count for `key` (present by construction).
  NT_ALWAYS_INLINE void forget(std::uint64_t key) noexcept {
    std::uint32_t hole = home_of(key);
    while (slots_[hole].key != key || slots_[hole].count == 0) hole = (hole + 1) & mask_;
    if (--slots_[hole].count != 0) return;
    --distinct_;
    // Backward-shift deletion: an entry at j whose home is not cyclically in
    // (hole, j] may move into the hole; continue with the hole it leaves.
    std::uint32_t j = hole;
    while (true) {
      j = (j + 1) & mask_;
      if (slots_[j].count == 0) break;
      const std::uint32_t from_home = (j - slots_[j].home) & mask_;
      const std::uint32_t from_hole = (j - hole) & mask_;
      if (from_home >= from_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].count = 0;
  }

  std::uint32_t capacity_;
  std::uint32_t size_ = 0;
  std::uint32_t head_ = 0;  // next ring position to write (the oldest entry when full)
  std::uint64_t table_size_;
  std::uint32_t mask_;
  unsigned shift_;  // 64 - log2(table_size_)
  std::size_t distinct_ = 0;
  std::unique_ptr<std::uint64_t[]> ring_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace nanotick::engine
