#include "common/rdtsc_timer.hpp"

namespace nanotick::bench {

LatencyRow timer_floor(std::size_t samples) {
  const auto& clock = core::TscClock::global();
  LatencyRow row{"timer floor (empty)", core::LatencyHistogram()};
  for (std::size_t s = 0; s < samples; ++s) {
    const std::uint64_t t0 = stamp_begin();
    const std::uint64_t t1 = stamp_end();
    row.ns.record(elapsed_ns(clock, t0, t1));
  }
  return row;
}

}  // namespace nanotick::bench
