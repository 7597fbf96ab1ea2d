// Shared plumbing for the bench/ executables: argument parsing, pinning, the
// machine header, and Markdown tables that put our code beside its peers.
// Functions here are called from the benchmark's main thread only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.hpp"

namespace nanotick::bench {

struct Args {
  bool quick = false;  // tiny counts: a smoke run that keeps the bench working
  int cpu_a = 0;       // producer / pinger
  int cpu_b = 1;       // consumer / ponger / back end
};

// Parses --quick, --cpus A,B and --help; prints a clear message and exits(2)
// on anything else.
Args parse_args(int argc, char** argv);

// Pins the calling thread to `cpu`, printing a warning (not failing) if it can't.
void pin_or_warn(int cpu);

// Prints the bench name, CPU model, allowed CPUs, calibrated TSC rate, kernel
// and build flavour, so every table carries the machine it was measured on.
void print_machine_header(const char* bench_name);

// /proc/loadavg's 1, 5 and 15 minute figures ("0.52 0.61 0.70"): the noise
// a shared machine adds, printed beside a run's results.
std::string load_average();

struct LatencyRow {
  std::string name;
  core::LatencyHistogram ns;  // samples in nanoseconds
};
// impl | samples | mean | p50 | p90 | p99 | p99.9 | max | p50 vs <baseline>
void print_latency_table(std::string_view title, const std::vector<LatencyRow>& rows, std::string_view baseline_name);

struct ThroughputRow {
  std::string name;
  double per_second;
};
// impl | M ops/s | vs <baseline>
void print_throughput_table(std::string_view title, const std::vector<ThroughputRow>& rows,
                            std::string_view baseline_name);

// Median and range of repeated measurements (empty input: all zero).
struct Spread {
  double median;
  double min;
  double max;
};
Spread spread_of(std::vector<double> values);

// Formats a nanosecond figure compactly ("23", "1.2k", "3.4M").
std::string format_ns(double ns);

// Formats a ratio as "1.23x".
std::string format_ratio(double ratio);

}  // namespace nanotick::bench
