// A latency histogram's summary as counters (count, p50, p99, p99.9, max, in
// the histogram's unit), so that `./nanotick stat` shows live percentiles of
// a histogram that stays private to its thread. The histogram's owner calls
// publish() from its own thread -- at a low rate (the processes do it once a
// second from a timer): each call scans the histogram's buckets up to the
// p99.9 rank, a few microseconds on that thread.
//
// Thread-safety: publish() and place() on the histogram's owning thread
// (place() at start-up); the values may be read from anywhere.
#pragma once

#include <string>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/histogram.hpp"

namespace nanotick::core {

struct HistogramCounters {
  Counter count;
  Counter p50;
  Counter p99;
  Counter p999;
  Counter max;

  void publish(const LatencyHistogram& h) noexcept {
    count.set(h.count());
    p50.set(h.percentile(50));
    p99.set(h.percentile(99));
    p999.set(h.percentile(99.9));
    max.set(h.max());
  }

  // Labels `<prefix>.count`, `.p50`, `.p99`, `.p99.9`, `.max`.
  void place(CountersFile& file, std::string_view prefix) {
    const std::string p(prefix);
    file.place(count, p + ".count");
    file.place(p50, p + ".p50", CounterKind::kGauge);
    file.place(p99, p + ".p99", CounterKind::kGauge);
    file.place(p999, p + ".p99.9", CounterKind::kGauge);
    file.place(max, p + ".max", CounterKind::kGauge);
  }
};

}  // namespace nanotick::core
