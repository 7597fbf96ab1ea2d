#include "common/bench_util.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/thread.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {

namespace {

[[noreturn]] void usage_exit(const char* prog, const char* problem) {
  if (problem) std::fprintf(stderr, "%s: %s\n", prog, problem);
  std::fprintf(stderr,
               "usage: %s [--quick] [--cpus A,B]\n"
               "  --quick     tiny iteration counts (smoke run)\n"
               "  --cpus A,B  CPUs for the two sides of the measurement (default 0,1)\n",
               prog);
  std::exit(problem ? 2 : 0);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

const core::LatencyHistogram* find_row(const std::vector<LatencyRow>& rows, std::string_view name) {
  for (const auto& r : rows)
    if (r.name == name) return &r.ns;
  return nullptr;
}

}  // namespace

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      args.quick = true;
    } else if (a == "--cpus") {
      if (i + 1 >= argc) usage_exit(argv[0], "--cpus needs A,B");
      int x = -1, y = -1;
      char extra = 0;
      if (std::sscanf(argv[++i], "%d,%d%c", &x, &y, &extra) != 2 || x < 0 || y < 0)
        usage_exit(argv[0], "--cpus expects two non-negative CPU numbers, e.g. --cpus 0,1");
      args.cpu_a = x;
      args.cpu_b = y;
    } else if (a == "--help" || a == "-h") {
      usage_exit(argv[0], nullptr);
    } else {
      const std::string msg = "unknown argument '" + a + "'";
      usage_exit(argv[0], msg.c_str());
    }
  }
  return args;
}

void pin_or_warn(int cpu) {
  if (auto ec = core::pin_current_thread(cpu))
    std::fprintf(stderr, "warning: could not pin thread to CPU %d: %s (numbers will be noisier)\n", cpu,
                 ec.message().c_str());
}

void print_machine_header(const char* bench_name) {
  const auto& clock = core::TscClock::global();
  utsname u{};
  uname(&u);
#ifdef NDEBUG
  const char* build = "release";
#else
  const char* build = "NOT RELEASE (asserts on)";
#endif
  std::printf("## %s\n\n", bench_name);
  std::printf("- CPU: %s, %d CPUs allowed\n", cpu_model().c_str(), core::allowed_cpu_count());
  if (clock.uses_tsc())
    std::printf("- clock: invariant TSC calibrated at %.3f GHz against steady_clock\n", clock.ticks_per_ns());
  else std::printf("- clock: steady_clock (TSC not invariant here)\n");
  std::printf("- kernel: %s %s; build: %s\n\n", u.sysname, u.release, build);
  std::fflush(stdout);
}

Spread spread_of(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, v.front(), v.back()};
}

std::string format_ns(double ns) {
  char buf[32];
  if (ns < 10) std::snprintf(buf, sizeof buf, "%.1f", ns);
  else if (ns < 10'000) std::snprintf(buf, sizeof buf, "%.0f", ns);
  else if (ns < 10'000'000) std::snprintf(buf, sizeof buf, "%.1fk", ns / 1e3);
  else std::snprintf(buf, sizeof buf, "%.1fM", ns / 1e6);
  return buf;
}

std::string format_ratio(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", ratio);
  return buf;
}

void print_latency_table(std::string_view title, const std::vector<LatencyRow>& rows, std::string_view baseline_name) {
  const auto* base = find_row(rows, baseline_name);
  const double base_p50 = base ? static_cast<double>(base->percentile(50)) : 0.0;
  std::printf("### %.*s (ns)\n\n", static_cast<int>(title.size()), title.data());
  std::printf("| impl | samples | mean | p50 | p90 | p99 | p99.9 | max | p50 vs %.*s |\n",
              static_cast<int>(baseline_name.size()), baseline_name.data());
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows) {
    const auto& h = r.ns;
    const std::string ratio = base_p50 > 0 ? format_ratio(static_cast<double>(h.percentile(50)) / base_p50) : "n/a";
    std::printf("| %s | %llu | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                static_cast<unsigned long long>(h.count()), format_ns(h.mean()).c_str(),
                format_ns(static_cast<double>(h.percentile(50))).c_str(),
                format_ns(static_cast<double>(h.percentile(90))).c_str(),
                format_ns(static_cast<double>(h.percentile(99))).c_str(),
                format_ns(static_cast<double>(h.percentile(99.9))).c_str(),
                format_ns(static_cast<double>(h.max())).c_str(), ratio.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

void print_throughput_table(std::string_view title, const std::vector<ThroughputRow>& rows,
                            std::string_view baseline_name) {
  double base = 0;
  for (const auto& r : rows)
    if (r.name == baseline_name) base = r.per_second;
  std::printf("### %.*s\n\n", static_cast<int>(title.size()), title.data());
  std::printf("| impl | M ops/s | vs %.*s |\n|---|---:|---:|\n", static_cast<int>(baseline_name.size()),
              baseline_name.data());
  for (const auto& r : rows) {
    if (base > 0) std::printf("| %s | %.2f | %.2fx |\n", r.name.c_str(), r.per_second / 1e6, r.per_second / base);
    else std::printf("| %s | %.2f | n/a |\n", r.name.c_str(), r.per_second / 1e6);
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace nanotick::bench
