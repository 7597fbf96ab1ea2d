// SPSC queues: throughput and round-trip latency, ours beside its peers in one run.
//
//   nanotick::SpscRing              core::SpscRing<uint64_t, 4096>, try_push / try_pop
//   ... pop_batch(64)               same ring, consumer takes up to 64 per call
//   boost::lockfree::spsc_queue     compile-time capacity 4096, push / pop
//   ... pop(64)                     same queue, consumer takes up to 64 per call
//   moodycamel::ReaderWriterQueue   initial size 4096, try_enqueue / try_dequeue
//                                   (never allocates after construction)
//   cache-line ping-pong (floor)    two atomics on separate cache lines bouncing
//                                   a counter: the cost of moving one line each
//                                   way, which no queue can beat
//
// (a) Throughput: 8-byte items, producer pinned on cpu_a, consumer on cpu_b,
//     N items as fast as possible; rate = N / (last item consumed - start).
// (b) Round trip: the pinger (cpu_a) pushes into queue 1, the ponger (cpu_b)
//     pops it and pushes it into queue 2, the pinger pops it; each round trip
//     is timed with rdtsc/rdtscp and converted to ns with the calibrated
//     TscClock. Every busy-wait is a plain retry loop, the same for all queues.
// (c) Throughput as (a), but the consumer does ~50 ns of work per item (a
//     dependent multiply chain calibrated against TscClock at start-up), so
//     the ring is mostly full and the producer/consumer contention is on the
//     full side.
// Each measurement runs `repeats` times, queues interleaved within a repeat,
// after one discarded warm-up run per queue. The summary tables show the median
// throughput / all samples merged; the spread tables show the min-max across
// repeats. Peers linked: boost headers, moodycamel (header-only).
#include <readerwriterqueue/readerwriterqueue.h>

#include <algorithm>
#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/spsc_ring.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;

