// The gateway's acknowledgement latency (docs/EXCHANGE.md "Counters"), from
// the TCP read of an order message to its first answer: `written` once the
// answer's last byte was written to the socket, `ready` once it was handed
// to send() (the exchange's processing without the kernel's share of the
// write). The histograms are the gateway thread's alone; their summaries go
// into the counters file (place at start-up, publish once a second).
#pragma once

#include "core/counters_file.hpp"
#include "core/histogram.hpp"
#include "core/histogram_counters.hpp"

namespace nanotick::exchange {

struct AckLatency {
  core::LatencyHistogram written;
  core::LatencyHistogram ready;
  core::HistogramCounters written_summary;
  core::HistogramCounters ready_summary;

  // Under the names the exchange has always reported them by.
  void place(core::CountersFile& file) {
    written_summary.place(file, "ack_latency_ns");
    ready_summary.place(file, "ack_ready_latency_ns");
  }
  void publish() noexcept {
    written_summary.publish(written);
    ready_summary.publish(ready);
  }
};

}  // namespace nanotick::exchange
