// The "key value" lines nanotick-floor prints at exit (and writes to
// --summary FILE), like the other binaries' summaries, so the demo reads them
// the same way (counters/floor.txt) and the report finds them there:
//   tick_to_trade_floor.{count,p50_ns,p90_ns,p99_ns,p99.9_ns,max_ns,mean_ns}
//   tick_to_trade_floor.{datagrams,truncated,recv_errors,short_writes,write_errors,bytes_sunk,sink_errors,seconds}
//   round_trip_floor.{count,p50_ns,...,mean_ns}
//   round_trip_floor.{pings,late_pings,short_writes,client_errors,answers,echo_errors,seconds,pings_per_s}
// Percentiles come from core::LatencyHistogram (nearest rank, reported as
// the bucket's highest value: within 0.79% of the sample), the same
// histogram the trader's own tick_to_trade_ns summary uses. An empty
// histogram prints count 0 and zero percentiles.
// Pure functions (allocate: exit-time code). Thread-safe.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/histogram.hpp"
#include "floor/round_trip_floor.hpp"
#include "floor/tick_to_trade_floor.hpp"
#include "ipc/stream_link.hpp"

namespace nanotick::floors {

namespace summary_detail {

inline void line(std::string& out, const std::string& key, const std::string& value) {
  out += key;
  out += ' ';
  out += value;
  out += '\n';
}

inline std::string real(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

inline void percentiles(std::string& out, const std::string& prefix, const core::LatencyHistogram& h) {
  line(out, prefix + ".count", std::to_string(h.count()));
  line(out, prefix + ".p50_ns", std::to_string(h.percentile(50)));
  line(out, prefix + ".p90_ns", std::to_string(h.percentile(90)));
  line(out, prefix + ".p99_ns", std::to_string(h.percentile(99)));
  line(out, prefix + ".p99.9_ns", std::to_string(h.percentile(99.9)));
  line(out, prefix + ".max_ns", std::to_string(h.max()));
  line(out, prefix + ".mean_ns", real(h.mean()));
}

// One "<prefix>.<name> <value>" line per count.
inline void counts(std::string& out, const std::string& prefix,
                   std::initializer_list<std::pair<const char*, std::uint64_t>> values) {
  for (const auto& [name, value] : values) line(out, prefix + "." + name, std::to_string(value));
}

}  // namespace summary_detail

// Which order-entry transport the floor stood for: "floor.order_entry_shm 1"
// (shared memory) or 0 (TCP). A number, like every summary value, so the
// one "key value" parser reads it (tools/report/floor.py names the floor by it).
inline std::string transport_summary(ipc::Transport t) {
  std::string out;
  summary_detail::line(out, "floor.order_entry_shm", t == ipc::Transport::kShm ? "1" : "0");
  return out;
}

inline std::string summary(const TickToTradeFloorResult& t) {
  using summary_detail::line;
  std::string out;
  const std::string k = "tick_to_trade_floor";
  summary_detail::percentiles(out, k, t.hop_ns);
  summary_detail::counts(out, k,
                         {{"datagrams", t.datagrams},
                          {"truncated", t.truncated},
                          {"recv_errors", t.recv_errors},
                          {"short_writes", t.short_writes},
                          {"write_errors", t.write_errors},
                          {"bytes_sunk", t.bytes_sunk},
                          {"sink_errors", t.sink_errors}});
  line(out, k + ".seconds", summary_detail::real(t.seconds));
  return out;
}

inline std::string summary(const RoundTripFloorResult& r, double pings_per_s) {
  using summary_detail::line;
  std::string out;
  const std::string k = "round_trip_floor";
  summary_detail::percentiles(out, k, r.round_trip_ns);
  summary_detail::counts(out, k,
                         {{"pings", r.pings},
                          {"late_pings", r.late_pings},
                          {"short_writes", r.short_writes},
                          {"client_errors", r.client_errors},
                          {"answers", r.answers},
                          {"echo_errors", r.echo_errors}});
  line(out, k + ".seconds", summary_detail::real(r.seconds));
  line(out, k + ".pings_per_s", summary_detail::real(pings_per_s));
  return out;
}

}  // namespace nanotick::floors
