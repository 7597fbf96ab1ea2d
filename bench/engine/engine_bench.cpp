// Matching engine: replay throughput and per-message latency on the generated
// workloads, ours beside Liquibook and two standard-library books in one run;
// where the time goes; memory per instrument.
//
//   nanotick (SPSC sink)     MatchingEngine; every ExecReport / MdEvent is written into a
//                            core::SpscRing (one for reports, one for market data) drained
//                            by a consumer thread pinned on the other CPU (cpu_b), which
//                            checks that it saw report seqs 1..N exactly once. Published
//                            once per batch of kEngineBatch requests, as the exchange's
//                            engine agent does (exchange::RingSink)
//                            The engine builds each output in its ring slot (InPlaceSink)
//   nanotick (SPSC, per output)  the same, each output published as it is written
//   nanotick (SPSC, copied)  as "SPSC sink", each output built on the engine's stack and
//                            copied into the slot (the sink's on_report/on_market_data)
//   nanotick (null sink)     MatchingEngine; the sink only counts trades (emission cost ~0:
//                            the compiler need not even build the reports)
//   Liquibook 2.0.1          liquibook::book::OrderBook via bench/engine/liquibook_adapter.hpp
//   std::map book            bench/engine/peer_books.hpp, order index std::map
//   std::unordered_map book  the same levels, order index std::unordered_map
//
// Workloads: workload::generate({kind, seed 1, scale}) for cancel-heavy, mixed, deep and crash
// (docs/WORKLOADS.md), in process. Every implementation replays the same requests on a fresh
// book, the engine thread pinned on cpu_a. The peers only produce fills (no reports, no market
// data, no self-trade prevention or collar, modify = cancel + new), so they do less work than
// the engine; the "trades" column shows that every book traded about the same.
//
// Every subject gets end_of_batch() after each kEngineBatch requests (and the SPSC sink
// publishes the rest in finish()), as exchange::EngineAgent drains its input ring in batches.
//
// (a) Throughput: one timed loop over all requests (TSC before and after; for the SPSC sink
//     the end is when the consumer has taken the last event), msgs/s = requests / time.
//     Repeated `repeats` times, implementations interleaved; the table shows the median
//     and the min-max spread (a replay slower than 3 s is not repeated: "runs").
// (b) Latency: stamp_begin()/stamp_end() (fenced rdtsc/rdtscp) around each process(), one
//     histogram sample per message, over one full replay on a fresh book. Each sample
//     includes the timer itself: the "timer floor" row is an empty timed region.
// (a2) Where the SPSC sink's time goes, per workload: throughput medians (same repeats) with
//     sinks that each add one step -- null; counting (outputs built on the stack and written
//     to memory); same-core ring (SameCoreRingSink: written in place into the SPSC sink's
//     rings, published per batch and taken back on the engine's thread); the SPSC sink.
// (c) Breakdown: synthetic single-instrument streams that isolate one path each, in rounds
//     of 4096 (timed phases alternate with untimed ones that build or clear the book, so
//     it stays cache-resident), mean ns per timed message, with the null sink and with a counting sink that forces
//     every output struct to be written to memory (an escaped pointer): invalid orders
//     (validation + reject), resting adds that never cross (validation + book insert),
//     IOC orders that each fill one resting order (validation + matching), cancels of
//     resting orders. Differences between rows give the cost of each step; the difference
//     between the two sinks is the cost of building the reports and events.
// (d) Memory per instrument at default capacities: MatchingEngine::memory_bytes(), the
//     engine's own accounting of what it allocated (pools, level arrays, finished-order tables,
//     share of the live-order index).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"
#include "engine/engine_sinks.hpp"
#include "engine/liquibook_adapter.hpp"
#include "engine/matching_engine.hpp"
#include "engine/peer_books.hpp"
#include "workload/generators.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace ne = nanotick::engine;
namespace nw = nanotick::workload;

