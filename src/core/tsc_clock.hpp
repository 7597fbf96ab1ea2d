// Calibrated time-stamp-counter clock. TscClock is immutable after construction
// and therefore thread-safe; global() is calibrated once, on first call.
//
// now() returns raw ticks: the TSC where it is invariant (constant rate, not
// stopped in deep C-states: "constant_tsc" and "nonstop_tsc"), otherwise
// steady-clock nanoseconds. The tick rate is measured at start-up against the
// steady clock — never a hard-coded GHz — so converting needs the clock object.
#pragma once

#include <x86intrin.h>
#include <chrono>
#include <cstdint>

#include "core/compiler.hpp"

namespace nanotick::core {

// Raw TSC. Not ordered with surrounding loads and stores: cheap, for stamps.
NT_ALWAYS_INLINE std::uint64_t rdtsc() noexcept { return __rdtsc(); }

// TSC read after all earlier instructions have executed (rdtscp semantics);
// use at the end of a timed region.
NT_ALWAYS_INLINE std::uint64_t rdtscp() noexcept {
  unsigned aux;
  return __rdtscp(&aux);
}

class TscClock {
 public:
  // Measures the TSC rate against the steady clock over `window` (repeated,
  // median taken). Falls back to the steady clock if the TSC is not invariant.
  static TscClock calibrate(std::chrono::milliseconds window = std::chrono::milliseconds(20));

  // A steady-clock-only clock (ticks are ns). For tests and for machines
  // without an invariant TSC.
  static TscClock steady_fallback();

  // Process-wide clock, calibrated once on first call (thread-safe static).
  static const TscClock& global();

  NT_ALWAYS_INLINE std::uint64_t now() const noexcept {
    if (uses_tsc_) [[likely]]
      return rdtsc();
    return steady_ns();
  }

  double ticks_per_ns() const noexcept { return ticks_per_ns_; }
  bool uses_tsc() const noexcept { return uses_tsc_; }

  // Duration in ticks -> nanoseconds.
  std::int64_t to_ns(std::int64_t ticks) const noexcept {
    return static_cast<std::int64_t>(static_cast<double>(ticks) * ns_per_tick_);
  }
  // now() in nanoseconds (since the tick origin, not the epoch): the one clock
  // for timers, timeouts and intervals.
  std::uint64_t now_ns() const noexcept { return static_cast<std::uint64_t>(to_ns(static_cast<std::int64_t>(now()))); }
  // Duration in nanoseconds -> ticks (periods set at start-up).
  double ticks_from_ns(double ns) const noexcept { return ns * ticks_per_ns_; }
  // A now() value -> wall-clock nanoseconds since the Unix epoch.
  std::int64_t to_epoch_ns(std::uint64_t ticks) const noexcept {
    return epoch_ns_at_base_ + to_ns(static_cast<std::int64_t>(ticks) - static_cast<std::int64_t>(base_ticks_));
  }

  // True when /proc/cpuinfo (or CPUID) reports an invariant TSC.
  static bool tsc_is_invariant() noexcept;

 private:
  TscClock(bool uses_tsc, double ticks_per_ns, std::uint64_t base_ticks, std::int64_t epoch_ns);
  static std::uint64_t steady_ns() noexcept {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }

  bool uses_tsc_;
  double ticks_per_ns_;
  double ns_per_tick_;
  std::uint64_t base_ticks_;       // now() at calibration end
  std::int64_t epoch_ns_at_base_;  // system_clock at the same moment
};

}  // namespace nanotick::core