namespace {

constexpr std::size_t kCapacity = 4096;
constexpr std::size_t kBatch = 64;
constexpr double kWorkNs = 50.0;

const char* const kFloorName = "cache-line ping-pong (floor)";
const char* const kOurs = "nanotick::SpscRing";
const char* const kBoost = "boost::lockfree::spsc_queue";

struct Plan {
  std::uint64_t throughput_items;
  std::uint64_t work_items;
  int rtt_warmup;
  int rtt_samples;
  int repeats;
};

// ---- queue adapters: push / pop one, and consume(buf) -> items popped ------

struct OurRing {
  nc::SpscRing<std::uint64_t, kCapacity> q;
  bool push(std::uint64_t v) noexcept { return q.try_push(v); }
  bool pop(std::uint64_t& v) noexcept { return q.try_pop(v); }
  std::size_t consume(std::uint64_t* buf) noexcept { return pop(buf[0]) ? 1 : 0; }
};

struct OurRingBatch : OurRing {
  std::size_t consume(std::uint64_t* buf) noexcept { return q.pop_batch(buf, kBatch); }
};

struct BoostQueue {
  boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<kCapacity>> q;
  bool push(std::uint64_t v) noexcept { return q.push(v); }
  bool pop(std::uint64_t& v) noexcept { return q.pop(v); }
  std::size_t consume(std::uint64_t* buf) noexcept { return pop(buf[0]) ? 1 : 0; }
};

struct BoostQueueBatch : BoostQueue {
  std::size_t consume(std::uint64_t* buf) noexcept { return q.pop(buf, kBatch); }
};

struct MoodyQueue {
  moodycamel::ReaderWriterQueue<std::uint64_t> q{kCapacity};
  bool push(std::uint64_t v) noexcept { return q.try_enqueue(v); }
  bool pop(std::uint64_t& v) noexcept { return q.try_dequeue(v); }
  std::size_t consume(std::uint64_t* buf) noexcept { return pop(buf[0]) ? 1 : 0; }
};

// ---- consumer work ---------------------------------------------------------

// A dependent multiply-add chain the compiler cannot remove or shorten.
inline std::uint64_t busy_work(std::uint64_t iterations, std::uint64_t x) noexcept {
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// Iterations of busy_work that take `target_ns`, measured with TscClock (best of 7).
std::uint64_t calibrate_work(double target_ns) {
  const auto& clock = nc::TscClock::global();
  constexpr std::uint64_t kProbe = 1 << 20;
  double best_ns_per_iter = 1e9;
  std::uint64_t sink = 1;
  for (int i = 0; i < 7; ++i) {
    const std::uint64_t t0 = clock.now();
    sink = busy_work(kProbe, sink);
    const std::uint64_t t1 = clock.now();
    const double ns = static_cast<double>(clock.to_ns(static_cast<std::int64_t>(t1 - t0)));
    best_ns_per_iter = std::min(best_ns_per_iter, ns / static_cast<double>(kProbe));
  }
  asm volatile("" : : "r"(sink));
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(target_ns / best_ns_per_iter + 0.5));
}

void warn_pin(const nc::NamedThread& t) {
  if (t.pin_error()) {
    std::fprintf(stderr, "warning: could not pin %s to CPU %d: %s (numbers will be noisier)\n", t.name().c_str(),
                 t.cpu(), t.pin_error().message().c_str());
  }
}

// ---- (a)/(c) throughput ----------------------------------------------------

// Items per second from producer start to the last item consumed. The calling
// thread (pinned on cpu_a) produces 1..n; the consumer checks their sum.
template <typename Q>
double measure_throughput(const nb::Args& args, std::uint64_t n, std::uint64_t work_iters) {
  auto queue = std::make_unique<Q>();
  const auto& clock = nc::TscClock::global();
  std::atomic<bool> go{false};
  std::uint64_t end_ticks = 0;
  std::uint64_t sum = 0;
  nc::NamedThread consumer("ring-consumer", args.cpu_b, [&] {
    while (!go.load(std::memory_order_acquire)) {
    }
    std::uint64_t buf[kBatch];
    std::uint64_t got = 0;
    std::uint64_t s = 0;
    std::uint64_t x = 1;
    while (got < n) {
      const std::size_t k = queue->consume(buf);
      for (std::size_t i = 0; i < k; ++i) {
        s += buf[i];
        x = busy_work(work_iters, x);
      }
      got += k;
    }
    end_ticks = nc::rdtscp();
    asm volatile("" : : "r"(x));
    sum = s;
  });
  warn_pin(consumer);
  const std::uint64_t start_ticks = clock.now();
  go.store(true, std::memory_order_release);
  for (std::uint64_t i = 1; i <= n; ++i) {
    while (!queue->push(i)) {
    }
  }
  consumer.join();
  if (sum != n * (n + 1) / 2) {
    std::fprintf(stderr, "error: consumer sum mismatch (%llu != %llu): the queue lost items\n",
                 static_cast<unsigned long long>(sum), static_cast<unsigned long long>(n * (n + 1) / 2));
    std::exit(1);
  }
  const auto ns = clock.to_ns(static_cast<std::int64_t>(end_ticks - start_ticks));
  return static_cast<double>(n) * 1e9 / static_cast<double>(std::max<std::int64_t>(ns, 1));
}

// ---- (b) round trip ----------------------------------------------------------

template <typename Q>
void measure_round_trip(const nb::Args& args, int warmup, int samples, nc::LatencyHistogram& out) {
  auto ping = std::make_unique<Q>();
  auto pong = std::make_unique<Q>();
  const auto& clock = nc::TscClock::global();
  const int total = warmup + samples;
  nc::NamedThread ponger("ring-ponger", args.cpu_b, [&] {
    std::uint64_t v = 0;
    for (int i = 0; i < total; ++i) {
      while (!ping->pop(v)) {
      }
      while (!pong->push(v)) {
      }
    }
  });
  warn_pin(ponger);
  for (int i = 0; i < total; ++i) {
    std::uint64_t v = 0;
    const std::uint64_t t0 = nc::rdtsc();
    while (!ping->push(static_cast<std::uint64_t>(i))) {
    }
    while (!pong->pop(v)) {
    }
    const std::uint64_t t1 = nc::rdtscp();
    if (i >= warmup) {
      out.record(nb::elapsed_ns(clock, t0, t1));
    }
  }
  ponger.join();
}

// The floor: one cache line each way per round trip, nothing else.
void measure_ping_pong_floor(const nb::Args& args, int warmup, int samples, nc::LatencyHistogram& out) {
  struct Lines {
    alignas(nc::kCacheLine) std::atomic<std::uint64_t> ping{0};
    alignas(nc::kCacheLine) std::atomic<std::uint64_t> pong{0};
  };
  auto lines = std::make_unique<Lines>();
  const auto& clock = nc::TscClock::global();
  const std::uint64_t total = static_cast<std::uint64_t>(warmup + samples);
  nc::NamedThread ponger("ring-ponger", args.cpu_b, [&] {
    for (std::uint64_t i = 1; i <= total; ++i) {
      while (lines->ping.load(std::memory_order_acquire) != i) {
      }
      lines->pong.store(i, std::memory_order_release);
    }
  });
  warn_pin(ponger);
  for (std::uint64_t i = 1; i <= total; ++i) {
    const std::uint64_t t0 = nc::rdtsc();
    lines->ping.store(i, std::memory_order_release);
    while (lines->pong.load(std::memory_order_acquire) != i) {
    }
    const std::uint64_t t1 = nc::rdtscp();
    if (i > static_cast<std::uint64_t>(warmup)) {
      out.record(nb::elapsed_ns(clock, t0, t1));
    }
  }
  ponger.join();
}

// ---- tables ----------------------------------------------------------------

using nanotick::bench::Spread;
using nanotick::bench::spread_of;

struct ThroughputCase {
  using Run = std::function<double(std::uint64_t n, std::uint64_t work_iters)>;
  ThroughputCase(std::string n, Run r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  Run run;
  std::vector<double> per_repeat;
};

void run_throughput_section(const char* title, std::vector<ThroughputCase>& cases, std::uint64_t n,
                            std::uint64_t work_iters, int repeats) {
  for (auto& c : cases) {
    (void)c.run(std::max<std::uint64_t>(n / 10, 1000), work_iters);  // warm-up, discarded
  }
  for (int r = 0; r < repeats; ++r) {
    for (auto& c : cases) {
      c.per_repeat.push_back(c.run(n, work_iters));
    }
  }
  std::vector<nb::ThroughputRow> rows;
  for (const auto& c : cases) {
    rows.push_back({c.name, spread_of(c.per_repeat).median});
  }
  nb::print_throughput_table(title, rows, kBoost);
  std::printf("Spread across %d repeats of %llu items (M items/s):\n\n", repeats, static_cast<unsigned long long>(n));
  std::printf("| impl | median | min | max |\n|---|---:|---:|---:|\n");
  for (const auto& c : cases) {
    const Spread s = spread_of(c.per_repeat);
    std::printf("| %s | %.2f | %.2f | %.2f |\n", c.name.c_str(), s.median / 1e6, s.min / 1e6, s.max / 1e6);
  }
  std::printf("\n");
  std::fflush(stdout);
}

template <typename Q>
ThroughputCase throughput_case(const char* name, const nb::Args& args) {
  return {name,
          [&args](std::uint64_t n, std::uint64_t work_iters) { return measure_throughput<Q>(args, n, work_iters); }};
}

std::vector<ThroughputCase> throughput_cases(const nb::Args& args) {
  std::vector<ThroughputCase> cases;
  cases.push_back(throughput_case<OurRing>(kOurs, args));
  cases.push_back(throughput_case<OurRingBatch>("nanotick::SpscRing pop_batch(64)", args));
  cases.push_back(throughput_case<BoostQueue>(kBoost, args));
  cases.push_back(throughput_case<BoostQueueBatch>("boost spsc_queue pop(64)", args));
  cases.push_back(throughput_case<MoodyQueue>("moodycamel::ReaderWriterQueue", args));
  return cases;
}

struct LatencyCase {
  using Run = std::function<void(int warmup, int samples, nc::LatencyHistogram& out)>;
  LatencyCase(std::string n, Run r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  Run run;
  nc::LatencyHistogram merged;
  std::vector<double> p50s;
  std::vector<double> p99s;
};

template <typename Q>
LatencyCase latency_case(const char* name, const nb::Args& args) {
  return {name, [&args](int warmup, int samples, nc::LatencyHistogram& out) {
            measure_round_trip<Q>(args, warmup, samples, out);
          }};
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  nb::print_machine_header("ring_bench");
  nb::pin_or_warn(args.cpu_a);

  const Plan plan =
      args.quick ? Plan{200'000, 50'000, 1'000, 20'000, 3} : Plan{10'000'000, 2'000'000, 20'000, 200'000, 5};
  const std::uint64_t work_iters = calibrate_work(kWorkNs);
  std::printf(
      "8-byte items, capacity %zu, producer/pinger on CPU %d, consumer/ponger on CPU %d; "
      "%d repeats per measurement%s.\n\n",
      kCapacity, args.cpu_a, args.cpu_b, plan.repeats, args.quick ? " (--quick)" : "");

  // (a) throughput
  std::vector<ThroughputCase> tp = throughput_cases(args);
  run_throughput_section("(a) SPSC throughput, 8-byte items", tp, plan.throughput_items, 0, plan.repeats);

  // (b) round-trip latency
  std::vector<LatencyCase> lat;
  lat.push_back({kFloorName, [&args](int warmup, int samples, nc::LatencyHistogram& out) {
                   measure_ping_pong_floor(args, warmup, samples, out);
                 }});
  lat.push_back(latency_case<OurRing>(kOurs, args));
  lat.push_back(latency_case<BoostQueue>(kBoost, args));
  lat.push_back(latency_case<MoodyQueue>("moodycamel::ReaderWriterQueue", args));
  for (auto& c : lat) {
    nc::LatencyHistogram discard;
    c.run(plan.rtt_warmup, plan.rtt_samples / 10, discard);  // warm-up, discarded
  }
  for (int r = 0; r < plan.repeats; ++r) {
    for (auto& c : lat) {
      nc::LatencyHistogram h;
      c.run(plan.rtt_warmup, plan.rtt_samples, h);
      c.p50s.push_back(static_cast<double>(h.percentile(50)));
      c.p99s.push_back(static_cast<double>(h.percentile(99)));
      c.merged.merge(h);
    }
  }
  std::vector<nb::LatencyRow> rows;
  for (const auto& c : lat) {
    rows.push_back({c.name, c.merged});
  }
  nb::print_latency_table("(b) SPSC round trip (ping through one queue, pong back through another)", rows, kFloorName);
  std::printf("Spread across %d repeats of %d round trips (ns):\n\n", plan.repeats, plan.rtt_samples);
  std::printf(
      "| impl | p50 median | p50 min-max | p99 median | p99 min-max |\n"
      "|---|---:|---:|---:|---:|\n");
  for (const auto& c : lat) {
    const Spread p50 = spread_of(c.p50s);
    const Spread p99 = spread_of(c.p99s);
    std::printf("| %s | %s | %s-%s | %s | %s-%s |\n", c.name.c_str(), nb::format_ns(p50.median).c_str(),
                nb::format_ns(p50.min).c_str(), nb::format_ns(p50.max).c_str(), nb::format_ns(p99.median).c_str(),
                nb::format_ns(p99.min).c_str(), nb::format_ns(p99.max).c_str());
  }
  std::printf("\n");

  // (c) throughput with a slow consumer
  std::printf(
      "Consumer work: %llu iterations of a dependent multiply chain = ~%.0f ns per item."
      "\n\n",
      static_cast<unsigned long long>(work_iters), kWorkNs);
  std::vector<ThroughputCase> slow = throughput_cases(args);
  run_throughput_section("(c) SPSC throughput, consumer doing ~50 ns of work per item", slow, plan.work_items,
                         work_iters, plan.repeats);

  // The targets from the issue, stated against this run's own numbers.
  const auto median_p50 = [&lat](const char* name) {
    for (const auto& c : lat) {
      if (c.name == name) return spread_of(c.p50s).median;
    }
    return 0.0;
  };
  const auto median_rate = [&tp](const char* name) {
    for (const auto& c : tp) {
      if (c.name == name) return spread_of(c.per_repeat).median;
    }
    return 0.0;
  };
  const double ratio = median_p50(kOurs) / median_p50(kFloorName);
  const double vs_boost = median_rate(kOurs) / median_rate(kBoost);
  std::printf(
      "Targets (this run): SpscRing round-trip p50 = %.2fx floor (target <= 1.30x: %s); "
      "SpscRing throughput = %.2fx boost (target >= 1.00x: %s).\n",
      ratio, ratio <= 1.30 ? "met" : "NOT met", vs_boost, vs_boost >= 1.0 ? "met" : "NOT met");
  return 0;
}