namespace {

using nb::CountingSink;
using nb::NullSink;
using SpscSink = nb::SpscSink<nb::Publish::kPerBatch>;
using SpscPerOutputSink = nb::SpscSink<nb::Publish::kPerOutput>;
using SpscCopiedSink = nb::SpscSink<nb::Publish::kPerBatch, nb::Build::kCopied>;
using nb::SameCoreRingSink;

// Requests per end_of_batch(): exchange::EngineAgent::kBatch, the most the
// exchange's engine agent takes from its input ring before publishing.
constexpr std::size_t kEngineBatch = 64;

const char* const kSpscName = "nanotick (SPSC sink)";
const char* const kSpscPerOutputName = "nanotick (SPSC, per output)";
const char* const kSpscCopiedName = "nanotick (SPSC, copied)";
const char* const kNullName = "nanotick (null sink)";
const char* const kLiquibookName = "Liquibook 2.0.1";
const char* const kMapName = "std::map book";
const char* const kUnorderedName = "std::unordered_map book";

struct Plan {
  double scale;
  int repeats;
  std::size_t breakdown_msgs;
};

// ---- subjects: one implementation with its sink, fresh for every run ----------

template <typename Sink>
struct EngineSubject {
  explicit EngineSubject(const ne::EngineConfig& config, const nb::Args& args) : sink(args), engine(config, sink) {}
  void process(const ne::Request& r) noexcept { engine.process(r); }
  void end_of_batch() noexcept { sink.end_of_batch(); }
  // Output-neutral hint: start the cache misses of the next request early (a
  // server can do the same with the next request already in its ring).
  void prefetch(const ne::Request& next) const noexcept { engine.prefetch(next); }
  std::uint64_t finish() {
    const std::uint64_t end = sink.finish();
    if constexpr (requires { sink.report_seq_sum(); }) {
      const std::uint64_t n = engine.last_report_seq();
      if (sink.report_seq_sum() != n * (n + 1) / 2) {
        std::fprintf(stderr, "error: the SPSC consumer did not see report seqs 1..%llu exactly once\n",
                     static_cast<unsigned long long>(n));
        std::exit(1);
      }
    }
    return end;
  }
  std::uint64_t trades() const { return sink.trades(); }
  Sink sink;
  ne::MatchingEngine<Sink> engine;
};

template <template <typename> class Book>
struct PeerSubject {
  PeerSubject(const ne::EngineConfig& config, const nb::Args&) : book(config, sink) {}
  void process(const ne::Request& r) { (void)book.process(r); }
  void end_of_batch() noexcept {}
  void prefetch(const ne::Request&) const noexcept {}  // no such hint in this peer
  std::uint64_t finish() { return nc::rdtscp(); }
  std::uint64_t trades() const { return sink.fills; }
  nb::CountingFillSink sink;
  Book<nb::CountingFillSink> book;
};

using SpscSubject = EngineSubject<SpscSink>;
using SpscPerOutputSubject = EngineSubject<SpscPerOutputSink>;
using SpscCopiedSubject = EngineSubject<SpscCopiedSink>;
using NullSubject = EngineSubject<NullSink>;
using CountingSubject = EngineSubject<CountingSink>;
using SameCoreSubject = EngineSubject<SameCoreRingSink>;
using MapSubject = PeerSubject<nb::MapPeerBook>;
using UnorderedSubject = PeerSubject<nb::UnorderedPeerBook>;
using LiquibookSubject = PeerSubject<nb::LiquibookAdapter>;

// ---- measurements --------------------------------------------------------------

struct Run {
  double per_second;
  std::uint64_t trades;
};

// Each measured loop is a function of its own (noinline) for every subject: inlined
// into bench_workload with the other subjects' loops, the SPSC sink's loop compiled
// to code that replayed cancel-heavy at 3.0 M msgs/s instead of 5.2-5.4 (same run,
// same machine), an artifact of the harness, not of the engine.
template <typename Subject>
[[gnu::noinline]] Run measure_throughput(const ne::EngineConfig& config, const std::vector<ne::Request>& requests,
                                         const nb::Args& args) {
  const auto& clock = nc::TscClock::global();
  auto subject = std::make_unique<Subject>(config, args);
  const std::uint64_t t0 = nb::stamp_begin();
  const std::size_t n = requests.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 1 < n) subject->prefetch(requests[i + 1]);
    subject->process(requests[i]);
    if ((i + 1) % kEngineBatch == 0) subject->end_of_batch();
  }
  const std::uint64_t t1 = subject->finish();
  const auto ns = std::max<std::int64_t>(1, clock.to_ns(static_cast<std::int64_t>(t1 - t0)));
  return Run{static_cast<double>(requests.size()) * 1e9 / static_cast<double>(ns), subject->trades()};
}

