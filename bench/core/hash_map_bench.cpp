// IntHashMap (default fmix64 hash, and with the IntFibonacciHash option) vs
// std::unordered_map and absl::flat_hash_map, uint64_t -> uint64_t, measured
// side by side in one run.
//
// Key sets: "order ids" (increasing, random gaps of 1..8, as a venue assigns
// them) and "random" (uniform 64-bit). Sizes: 1K, 100K and 1M live keys
// (--quick: 1K and 100K). Operations, in ns per operation:
//   - find hit:  lookups of present keys in random order
//   - find miss: lookups of absent keys (future order ids / other random keys),
//                also in random order (in-order sequential ids would favour
//                std::unordered_map, whose identity hash keeps them adjacent)
//   - insert:    inserting all N keys into an empty map (timed manually; the
//                clear and, for the peers, the reserve(N) between rounds are not timed)
//   - churn:     steady size N: erase the oldest key, insert a new one (ns per pair)
// The peers are reserve()d to N up front, as a fixed-capacity user would.
// Results feed a checksum so the work cannot be optimised away. Also a per-call
// find latency table (rdtsc) at the largest size with random keys.
//
// Peers linked: absl::flat_hash_map (see bench/CMakeLists.txt).
#include <absl/container/flat_hash_map.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "common/bench_util.hpp"
#include "common/gbench_collector.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/int_hash_map.hpp"
#include "core/tsc_clock.hpp"

namespace {

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
using Key = std::uint64_t;
using Value = std::uint64_t;

// --- the maps under test, behind one small interface ---------------------------

template <typename Hash>
struct OursWith {
  static constexpr const char* kName =
      std::is_same_v<Hash, nc::IntMixHash> ? "IntHashMap" : "IntHashMap, Fibonacci hash";
  explicit OursWith(std::size_t n) : m(n) {}
  NT_ALWAYS_INLINE bool insert(Key k, Value v) noexcept { return m.insert(k, v) == nc::InsertResult::kInserted; }
  NT_ALWAYS_INLINE const Value* find(Key k) const noexcept { return m.find(k); }
  NT_ALWAYS_INLINE bool erase(Key k) noexcept { return m.erase(k); }
  void reset(std::size_t) noexcept { m.clear(); }
  nc::IntHashMap<Key, Value, Hash> m;
};
using Ours = OursWith<nc::IntMixHash>;           // the default: fmix64
using OursFib = OursWith<nc::IntFibonacciHash>;  // the option for trusted sequential ids

// A peer with the std::unordered_map interface, reserve()d to N.
template <typename Map>
struct Peer {
  explicit Peer(std::size_t n) { m.reserve(n); }
  NT_ALWAYS_INLINE bool insert(Key k, Value v) { return m.emplace(k, v).second; }
  NT_ALWAYS_INLINE const Value* find(Key k) const noexcept {
    const auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }
  NT_ALWAYS_INLINE bool erase(Key k) { return m.erase(k) == 1; }
  void reset(std::size_t n) {
    m.clear();  // absl frees big tables on clear(), so reserve again (untimed)
    m.reserve(n);
  }
  Map m;
};

struct Std : Peer<std::unordered_map<Key, Value>> {
  static constexpr const char* kName = "std::unordered_map";
  using Peer::Peer;
};

struct Absl : Peer<absl::flat_hash_map<Key, Value>> {
  static constexpr const char* kName = "absl::flat_hash_map";
  using Peer::Peer;
};

// --- key streams -----------------------------------------------------------------

enum class Pattern { kOrderIds, kRandom };
const char* pattern_name(Pattern p) { return p == Pattern::kOrderIds ? "order ids" : "random"; }

// Produces the keys of one pattern. Deterministic, cheap (used inside the
// churn loop, identically for every implementation).
class KeyStream {
 public:
  KeyStream(Pattern p, std::uint64_t seed) : pattern_(p), state_(seed), id_(1'000'000) {
    std::mt19937_64 rng(seed);
    for (auto& g : gaps_) g = 1 + static_cast<std::uint8_t>(rng() % 8);
  }
  NT_ALWAYS_INLINE Key next() noexcept {
    if (pattern_ == Pattern::kOrderIds) return id_ += gaps_[n_++ & (kGaps - 1)];
    return nc::mix64(state_ += 0x9e3779b97f4a7c15ULL);  // Weyl sequence through fmix64: distinct, well-spread keys
  }

