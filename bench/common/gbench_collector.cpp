#include "common/gbench_collector.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace nanotick::bench {

void initialize_gbench(char* argv0, const GbenchSettings& settings) {
  char min_time[64];
  char reps[64];
  char warmup[64];
  std::snprintf(min_time, sizeof min_time, "--benchmark_min_time=%g", settings.min_time_s);
  std::snprintf(reps, sizeof reps, "--benchmark_repetitions=%d", settings.repetitions);
  std::snprintf(warmup, sizeof warmup, "--benchmark_min_warmup_time=%g", settings.min_warmup_s);
  char* gb_argv[] = {argv0, min_time, reps, warmup, nullptr};
  int gb_argc = 4;
  benchmark::Initialize(&gb_argc, gb_argv);
}

void Collector::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& r : runs) {
    if (r.error_occurred) {
      std::fprintf(stderr, "%s: %s failed: %s\n", program_, r.benchmark_name().c_str(), r.error_message.c_str());
      std::exit(1);
    }
    if (r.run_type != Run::RT_Iteration || r.iterations == 0) continue;
    const std::string& name = r.run_name.function_name;
    const double ops = static_cast<double>(r.iterations) * ops_per_iter.at(name);
    samples_[name].push_back(r.real_accumulated_time * 1e9 / ops);
  }
}

Result Collector::result(const std::string& name) const {
  std::vector<double> v = samples_.at(name);
  std::sort(v.begin(), v.end());
  Result res;
  res.median_ns = v[v.size() / 2];
  res.spread_pct = 100.0 * (v.back() - v.front()) / res.median_ns;
  return res;
}

std::string format_result(const Result& r, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f (±%.0f%%)", decimals, r.median_ns, r.spread_pct / 2);
  return buf;
}

}  // namespace nanotick::bench
