// The keys of an instrument's most recently finished orders, to tell a late
// cancel/modify (kTooLateToCancel) from one naming an order never seen
// (kUnknownOrder); see docs/MATCHING.md "Finished orders". Not thread-safe:
// the engine's thread owns it.
//
// A fixed ring of the last `capacity` keys (oldest overwritten first) plus a
// counted hash map key -> number of ring entries holding it, so a key stays
// "finished" while any remembered entry has it, and lookups are O(1). All
// storage is allocated and pre-faulted in the constructor.
#pragma once

#include <cstdint>
#include <memory>

#include "core/compiler.hpp"
#include "core/int_hash_map.hpp"

namespace nanotick::engine {

class FinishedOrders {
 public:
  explicit FinishedOrders(std::uint32_t capacity)
      : capacity_(capacity), ring_(std::make_unique<std::uint64_t[]>(capacity)), counts_(capacity) {}

  // Remembers `key`; forgets the oldest entry when full.
  NT_ALWAYS_INLINE void add(std::uint64_t key) noexcept {
    if (size_ == capacity_) {
      const std::uint64_t old = ring_[head_];
      std::uint32_t* c = counts_.find(old);
      NT_DEBUG_ASSERT(c != nullptr, "FinishedOrders: ring entry without a count");
      if (--*c == 0) (void)counts_.erase(old);
    } else {
      ++size_;
    }
    ring_[head_] = key;
    head_ = head_ + 1 == capacity_ ? 0 : head_ + 1;
    if (std::uint32_t* c = counts_.find(key); c != nullptr) {
      ++*c;
    } else {
      (void)counts_.insert(key, 1u);  // cannot be kFull: distinct keys <= ring entries <= capacity
    }
  }

  NT_ALWAYS_INLINE bool contains(std::uint64_t key) const noexcept { return counts_.contains(key); }

  std::uint32_t size() const noexcept { return size_; }
  std::uint32_t capacity() const noexcept { return capacity_; }
  std::size_t distinct_keys() const noexcept { return counts_.size(); }

  // Sum of the counts must equal size() (for invariant checks).
  std::uint64_t total_count() const noexcept {
    std::uint64_t n = 0;
    counts_.for_each([&n](std::uint64_t, std::uint32_t c) { n += c; });
    return n;
  }
  // How many remembered entries hold `key`.
  std::uint32_t count_of(std::uint64_t key) const noexcept {
    const std::uint32_t* c = counts_.find(key);
    return c != nullptr ? *c : 0;
  }

  std::size_t bytes() const noexcept {
    return std::size_t{capacity_} * sizeof(std::uint64_t) +
           counts_.table_size() * (sizeof(std::uint64_t) * 2) + counts_.table_size() / 8;
  }

 private:
  std::uint32_t capacity_;
  std::uint32_t size_ = 0;
  std::uint32_t head_ = 0;  // next ring position to write (the oldest entry when full)
  std::unique_ptr<std::uint64_t[]> ring_;
  core::IntHashMap<std::uint64_t, std::uint32_t> counts_;
};

}  // namespace nanotick::engine
