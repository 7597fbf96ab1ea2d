// The engine-wide index of live (resting) orders: order_key(client,
// client_order_id) -> Order*. Not thread-safe: the engine's thread owns it.
//
// Open addressing with linear probing at load <= 1/2, murmur3-finalised keys
// (clients choose their ids: a weak hash would let them build clusters) and
// backward-shift deletion (no tombstones, so probe lengths stay those of a
// fresh table under any churn) -- the same scheme as core::IntHashMap, which
// this specialises for the engine's hot path: a null Order* marks an empty
// slot (no separate occupancy bitmap, one cache line per probe), and
// prefetch() exposes the home slot so the engine can start the cache miss of
// the NEXT request's lookup while it processes the current one. Storage is
// allocated and pre-faulted in the constructor; nothing allocates afterwards.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "core/compiler.hpp"
#include "core/int_hash_map.hpp"
#include "engine/order.hpp"

namespace nanotick::engine {

class LiveOrders {
  struct Slot {
    std::uint64_t key;
    Order* order;  // nullptr = empty slot
  };

 public:
  explicit LiveOrders(std::size_t capacity)
      : capacity_(capacity),
        table_size_(std::bit_ceil(std::max<std::size_t>(2 * capacity, 16))),
        mask_(table_size_ - 1),
        shift_(static_cast<unsigned>(64 - std::countr_zero(table_size_))),
        slots_(std::make_unique<Slot[]>(table_size_)) {  // value-initialised: written, all empty
    if (capacity == 0) throw std::invalid_argument("LiveOrders: capacity must be at least 1");
  }

  NT_ALWAYS_INLINE void prefetch(std::uint64_t key) const noexcept { __builtin_prefetch(&slots_[home(key)]); }

  [[nodiscard]] NT_ALWAYS_INLINE Order* find(std::uint64_t key) const noexcept {
    std::size_t i = home(key);
    while (slots_[i].order != nullptr) {
      if (slots_[i].key == key) return slots_[i].order;
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

  // Precondition: `key` absent and size() < capacity() (the order pools bound it).
  NT_ALWAYS_INLINE void insert(std::uint64_t key, Order* order) noexcept {
    std::size_t i = home(key);
    while (slots_[i].order != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, order};
    ++size_;
  }

  // Precondition: `key` present.
  NT_ALWAYS_INLINE void erase(std::uint64_t key) noexcept {
    std::size_t hole = home(key);
    while (slots_[hole].key != key || slots_[hole].order == nullptr) hole = (hole + 1) & mask_;
    std::size_t j = hole;
    while (true) {
      j = (j + 1) & mask_;
      if (slots_[j].order == nullptr) break;
      const std::size_t from_home = (j - home(slots_[j].key)) & mask_;
      const std::size_t from_hole = (j - hole) & mask_;
      if (from_home >= from_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].order = nullptr;
    --size_;
  }

  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < table_size_; ++i)
      if (slots_[i].order != nullptr) fn(slots_[i].key, static_cast<const Order*>(slots_[i].order));
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t table_size() const noexcept { return table_size_; }
  static constexpr std::size_t slot_size() noexcept { return sizeof(Slot); }

 private:
  NT_ALWAYS_INLINE std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>(core::mix64(key) >> shift_);
  }

  std::size_t capacity_;
  std::size_t table_size_;
  std::size_t mask_;
  unsigned shift_;  // 64 - log2(table_size_)
  std::size_t size_ = 0;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace nanotick::engine