template <typename Subject>
[[gnu::noinline]] void measure_latency(const ne::EngineConfig& config, const std::vector<ne::Request>& requests,
                                       const nb::Args& args, nc::LatencyHistogram& out) {
  const auto& clock = nc::TscClock::global();
  auto subject = std::make_unique<Subject>(config, args);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::uint64_t t0 = nb::stamp_begin();
    if (i + 1 < requests.size()) subject->prefetch(requests[i + 1]);  // inside the timed region
    subject->process(requests[i]);
    if ((i + 1) % kEngineBatch == 0) subject->end_of_batch();  // its cost lands on the batch's last message
    const std::uint64_t t1 = nb::stamp_end();
    out.record(nb::elapsed_ns(clock, t0, t1));
  }
  (void)subject->finish();
}

using nanotick::bench::Spread;
using nanotick::bench::spread_of;

struct ImplResult {
  std::string name;
  std::vector<double> rates;
  std::uint64_t trades = 0;
  nc::LatencyHistogram latency;
};

// One throughput run; the latency pass (a separate replay on a fresh book) on the first repeat only.
template <typename Subject>
void run_impl(ImplResult& res, const nw::Workload& w, const nb::Args& args, int rep) {
  const Run run = measure_throughput<Subject>(w.config, w.requests, args);
  res.rates.push_back(run.per_second);
  res.trades = run.trades;
  if (rep == 0) measure_latency<Subject>(w.config, w.requests, args, res.latency);
}

void print_workload(const nw::Workload& w, std::vector<ImplResult>& results, std::size_t timer_samples) {
  const std::string kind(nw::to_string(w.kind));
  const auto liquibook =
      std::find_if(results.begin(), results.end(), [](const ImplResult& r) { return r.name == kLiquibookName; });
  const double base = spread_of(liquibook->rates).median;
  std::printf("### %s: %zu requests, %zu instrument(s) — throughput (M msgs/s)\n\n", kind.c_str(), w.requests.size(),
              w.config.instruments.size());
  std::printf("| impl | median | min | max | runs | trades | vs %s |\n|---|---:|---:|---:|---:|---:|---:|\n",
              kLiquibookName);
  for (const ImplResult& r : results) {
    const Spread s = spread_of(r.rates);
    std::printf("| %s | %.2f | %.2f | %.2f | %zu | %llu | %s |\n", r.name.c_str(), s.median / 1e6, s.min / 1e6,
                s.max / 1e6, r.rates.size(), static_cast<unsigned long long>(r.trades),
                nb::format_ratio(s.median / base).c_str());
  }
  std::printf("\n");
  std::vector<nb::LatencyRow> rows;
  for (ImplResult& r : results) rows.push_back(nb::LatencyRow{r.name, std::move(r.latency)});
  rows.push_back(nb::timer_floor(timer_samples));
  nb::print_latency_table(kind + ": latency per message (one replay)", rows, kLiquibookName);
}