 private:
  static constexpr std::size_t kGaps = 4096;
  Pattern pattern_;
  std::uint64_t state_;
  std::uint64_t id_;
  std::uint64_t n_ = 0;
  std::uint8_t gaps_[kGaps];
};

// Everything one implementation needs for one (pattern, size) configuration.
template <typename M>
struct Fixture {
  Fixture(const std::vector<Key>& present, std::size_t n, const KeyStream& after_present)
      : map(n), insert_map(n), fifo(present), fresh(after_present) {
    for (Key k : present)
      if (!map.insert(k, k ^ 0x5555)) std::abort();
  }
  M map;         // N keys; find benches, then churn (registered last)
  M insert_map;  // emptied and refilled by the insert bench
  std::vector<Key> fifo;  // live keys, oldest at fifo[head]
  std::size_t head = 0;
  KeyStream fresh;  // new keys for churn
  std::uint64_t checksum = 0;
};

constexpr std::size_t kBatch = 256;  // operations per benchmark iteration (find, churn)

// --- Google Benchmark registration ------------------------------------------------

std::string bench_name(Pattern p, std::size_t n, const char* op, const char* impl) {
  return std::string(pattern_name(p)) + "/" + std::to_string(n) + "/" + op + "/" + impl;
}

const char* const kOps[] = {"find hit", "find miss", "insert", "churn (erase+insert)"};

template <typename M>
void register_benches(Fixture<M>& f, Pattern p, std::size_t n, const std::vector<Key>& hit_order,
                      const std::vector<Key>& misses, const std::vector<Key>& present, nb::Collector& c) {
  auto add = [&](const char* op, double ops, auto fn) {
    const std::string name = bench_name(p, n, op, M::kName);
    c.ops_per_iter[name] = ops;
    return benchmark::RegisterBenchmark(name.c_str(), fn);
  };
  add(kOps[0], kBatch, [&f, &hit_order](benchmark::State& st) {
    std::size_t i = 0;
    std::uint64_t sum = 0;
    for (auto _ : st) {
      for (std::size_t j = 0; j < kBatch; ++j) {
        sum += *f.map.find(hit_order[i]);
        if (++i == hit_order.size()) i = 0;
      }
      benchmark::DoNotOptimize(sum);
    }
    f.checksum += sum;
  });
  add(kOps[1], kBatch, [&f, &misses](benchmark::State& st) {
    std::size_t i = 0;
    std::uint64_t found = 0;
    for (auto _ : st) {
      for (std::size_t j = 0; j < kBatch; ++j) {
        found += f.map.find(misses[i]) != nullptr;
        if (++i == misses.size()) i = 0;
      }
      benchmark::DoNotOptimize(found);
    }
    if (found != 0) {
      std::fprintf(stderr, "hash_map_bench: %s found a key that should be absent\n", M::kName);
      std::exit(1);
    }
  });
  add(kOps[2], static_cast<double>(n), [&f, &present, n](benchmark::State& st) {
    std::uint64_t inserted = 0;
    for (auto _ : st) {
      f.insert_map.reset(n);
      const auto t0 = std::chrono::steady_clock::now();
      for (Key k : present) inserted += f.insert_map.insert(k, k);
      const auto t1 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(inserted);
      st.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    }
    f.checksum += inserted;
  })->UseManualTime();
  add(kOps[3], kBatch, [&f](benchmark::State& st) {
    std::uint64_t ok = 0;
    for (auto _ : st) {
      for (std::size_t j = 0; j < kBatch; ++j) {
        const Key k = f.fresh.next();
        ok += f.map.erase(f.fifo[f.head]);
        ok += f.map.insert(k, k);
        f.fifo[f.head] = k;
        if (++f.head == f.fifo.size()) f.head = 0;
      }
      benchmark::DoNotOptimize(ok);
    }
    f.checksum += ok;
  });
}

// --- rdtsc latency harness -----------------------------------------------------------

template <typename M>
nb::LatencyRow find_latency(const M& m, const std::vector<Key>& hit_order, std::size_t samples) {
  const auto& clock = nc::TscClock::global();
  nb::LatencyRow row{M::kName, nc::LatencyHistogram()};
  std::uint64_t sum = 0;
  for (std::size_t s = 0, i = 0; s < samples; ++s) {
    const Key k = hit_order[i];
    if (++i == hit_order.size()) i = 0;
    const std::uint64_t t0 = nb::stamp_begin();
    const Value* v = m.find(k);
    sum += *v;
    const std::uint64_t t1 = nb::stamp_end();
    row.ns.record(nb::elapsed_ns(clock, t0, t1));
  }
  benchmark::DoNotOptimize(sum);
  return row;
}

std::string size_label(std::size_t n) {
  if (n >= 1'000'000) return std::to_string(n / 1'000'000) + "M";
  if (n >= 1'000) return std::to_string(n / 1'000) + "K";
  return std::to_string(n);
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  nb::print_machine_header("hash_map_bench: IntHashMap vs std::unordered_map, absl::flat_hash_map (u64 -> u64)");
  nb::pin_or_warn(args.cpu_a);  // after the header, so it reports the CPUs the process may use

  const nb::GbenchSettings gbench = args.quick ? nb::GbenchSettings{0.01, 1, 0.005} : nb::GbenchSettings{0.05, 3, 0.02};
  nb::initialize_gbench(argv[0], gbench);

  std::vector<std::size_t> sizes = {1'000, 100'000};
  if (!args.quick) sizes.push_back(1'000'000);
  const Pattern patterns[] = {Pattern::kOrderIds, Pattern::kRandom};
  const std::size_t latency_samples = args.quick ? 20'000 : 500'000;

  nb::Collector collector("hash_map_bench");
  std::vector<nb::LatencyRow> latency_rows;
  std::uint64_t checksum = 0;
  for (Pattern p : patterns) {
    for (std::size_t n : sizes) {
      // N present keys, N absent ones (the stream's continuation), both
      // shuffled for lookups, and the stream position from which churn draws
      // new keys.
      KeyStream stream(p, 0xC0FFEE + n);
      std::vector<Key> present(n);
      for (auto& k : present) k = stream.next();
      const KeyStream after_present = stream;
      std::vector<Key> misses(n);
      for (auto& k : misses) k = stream.next();
      std::vector<Key> hit_order = present;
      std::shuffle(hit_order.begin(), hit_order.end(), std::mt19937_64(n));
      std::shuffle(misses.begin(), misses.end(), std::mt19937_64(n + 1));

      // The churn streams start from after_present, so their new keys equal
      // the `misses` keys (absent) and then further on.
      auto ours = std::make_unique<Fixture<Ours>>(present, n, after_present);
      auto ours_fib = std::make_unique<Fixture<OursFib>>(present, n, after_present);
      auto std_map = std::make_unique<Fixture<Std>>(present, n, after_present);
      auto absl_map = std::make_unique<Fixture<Absl>>(present, n, after_present);
      register_benches(*ours, p, n, hit_order, misses, present, collector);
      register_benches(*ours_fib, p, n, hit_order, misses, present, collector);
      register_benches(*std_map, p, n, hit_order, misses, present, collector);
      register_benches(*absl_map, p, n, hit_order, misses, present, collector);

      if (p == Pattern::kRandom && n == sizes.back()) {
        // Per-call find latency before the churn benches change the maps.
        latency_rows.push_back(find_latency(ours->map, hit_order, latency_samples));
        latency_rows.push_back(find_latency(ours_fib->map, hit_order, latency_samples));
        latency_rows.push_back(find_latency(std_map->map, hit_order, latency_samples));
        latency_rows.push_back(find_latency(absl_map->map, hit_order, latency_samples));
        latency_rows.push_back(nb::timer_floor(latency_samples));
      }
      benchmark::RunSpecifiedBenchmarks(&collector);
      benchmark::ClearRegisteredBenchmarks();
      checksum += ours->checksum + ours_fib->checksum + std_map->checksum + absl_map->checksum;
    }
  }

  std::printf(
      "### ns per operation, median of %d run%s (± half the spread); speedup = peer ns / IntHashMap ns "
      "(default fmix64 hash; the Fibonacci-hash column is the option for trusted sequential ids)\n\n",
      gbench.repetitions, gbench.repetitions == 1 ? "" : "s");
  std::printf("| keys | size | op | %s | %s | %s | %s | vs std | vs absl |\n", Ours::kName, OursFib::kName, Std::kName,
              Absl::kName);
  std::printf("|---|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (Pattern p : patterns) {
    for (std::size_t n : sizes) {
      for (const char* op : kOps) {
        const nb::Result o = collector.result(bench_name(p, n, op, Ours::kName));
        const nb::Result f = collector.result(bench_name(p, n, op, OursFib::kName));
        const nb::Result s = collector.result(bench_name(p, n, op, Std::kName));
        const nb::Result a = collector.result(bench_name(p, n, op, Absl::kName));
        std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pattern_name(p), size_label(n).c_str(), op,
                    nb::format_result(o, 1).c_str(), nb::format_result(f, 1).c_str(), nb::format_result(s, 1).c_str(),
                    nb::format_result(a, 1).c_str(), nb::format_ratio(s.median_ns / o.median_ns).c_str(),
                    nb::format_ratio(a.median_ns / o.median_ns).c_str());
      }
    }
  }
  std::printf("\n");
  const std::string title =
      "find (hit) latency per call, " + size_label(sizes.back()) + " random keys, random order (includes timer floor)";
  nb::print_latency_table(title, latency_rows, Std::kName);
  std::printf("checksum: %llu\n", static_cast<unsigned long long>(checksum));
  benchmark::Shutdown();
  return 0;
}
