// ObjectPool vs malloc/free, new/delete and mimalloc (mi_malloc/mi_free) for a
// 64-byte order-like object, measured side by side in one run.
//
// Throughput (Google Benchmark, median of repetitions, ns per alloc+free pair):
//   - "1 live": allocate then immediately free (the best case for every allocator).
//   - "N live, random frees": N objects live; each step frees a batch of 32
//     objects picked in random order and allocates 32 replacements, so free
//     lists get shuffled the way an order book's do.
// Latency (rdtsc around each single call, same random-free pattern, 10K live):
//   one table for allocate, one for release, with the timer floor as a row.
//
// Peers linked: mimalloc (see bench/CMakeLists.txt).
#include <benchmark/benchmark.h>
#include <mimalloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/bench_util.hpp"
#include "common/gbench_collector.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/object_pool.hpp"
#include "core/tsc_clock.hpp"

namespace {

namespace nb = nanotick::bench;
namespace nc = nanotick::core;

// An order as a venue would keep it: 64 bytes, one cache line.
struct Order {
  Order(std::uint64_t id_, std::int64_t price_, std::uint32_t qty_) : id(id_), price(price_), qty(qty_), leaves(qty_) {}
  std::uint64_t id;
  std::int64_t price;
  std::uint32_t qty;
  std::uint32_t leaves;
  std::uint32_t instrument = 0;
  std::uint8_t side = 0;
  std::uint8_t flags = 0;
  std::uint16_t session = 0;
  Order* prev = nullptr;  // intrusive price-level queue links
  Order* next = nullptr;
  std::uint64_t client_order_id = 0;
  std::uint64_t timestamp = 0;
};
static_assert(sizeof(Order) == 64);

// --- the allocators under test -------------------------------------------------

struct PoolAlloc {
  static constexpr const char* kName = "ObjectPool";
  explicit PoolAlloc(std::size_t max_live) : pool(max_live) {}
  Order* make(std::uint64_t id) noexcept { return pool.allocate(id, std::int64_t{100}, std::uint32_t{10}); }
  void drop(Order* o) noexcept { pool.release(o); }
  nc::ObjectPool<Order> pool;
};

struct MallocAlloc {
  static constexpr const char* kName = "malloc/free";
  explicit MallocAlloc(std::size_t) {}
  static Order* make(std::uint64_t id) noexcept {
    void* p = std::malloc(sizeof(Order));
    if (p == nullptr) std::abort();
    return ::new (p) Order(id, 100, 10);
  }
  static void drop(Order* o) noexcept {
    o->~Order();
    std::free(o);
  }
};

struct NewDeleteAlloc {
  static constexpr const char* kName = "new/delete";
  explicit NewDeleteAlloc(std::size_t) {}
  static Order* make(std::uint64_t id) { return new Order(id, 100, 10); }
  static void drop(Order* o) noexcept { delete o; }
};

struct MiAlloc {
  static constexpr const char* kName = "mimalloc";
  explicit MiAlloc(std::size_t) {}
  static Order* make(std::uint64_t id) noexcept {
    void* p = mi_malloc(sizeof(Order));
    if (p == nullptr) std::abort();
    return ::new (p) Order(id, 100, 10);
  }
  static void drop(Order* o) noexcept {
    o->~Order();
    mi_free(o);
  }
};

constexpr std::size_t kBatch = 32;

// N live objects; step() frees a batch of 32 picked from a fixed random
// permutation and allocates replacements in the same places.
template <typename A>
struct Churn {
  Churn(std::size_t n, std::uint64_t seed) : alloc(n), live(n), order(n) {
    for (std::size_t i = 0; i < n; ++i) live[i] = alloc.make(i);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    for (std::size_t i = 0; i < n / kBatch; ++i) step();  // warm-up: one full pass
  }
  ~Churn() {
    for (Order* o : live) alloc.drop(o);
  }
  Churn(const Churn&) = delete;
  Churn& operator=(const Churn&) = delete;

  NT_ALWAYS_INLINE const std::uint32_t* next_batch() noexcept {
    const std::uint32_t* b = &order[cursor];
    cursor += kBatch;
    if (cursor == order.size()) cursor = 0;
    return b;
  }
  void step() noexcept {
    const std::uint32_t* b = next_batch();
    for (std::size_t j = 0; j < kBatch; ++j) alloc.drop(live[b[j]]);
    for (std::size_t j = 0; j < kBatch; ++j) {
      live[b[j]] = alloc.make(++serial);
      benchmark::DoNotOptimize(live[b[j]]);
    }
  }

