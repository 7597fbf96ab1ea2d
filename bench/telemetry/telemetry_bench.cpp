// Telemetry overhead: what NT_HOP and NT_TIMED cost the instrumented thread,
// beside what the same hop would cost through its alternatives, in one run.
//
//   empty loop              the loop alone: what the macros cost when compiled
//                           out (NANOTICK_TELEMETRY=OFF expands them to nothing)
//   NT_HOP / NT_TIMED,      the thread has no recorder bound: one thread_local
//   no recorder             load and a branch
//   NT_HOP / NT_TIMED,      bound to a recorder that a running Writer drains to
//   recorder bound          a file (the real set-up); NT_TIMED times an empty
//                           scope, so it is two clock reads and one record
//   TscClock::now() only    peer floor: the clock read every stamp needs
//   NT_LOG_INFO (same ids)  peer: logging the hop with core::Logger (binary
//                           copy into its ring, formatted by its back end)
//
// Each sample is a burst of 256 calls timed once with a fenced TSC pair and
// divided by 256 (timer floor and TSC granularity amortized away); bursts are
// separated by a 20 us spin so the back ends can keep up (drops are counted
// and printed: on a busy machine the back end's CPU may be taken away for
// longer than a ring lasts). Values are ns per call. The recording thread is pinned to cpu_a,
// the writer's and logger's back ends to cpu_b. Files go to a temporary
// directory removed at the end. --quick: a few bursts (smoke run).
#include <immintrin.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/logger.hpp"
#include "core/tsc_clock.hpp"
#include "telemetry/instrument.hpp"
#include "telemetry/writer.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace nt = nanotick::telemetry;