// Where an SPSC sink's time goes on this workload, by sinks that each add one
// step: the engine alone (null sink), + outputs built (counting sink: on the
// stack, written to memory), + written in place into the SPSC sink's rings and
// read back on the engine's own core at each batch end (same-core ring), +
// read by a consumer on the other core instead (SPSC sink, from the table above).
void print_handoff(const nw::Workload& w, const Plan& plan, const nb::Args& args,
                   const std::vector<ImplResult>& results) {
  std::vector<double> counting_rates;
  std::vector<double> same_core_rates;
  for (int rep = 0; rep < plan.repeats; ++rep) {
    counting_rates.push_back(measure_throughput<CountingSubject>(w.config, w.requests, args).per_second);
    same_core_rates.push_back(measure_throughput<SameCoreSubject>(w.config, w.requests, args).per_second);
  }
  const auto ns_of = [&](const char* name) {
    const auto it = std::find_if(results.begin(), results.end(), [&](const ImplResult& r) { return r.name == name; });
    return 1e9 / spread_of(it->rates).median;
  };
  const double null_ns = ns_of(kNullName);
  const double counting_ns = 1e9 / spread_of(counting_rates).median;
  const double same_core_ns = 1e9 / spread_of(same_core_rates).median;
  const double spsc_ns = ns_of(kSpscName);
  std::printf("### %s: where the SPSC sink's time goes (ns per message, medians of %d)\n\n",
              std::string(nw::to_string(w.kind)).c_str(), plan.repeats);
  std::printf(
      "| engine alone (null sink) | + outputs built (counting sink) | + into the rings, read on the same core | "
      "+ read on the other core (SPSC sink) |\n|---:|---:|---:|---:|\n");
  std::printf("| %.1f | %.1f (%+.1f) | %.1f (%+.1f) | %.1f (%+.1f) |\n\n", null_ns, counting_ns, counting_ns - null_ns,
              same_core_ns, same_core_ns - counting_ns, spsc_ns, spsc_ns - same_core_ns);
}

void bench_workload(nw::WorkloadKind kind, const Plan& plan, const nb::Args& args) {
  const nw::Workload w = nw::generate(nw::GenOptions{kind, 1, plan.scale});
  std::vector<ImplResult> results;
  for (const char* name :
       {kSpscName, kSpscPerOutputName, kSpscCopiedName, kNullName, kLiquibookName, kMapName, kUnorderedName}) {
    results.push_back(ImplResult{name, {}, 0, nc::LatencyHistogram()});
  }
  // Interleaved within each repeat so that machine noise hits every implementation alike.
  // An implementation whose first replay took longer than kSlowRunSeconds is not repeated
  // (Liquibook on the deep book): the full run stays near two minutes; the "runs" column says so.
  constexpr double kSlowRunSeconds = 3.0;
  const auto again = [&](const ImplResult& r, int rep) {
    return rep == 0 || static_cast<double>(w.requests.size()) / r.rates.front() < kSlowRunSeconds;
  };
  for (int rep = 0; rep < plan.repeats; ++rep) {
    if (again(results[0], rep)) run_impl<SpscSubject>(results[0], w, args, rep);
    if (again(results[1], rep)) run_impl<SpscPerOutputSubject>(results[1], w, args, rep);
    if (again(results[2], rep)) run_impl<SpscCopiedSubject>(results[2], w, args, rep);
    if (again(results[3], rep)) run_impl<NullSubject>(results[3], w, args, rep);
    if (again(results[4], rep)) run_impl<LiquibookSubject>(results[4], w, args, rep);
    if (again(results[5], rep)) run_impl<MapSubject>(results[5], w, args, rep);
    if (again(results[6], rep)) run_impl<UnorderedSubject>(results[6], w, args, rep);
  }
  print_workload(w, results, std::min<std::size_t>(w.requests.size(), 1'000'000));
  print_handoff(w, plan, args, results);
}

// ---- (c) breakdown ----------------------------------------------------------------

// One instrument at default capacities, a band wide enough for 1000 levels per side.
ne::EngineConfig breakdown_config() {
  ne::InstrumentConfig ic;
  ic.symbol = "BRK";
  ic.min_price = 1;
  ic.max_price = 2'000'000;
  ne::EngineConfig config;
  config.instruments.push_back(ic);
  return config;
}
constexpr ne::Price kMid = 1'000'000;
constexpr ne::Price kLevelsPerSide = 1000;

