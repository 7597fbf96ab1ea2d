// A statistics counter with one writer and any number of readers: the writer
// increments with a plain load + store (no locked instruction on the hot
// path), readers on other threads -- or other processes -- get a recent value
// through a relaxed load.
//
// Where the value lives: in the counter itself until place() moves it into a
// slot of a counters file (core/counters_file.hpp), the memory-mapped file
// `./nanotick stat` reads from outside the process. Owners keep their
// counters as members and never know which; the process's wiring places
// them once at start-up. The cost of that choice is one pointer load per
// update (the pointer sits beside the owner's other fields).
//
// Thread-safety: exactly one writing thread per counter; place() only at
// start-up, before any thread other than the placing one touches the counter.
// Not copyable or movable: the slot pointer may point into the object itself.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

#include "core/compiler.hpp"

namespace nanotick::core {

class Counter {
 public:
  Counter() noexcept = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  NT_ALWAYS_INLINE void add(std::uint64_t n = 1) noexcept {
    slot_->store(slot_->load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  NT_ALWAYS_INLINE void set(std::uint64_t n) noexcept { slot_->store(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return slot_->load(std::memory_order_relaxed); }
  // A real-valued reading (PnL, a price): the slot holds the double's bits
  // (placed as CounterKind::kReal).
  void set_real(double v) noexcept { set(std::bit_cast<std::uint64_t>(v)); }
  double get_real() const noexcept { return std::bit_cast<double>(get()); }

  // Start-up only: from now on the value lives in `slot` (which gets the
  // value so far). A second place() moves it again.
  void place(std::atomic<std::uint64_t>& slot) noexcept {
    slot.store(get(), std::memory_order_relaxed);
    slot_ = &slot;
  }
  bool placed() const noexcept { return slot_ != &own_; }

 private:
  std::atomic<std::uint64_t> own_{0};
  std::atomic<std::uint64_t>* slot_ = &own_;
};

}  // namespace nanotick::core
