// Per-call latency with the TSC: a fenced stamp pair around the code being
// timed, and the "timer floor" row (an empty timed region) that every table of
// such samples prints beside its peers, since each sample includes it.
// Stateless functions, safe from any thread; timer_floor() reads the global
// TscClock.
#pragma once

#include <x86intrin.h>

#include <cstddef>
#include <cstdint>

#include "common/bench_util.hpp"
#include "core/compiler.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {

// Start stamp: lfence before (earlier work has finished) and after (the timed
// code does not start before the TSC is read).
NT_ALWAYS_INLINE std::uint64_t stamp_begin() noexcept {
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// End stamp: rdtscp waits for the timed code; the lfence keeps later work out.
NT_ALWAYS_INLINE std::uint64_t stamp_end() noexcept {
  const std::uint64_t t = core::rdtscp();
  _mm_lfence();
  return t;
}

// TSC ticks from t0 to t1, in nanoseconds, as a histogram sample.
NT_ALWAYS_INLINE std::uint64_t elapsed_ns(const core::TscClock& clock, std::uint64_t t0, std::uint64_t t1) noexcept {
  return static_cast<std::uint64_t>(clock.to_ns(static_cast<std::int64_t>(t1 - t0)));
}

// `samples` empty stamp_begin()/stamp_end() regions, as the row
// "timer floor (empty)".
LatencyRow timer_floor(std::size_t samples);

}  // namespace nanotick::bench