  A alloc;
  std::vector<Order*> live;
  std::vector<std::uint32_t> order;
  std::size_t cursor = 0;
  std::uint64_t serial = 0;
};

// --- Google Benchmark registration ------------------------------------------------

struct Scenario {
  std::string label;
  std::size_t live;  // 0 = immediate pair
};

template <typename A>
void register_scenarios(const std::vector<Scenario>& scenarios, std::map<std::string, double>& ops,
                        std::vector<std::unique_ptr<Churn<A>>>& keep) {
  for (const auto& s : scenarios) {
    const std::string name = s.label + "/" + A::kName;
    if (s.live == 0) {
      ops[name] = 1;
      benchmark::RegisterBenchmark(name.c_str(), [](benchmark::State& st) {
        A alloc(1);
        std::uint64_t id = 0;
        for (auto _ : st) {
          Order* o = alloc.make(++id);
          benchmark::DoNotOptimize(o);
          alloc.drop(o);
          benchmark::ClobberMemory();
        }
      });
    } else {
      keep.push_back(std::make_unique<Churn<A>>(s.live, 42));
      Churn<A>* churn = keep.back().get();
      ops[name] = kBatch;
      benchmark::RegisterBenchmark(name.c_str(), [churn](benchmark::State& st) {
        for (auto _ : st) churn->step();
      });
    }
  }
}

// --- rdtsc latency harness -----------------------------------------------------

template <typename A>
void measure_latency(std::size_t live, std::size_t samples, nb::LatencyRow& alloc_row, nb::LatencyRow& free_row) {
  const auto& clock = nc::TscClock::global();
  Churn<A> churn(live, 7);
  alloc_row.name = free_row.name = A::kName;
  for (std::size_t done = 0; done < samples; done += kBatch) {
    const std::uint32_t* b = churn.next_batch();
    for (std::size_t j = 0; j < kBatch; ++j) {
      Order* o = churn.live[b[j]];
      const std::uint64_t t0 = nb::stamp_begin();
      churn.alloc.drop(o);
      const std::uint64_t t1 = nb::stamp_end();
      free_row.ns.record(nb::elapsed_ns(clock, t0, t1));
    }
    for (std::size_t j = 0; j < kBatch; ++j) {
      const std::uint64_t t0 = nb::stamp_begin();
      Order* o = churn.alloc.make(++churn.serial);
      const std::uint64_t t1 = nb::stamp_end();
      benchmark::DoNotOptimize(o);
      churn.live[b[j]] = o;
      alloc_row.ns.record(nb::elapsed_ns(clock, t0, t1));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  nb::print_machine_header("pool_bench: ObjectPool vs malloc, new/delete, mimalloc (64-byte order)");
  nb::pin_or_warn(args.cpu_a);  // after the header, so it reports the CPUs the process may use

  const nb::GbenchSettings gbench = args.quick ? nb::GbenchSettings{0.01, 1, 0.005} : nb::GbenchSettings{0.2, 5, 0.05};
  nb::initialize_gbench(argv[0], gbench);

  const std::vector<Scenario> scenarios = {
      {"1 live (alloc, free)", 0},
      {"10K live, random frees", 10'240},
      {"1M live, random frees", 1'048'576},
  };
  for (const auto& s : scenarios) {
    if (s.live % kBatch != 0) {
      std::fprintf(stderr, "pool_bench: live count %zu must be a multiple of the batch (%zu)\n", s.live, kBatch);
      return 2;
    }
  }

  nb::Collector collector("pool_bench");
  std::vector<std::unique_ptr<Churn<PoolAlloc>>> keep_pool;
  std::vector<std::unique_ptr<Churn<MallocAlloc>>> keep_malloc;
  std::vector<std::unique_ptr<Churn<NewDeleteAlloc>>> keep_new;
  std::vector<std::unique_ptr<Churn<MiAlloc>>> keep_mi;
  register_scenarios<PoolAlloc>(scenarios, collector.ops_per_iter, keep_pool);
  register_scenarios<MallocAlloc>(scenarios, collector.ops_per_iter, keep_malloc);
  register_scenarios<NewDeleteAlloc>(scenarios, collector.ops_per_iter, keep_new);
  register_scenarios<MiAlloc>(scenarios, collector.ops_per_iter, keep_mi);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  keep_pool.clear();
  keep_malloc.clear();
  keep_new.clear();
  keep_mi.clear();

  const char* impls[] = {PoolAlloc::kName, MallocAlloc::kName, NewDeleteAlloc::kName, MiAlloc::kName};
  std::printf(
      "### alloc+free throughput: ns per pair, median of %d run%s (± half the spread); speedup = malloc ns / impl "
      "ns\n\n",
      gbench.repetitions, gbench.repetitions == 1 ? "" : "s");
  std::printf("| impl |");
  for (const auto& s : scenarios) std::printf(" %s: ns/pair | vs malloc |", s.label.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < scenarios.size(); ++i) std::printf("---:|---:|");
  std::printf("\n");
  for (const char* impl : impls) {
    std::printf("| %s |", impl);
    for (const auto& s : scenarios) {
      const nb::Result r = collector.result(s.label + "/" + impl);
      const nb::Result base = collector.result(s.label + "/" + MallocAlloc::kName);
      std::printf(" %s | %s |", nb::format_result(r, 2).c_str(),
                  nb::format_ratio(base.median_ns / r.median_ns).c_str());
    }
    std::printf("\n");
  }
  std::printf("\n");
  std::fflush(stdout);

  // Per-call latency, 10K live, random frees. Each sample includes the timer
  // floor shown in its own row (lfence+rdtsc ... rdtscp+lfence).
  const std::size_t samples = args.quick ? 20'000 : 2'000'000;
  std::vector<nb::LatencyRow> alloc_rows(4);
  std::vector<nb::LatencyRow> free_rows(4);
  measure_latency<PoolAlloc>(10'240, samples, alloc_rows[0], free_rows[0]);
  measure_latency<MallocAlloc>(10'240, samples, alloc_rows[1], free_rows[1]);
  measure_latency<NewDeleteAlloc>(10'240, samples, alloc_rows[2], free_rows[2]);
  measure_latency<MiAlloc>(10'240, samples, alloc_rows[3], free_rows[3]);
  alloc_rows.push_back(nb::timer_floor(samples));
  free_rows.push_back(nb::timer_floor(samples));
  nb::print_latency_table("allocate latency, 10K live, random frees (includes timer floor)", alloc_rows,
                          MallocAlloc::kName);
  nb::print_latency_table("release latency, 10K live, random frees (includes timer floor)", free_rows,
                          MallocAlloc::kName);
  benchmark::Shutdown();
  return 0;
}