namespace {

constexpr int kBurst = 256;

// Keeps the compiler from merging or removing loop iterations of the empty
// and peer cases (the macros have side effects of their own).
NT_ALWAYS_INLINE void barrier() noexcept { asm volatile("" ::: "memory"); }

void spin_ns(const nc::TscClock& clock, std::int64_t ns) {
  const std::uint64_t start = clock.now();
  while (clock.to_ns(static_cast<std::int64_t>(clock.now() - start)) < ns) _mm_pause();
}

// Per-call cost in picoseconds (the histogram holds integers; ns would round
// a 5.4 ns call to 5), one sample per burst.
template <class Body>
nc::LatencyHistogram measure(int warmup, int bursts, Body&& body) {
  const auto& clock = nc::TscClock::global();
  nc::LatencyHistogram ps;
  std::uint64_t key = 0;
  for (int b = 0; b < warmup + bursts; ++b) {
    const std::uint64_t t0 = nb::stamp_begin();
    for (int i = 0; i < kBurst; ++i) {
      body(key++);
      barrier();
    }
    const std::uint64_t t1 = nb::stamp_end();
    if (b >= warmup) {
      const double ns = static_cast<double>(clock.to_ns(static_cast<std::int64_t>((t1 - t0) * 1000)));
      ps.record(static_cast<std::uint64_t>(ns / kBurst));
    }
    spin_ns(clock, 20'000);
  }
  return ps;
}

struct Row {
  std::string name;
  nc::LatencyHistogram ps;
};

std::string ns_text(std::uint64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(ps) / 1000.0);
  return buf;
}

void print_table(const std::vector<Row>& rows, const std::string& baseline) {
  double base = 0;
  for (const Row& r : rows)
    if (r.name == baseline) base = static_cast<double>(r.ps.percentile(50));
  std::printf("### Cost per call on the recording thread (ns, amortized over bursts of %d)\n\n", kBurst);
  std::printf("| impl | bursts | mean | p50 | p90 | p99 | p99.9 | max | p50 vs %s |\n", baseline.c_str());
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double p50 = static_cast<double>(r.ps.percentile(50));
    std::printf("| %s | %llu | %.1f | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                static_cast<unsigned long long>(r.ps.count()), r.ps.mean() / 1000.0,
                ns_text(r.ps.percentile(50)).c_str(), ns_text(r.ps.percentile(90)).c_str(),
                ns_text(r.ps.percentile(99)).c_str(), ns_text(r.ps.percentile(99.9)).c_str(),
                ns_text(r.ps.max()).c_str(), base > 0 ? nb::format_ratio(p50 / base).c_str() : "n/a");
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  nb::print_machine_header("telemetry_bench: NT_HOP / NT_TIMED overhead");
#if !NANOTICK_TELEMETRY
  std::printf("built with NANOTICK_TELEMETRY=OFF: the macro rows measure compiled-out macros\n\n");
#endif
  nb::pin_or_warn(args.cpu_a);
  const int warmup = args.quick ? 10 : 2'000;
  const int bursts = args.quick ? 50 : 20'000;

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nanotick_telemetry_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<Row> rows;
  std::uint64_t dropped = 0;
  std::uint64_t written = 0;
  std::uint64_t log_dropped = 0;
  {
    nt::WriterOptions options;
    options.path = (dir / "bench.ntt").string();
    options.process_name = "telemetry_bench";
    options.cpu = args.cpu_b;
    nt::Writer writer(options);
    nt::Recorder& recorder = writer.create_recorder("main");
    writer.start();

    rows.push_back({"empty loop (= compiled out)", measure(warmup, bursts, [](std::uint64_t) {})});
    rows.push_back(
        {"NT_HOP, no recorder", measure(warmup, bursts, [](std::uint64_t key) { NT_HOP(ex_tcp_read, key); })});
    rows.push_back({"NT_TIMED, no recorder", measure(warmup, bursts, [](std::uint64_t) { NT_TIMED(fn_book_add); })});
    {
      const nt::ThreadBinding binding(recorder);
      rows.push_back(
          {"NT_HOP, recorder bound", measure(warmup, bursts, [](std::uint64_t key) { NT_HOP(ex_tcp_read, key); })});
      rows.push_back({"NT_HOP with aux, recorder bound",
                      measure(warmup, bursts, [](std::uint64_t key) { NT_HOP(tr_decision, key, key + 1); })});
      rows.push_back(
          {"NT_TIMED, recorder bound", measure(warmup, bursts, [](std::uint64_t) { NT_TIMED(fn_book_add); })});
    }
    const auto& clock = nc::TscClock::global();
    volatile std::uint64_t sink = 0;
    rows.push_back({"TscClock::now() only", measure(warmup, bursts, [&](std::uint64_t) { sink = clock.now(); })});
    static_cast<void>(sink);
    {
      nc::LoggerOptions lo;
      lo.path = (dir / "bench.log").string();
      lo.backend_cpu = args.cpu_b;
      nc::Logger logger(lo);
      rows.push_back({"NT_LOG_INFO (same ids)", measure(warmup, bursts, [&](std::uint64_t key) {
                        NT_LOG_INFO(logger, "hop ex_tcp_read key={}", key);
                      })});
      logger.stop();
      log_dropped = logger.dropped();
    }
    writer.stop();
    dropped = writer.dropped();
    written = writer.records_written();
    if (!writer.error().empty()) std::fprintf(stderr, "telemetry_bench: %s\n", writer.error().c_str());
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);

  print_table(rows, "NT_HOP, recorder bound");
  std::printf("records written by the telemetry writer: %llu, dropped: %llu; logger records dropped: %llu\n",
              static_cast<unsigned long long>(written), static_cast<unsigned long long>(dropped),
              static_cast<unsigned long long>(log_dropped));
  if (dropped != 0) {
    // Not a failure of the measurement (a refused record costs the caller no
    // more than a kept one), but worth knowing: the writer's CPU was taken
    // away for longer than a ring's worth of records (a busy machine).
    std::printf("note: drops mean the writer thread on CPU %d was descheduled for over %zu records\n", args.cpu_b,
                nt::Recorder::kCapacity);
  }
  return 0;
}
