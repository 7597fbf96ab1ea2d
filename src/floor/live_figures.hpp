// LiveFigures: a floor's running count and p50 / p99, published by the
// thread that owns the histogram so that another thread (the app's status
// line, a test waiting for samples) can read them without touching the
// histogram, which has a single writer and no synchronisation. The owner
// calls maybe_publish() after each sample: the count is stored every time (a
// relaxed store); once per period (1 s of TSC ticks by default) the two
// percentiles are computed (a walk over the buckets: a few microseconds) and
// stored too. That work happens between samples, never inside a timed span. Thread-safety: maybe_publish() from the
// owning thread only; the getters from any thread (relaxed loads: each value is recent, the three are not a consistent
// snapshot).
#pragma once

#include <cstdint>

#include "core/counter.hpp"
#include "core/histogram.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::floors {

class LiveFigures {
 public:
  explicit LiveFigures(const core::TscClock& clock = core::TscClock::global(), double period_s = 1.0)
      : period_ticks_(static_cast<std::uint64_t>(clock.ticks_from_ns(core::ns_from_sec(period_s)))) {}

  // `now` is a TSC the owner already read (no extra clock read here).
  void maybe_publish(const core::LatencyHistogram& h, std::uint64_t now) noexcept {
    count_.set(h.count());
    if (now - last_ < period_ticks_) return;
    last_ = now;
    publish(h);
  }
  void publish(const core::LatencyHistogram& h) noexcept {
    count_.set(h.count());
    p50_ns_.set(h.percentile(50));
    p99_ns_.set(h.percentile(99));
  }

  std::uint64_t count() const noexcept { return count_.get(); }
  std::uint64_t p50_ns() const noexcept { return p50_ns_.get(); }
  std::uint64_t p99_ns() const noexcept { return p99_ns_.get(); }

 private:
  std::uint64_t period_ticks_;
  std::uint64_t last_ = 0;
  core::Counter count_;
  core::Counter p50_ns_;
  core::Counter p99_ns_;
};

}  // namespace nanotick::floors
