// Google Benchmark plumbing for benches that print their own Markdown tables:
// start-up settings, and a reporter that keeps the ns per operation of every
// repetition so a table can show the median and the spread. Used from the
// benchmark's main thread only (Google Benchmark reports on the thread that
// runs RunSpecifiedBenchmarks).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace nanotick::bench {

struct GbenchSettings {
  double min_time_s;    // --benchmark_min_time
  int repetitions;      // --benchmark_repetitions
  double min_warmup_s;  // --benchmark_min_warmup_time
};

// benchmark::Initialize with exactly these settings (argv0 names the program).
void initialize_gbench(char* argv0, const GbenchSettings& settings);

// One benchmark over its repetitions.
struct Result {
  double median_ns = 0;   // ns per operation
  double spread_pct = 0;  // (max - min) / median over the repetitions
};

// Collects ns per operation for each benchmark, by name. A benchmark that
// reports an error ends the process (exit 1) with "<program>: <name> failed".
class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(const char* program) : program_(program) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override;

  // Operations one iteration performs; set for every benchmark before it runs.
  std::map<std::string, double> ops_per_iter;

  // The median and spread of the repetitions of benchmark `name`.
  Result result(const std::string& name) const;

 private:
  const char* program_;
  std::map<std::string, std::vector<double>> samples_;
};

// "12.3 (±4%)": the median with `decimals` decimals, ± half the spread.
std::string format_result(const Result& r, int decimals);

}  // namespace nanotick::bench