// A stream alternates untimed phases (building or clearing the book a timed
// phase needs) and timed phases; the book never holds more than kRound orders,
// so the figures are those of a cache-resident book like the workloads' (a
// book of 10^5+ random orders would measure DRAM misses instead).
constexpr std::size_t kRound = 4096;
struct Phase {
  bool timed;
  std::vector<ne::Request> requests;
};
struct Stream {
  const char* name;
  const char* isolates;
  std::vector<Phase> phases;
  std::size_t timed_count() const {
    std::size_t n = 0;
    for (const Phase& p : phases) n += p.timed ? p.requests.size() : 0;
    return n;
  }
};

// Limit orders that never cross: buys below the mid, sells above, over 1000 levels per side.
std::vector<ne::Request> resting_adds(std::size_t n, ne::ClientOrderId first_id) {
  std::vector<ne::Request> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<ne::Price>(i / 2) % kLevelsPerSide;
    const bool buy = i % 2 == 0;
    out.push_back(ne::make_new(0, 1, first_id + i, buy ? ne::Side::kBuy : ne::Side::kSell, ne::OrderType::kLimit,
                               buy ? kMid - 1 - k : kMid + 1 + k, 10));
  }
  return out;
}

// Cancels of ids [first_id, first_id + n) in a fixed pseudo-random order (they hit
// random places in the queues).
std::vector<ne::Request> shuffled_cancels(std::size_t n, ne::ClientOrderId first_id, std::uint64_t seed) {
  std::vector<ne::ClientOrderId> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = first_id + i;
  std::uint64_t x = seed;
  for (std::size_t i = n; i > 1; --i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(ids[i - 1], ids[(x >> 33) % i]);
  }
  std::vector<ne::Request> out;
  for (const ne::ClientOrderId id : ids) out.push_back(ne::make_cancel(0, 1, id));
  return out;
}

std::vector<Stream> breakdown_streams(std::size_t n) {
  const std::size_t rounds = std::max<std::size_t>(1, n / kRound);
  Stream invalid{"invalid new orders", "validation + reject report", {}};
  Stream adds{"resting adds", "validation + book insert", {}};
  Stream ioc{"IOC, one fill each", "validation + matching one fill", {}};
  Stream cancels{"cancels", "validation + unlink from the book", {}};
  for (std::size_t round = 0; round < rounds; ++round) {
    const ne::ClientOrderId first = 1 + round * kRound;
    std::vector<ne::Request> bad;
    for (std::size_t i = 0; i < kRound; ++i) {
      bad.push_back(ne::make_new(0, 1, first + i, ne::Side::kBuy, ne::OrderType::kLimit, 3'000'000, 10));
    }
    invalid.phases.push_back(Phase{true, std::move(bad)});
    adds.phases.push_back(Phase{true, resting_adds(kRound, first)});
    adds.phases.push_back(Phase{false, shuffled_cancels(kRound, first, round)});
    std::vector<ne::Request> makers;
    std::vector<ne::Request> takers;
    for (std::size_t i = 0; i < kRound; ++i) {
      const auto k = static_cast<ne::Price>(i) % kLevelsPerSide;
      makers.push_back(ne::make_new(0, 1, first + i, ne::Side::kSell, ne::OrderType::kLimit, kMid + 1 + k, 10));
      takers.push_back(ne::make_new(0, 2, first + i, ne::Side::kBuy, ne::OrderType::kIoc, kMid + kLevelsPerSide, 10));
    }
    ioc.phases.push_back(Phase{false, std::move(makers)});
    ioc.phases.push_back(Phase{true, std::move(takers)});
    cancels.phases.push_back(Phase{false, resting_adds(kRound, first)});
    cancels.phases.push_back(Phase{true, shuffled_cancels(kRound, first, round)});
  }
  std::vector<Stream> streams;
  streams.push_back(std::move(invalid));
  streams.push_back(std::move(adds));
  streams.push_back(std::move(ioc));
  streams.push_back(std::move(cancels));
  return streams;
}

struct PerMsg {
  double ns;
  double outputs;
};

