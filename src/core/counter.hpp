// A statistics counter with one writer and any number of readers: the writer
// increments with a plain load + store (no locked instruction on the hot
// path), readers on other threads get a recent value through a relaxed load.
// Thread-safety: exactly one writing thread per counter.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/compiler.hpp"

namespace nanotick::core {

class Counter {
 public:
  NT_ALWAYS_INLINE void add(std::uint64_t n = 1) noexcept {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  NT_ALWAYS_INLINE void set(std::uint64_t n) noexcept { v_.store(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

}  // namespace nanotick::core