template <typename Sink>
PerMsg breakdown_run(const ne::EngineConfig& config, const Stream& s, const nb::Args& args, int repeats) {
  const auto& clock = nc::TscClock::global();
  const double count = static_cast<double>(s.timed_count());
  std::vector<double> ns;
  double outputs = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    auto subject = std::make_unique<EngineSubject<Sink>>(config, args);
    std::uint64_t ticks = 0;
    std::uint64_t timed_outputs = 0;
    for (const Phase& phase : s.phases) {
      if (!phase.timed) {
        for (const ne::Request& r : phase.requests) subject->process(r);
        continue;
      }
      const std::uint64_t before = subject->sink.outputs();
      const std::uint64_t t0 = nb::stamp_begin();
      for (const ne::Request& r : phase.requests) subject->process(r);
      ticks += nb::stamp_end() - t0;
      timed_outputs += subject->sink.outputs() - before;
    }
    (void)subject->finish();
    ns.push_back(static_cast<double>(clock.to_ns(static_cast<std::int64_t>(ticks))) / count);
    outputs = static_cast<double>(timed_outputs) / count;
  }
  return PerMsg{spread_of(ns).median, outputs};
}

void run_breakdown(std::size_t n, int repeats, const nb::Args& args) {
  const ne::EngineConfig config = breakdown_config();
  const std::vector<Stream> streams = breakdown_streams(n);
  std::vector<PerMsg> null_rows;
  std::vector<PerMsg> counting_rows;
  for (const Stream& s : streams) {
    null_rows.push_back(breakdown_run<NullSink>(config, s, args, repeats));
    counting_rows.push_back(breakdown_run<CountingSink>(config, s, args, repeats));
  }
  std::printf(
      "### Where the time goes: ns per message, %zu timed messages per stream in rounds of %zu, "
      "median of %d\n\n",
      streams[0].timed_count(), kRound, repeats);
  std::printf("| stream | isolates | null sink | counting sink | outputs/msg | emission (counting - null) |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < streams.size(); ++i) {
    std::printf("| %s | %s | %.1f | %.1f | %.2f | %.1f |\n", streams[i].name, streams[i].isolates, null_rows[i].ns,
                counting_rows[i].ns, counting_rows[i].outputs, counting_rows[i].ns - null_rows[i].ns);
  }
  const double validation = null_rows[0].ns;
  std::printf(
      "\nDerived (null sink, minus the invalid-order row): validation + reject %.1f ns; book insert "
      "%.1f ns; matching one fill %.1f ns; cancel %.1f ns.\n\n",
      validation, null_rows[1].ns - validation, null_rows[2].ns - validation, null_rows[3].ns - validation);
}

// ---- (d) memory --------------------------------------------------------------------

void print_memory(const nb::Args& args) {
  ne::EngineConfig config;
  config.instruments.push_back(ne::InstrumentConfig{});
  config.instruments[0].symbol = "DEFAULT";
  NullSubject subject(config, args);
  const ne::InstrumentConfig& ic = config.instruments[0];
  const std::size_t bytes = subject.engine.memory_bytes(0);
  std::printf("### Memory per instrument at default capacities\n\n");
  std::printf("| max live orders | max levels per side | bytes allocated | MiB | bytes per order slot |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  std::printf("| %u | %u | %zu | %.2f | %.1f |\n\n", ic.max_orders, ic.max_levels, bytes,
              static_cast<double>(bytes) / (1024.0 * 1024.0),
              static_cast<double>(bytes) / static_cast<double>(ic.max_orders));
  (void)subject.finish();
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  const Plan plan = args.quick ? Plan{0.01, 1, 4'000} : Plan{1.0, 3, 200'000};
  nb::print_machine_header("engine_bench");
  nb::pin_or_warn(args.cpu_a);
  std::printf("Engine thread on CPU %d, SPSC consumer on CPU %d; workloads at scale %.2f, seed 1.\n\n", args.cpu_a,
              args.cpu_b, plan.scale);
  // The regime family (issue 13) is regime_bench's: there every book emits the same reports.
  for (const nw::WorkloadKind kind : nw::kClassicKinds) bench_workload(kind, plan, args);
  run_breakdown(plan.breakdown_msgs, plan.repeats, args);
  print_memory(args);
  return 0;
}
