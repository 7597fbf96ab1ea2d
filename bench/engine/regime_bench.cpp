// The five regimes (docs/WORKLOADS.md "The regimes"): nanotick's matching
// engine beside Liquibook and the std::map / std::unordered_map books, every
// one emitting the same report set across the same kind of SPSC queue to a
// consumer on the other core (bench/engine/harness_report.hpp), on the
// methodology others use to compare engines (issue 13).
//
//   nanotick                 MatchingEngine<HarnessEngineSink>: its ExecReports translated to
//                            HarnessReports; market data not taken
//   Liquibook 2.0.1          liquibook_adapter.hpp
//   std::map book            peer_books.hpp, order index std::map
//   std::unordered_map book  the same levels, order index std::unordered_map
//
// Throughput: one timed loop over a regime's ~2 M messages on a fresh book,
// the book's thread pinned on cpu_a, the queue's consumer on cpu_b; the clock
// (TSC) stops when the consumer has read the last report. msgs/s = messages /
// time. `repeats` rounds; within a round every implementation runs once, the
// order rotated from round to round so that drift and noise hit each alike.
// The table shows the median and the min-max over the rounds. An
// implementation whose replay takes longer than kSlowRunSeconds runs in the
// first kSlowRuns rounds only, one slower than kVerySlowRunSeconds (Liquibook
// on regime-static, ~100 s here) once ("runs" says how many).
//
// Equal work: the consumer folds every report into an order-sensitive digest;
// the digests of all implementations must be equal (same reports, same order),
// or the bench exits 1 naming the ones that differ.
//
// Latency per message: one more replay per implementation on a fresh book,
// fenced rdtsc/rdtscp around each process() (and the batch's publish, charged
// to the batch's last message); the timer-floor row is an empty timed region.
//
// Latency replays that would take longer than kSlowLatencySeconds (Liquibook on
// regime-static: about 100 s a replay here) are skipped and say so.
//
// Usage: regime_bench [--quick] [--cpus A,B] [--seed N] [--repeats N] [--only REGIME]... [--impl NAME]...
//   --impl keeps only the named implementations (for profiling one of them), and
//   adds the ablation rows: "queue alone" (no book: one ack per message, the
//   harness's ceiling), "nanotick, market data built" (the same engine with a
//   sink that takes market data, each event written out and dropped) and
//   "nanotick, venue controls" (the engine inside controls::ControlledEngine,
//   every client with an account too large to bind: the same reports, plus
//   the pre-trade checks and settlement; docs/CONTROLS.md), and its stages
//   alone: "nanotick, pre-trade checks only", "nanotick, settlement only";
//   and "nanotick, reports written out" / "nanotick, venue controls, reports
//   written out": the bare and the controlled engine with every ExecReport
//   stored in full, as the exchange's sinks store them (the fair baseline for
//   the controls: settlement reads report fields the harness sink does not).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"
#include "engine/harness_subjects.hpp"
#include "workload/generators.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace ne = nanotick::engine;
namespace nw = nanotick::workload;

namespace {

// Requests per end_of_batch(): exchange::EngineAgent::kBatch.
constexpr std::size_t kEngineBatch = 64;
constexpr double kSlowRunSeconds = 4.0;
constexpr int kSlowRuns = 3;
constexpr double kVerySlowRunSeconds = 30.0;
constexpr double kSlowLatencySeconds = 20.0;

const char* const kNanotickName = "nanotick";
const char* const kLiquibookName = "Liquibook 2.0.1";
const char* const kMapName = "std::map book";
const char* const kUnorderedName = "std::unordered_map book";
const char* const kQueueOnlyName = "queue alone";
const char* const kWithMdName = "nanotick, market data built";
const char* const kControlsName = "nanotick, venue controls";
const char* const kPreTradeName = "nanotick, pre-trade checks only";
const char* const kSettlementName = "nanotick, settlement only";
const char* const kReportsOutName = "nanotick, reports written out";
const char* const kControlsReportsOutName = "nanotick, venue controls, reports written out";

struct Options {
  nb::Args args;
  std::uint64_t seed = 1;
  int repeats = 5;
  double scale = 1.0;
  std::vector<nw::WorkloadKind> regimes;
  std::vector<std::string> impls;  // empty: all
};

[[noreturn]] void usage_exit(const char* problem) {
  std::fprintf(stderr,
               "regime_bench: %s\nusage: regime_bench [--quick] [--cpus A,B] [--seed N] [--repeats N] "
               "[--only REGIME]...\n",
               problem);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options opt;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_exit((a + " needs a value").c_str());
      return argv[++i];
    };
    const auto number = [&](std::uint64_t lo, std::uint64_t hi) {
      const std::string v = value();
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0 || n < lo || n > hi)
        usage_exit(
            (a + " expects a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'")
                .c_str());
      return static_cast<std::uint64_t>(n);
    };
    if (a == "--seed") {
      opt.seed = number(1, std::numeric_limits<std::uint32_t>::max());
    } else if (a == "--repeats") {
      opt.repeats = static_cast<int>(number(1, 100));
    } else if (a == "--only") {
      const std::string name = value();
      nw::WorkloadKind kind{};
      try {
        kind = nw::parse_workload_kind(name);
      } catch (const std::invalid_argument& e) {
        usage_exit(e.what());
      }
      if (std::find(std::begin(nw::kRegimeKinds), std::end(nw::kRegimeKinds), kind) == std::end(nw::kRegimeKinds))
        usage_exit(("--only takes a regime (regime-static ... regime-flash-crash), got '" + name + "'").c_str());
      opt.regimes.push_back(kind);
    } else if (a == "--impl") {
      const std::string name = value();
      const char* const known[] = {
          kNanotickName, kLiquibookName, kMapName,        kUnorderedName,  kQueueOnlyName,         kWithMdName,
          kControlsName, kPreTradeName,  kSettlementName, kReportsOutName, kControlsReportsOutName};
      if (std::find(std::begin(known), std::end(known), name) == std::end(known)) {
        std::string all;
        for (const char* k : known) all += std::string(all.empty() ? "'" : ", '") + k + "'";
        usage_exit(("--impl takes one of " + all + ", got '" + name + "'").c_str());
      }
      opt.impls.push_back(name);
    } else {
      rest.push_back(argv[i]);
    }
  }
  opt.args = nb::parse_args(static_cast<int>(rest.size()), rest.data());
  if (opt.args.quick) {
    opt.scale = 0.01;
    opt.repeats = 1;
  }
  if (opt.regimes.empty()) opt.regimes.assign(std::begin(nw::kRegimeKinds), std::end(nw::kRegimeKinds));
  return opt;
}

// The HarnessReport's narrow fields hold every price and quantity of the input.
void check_fits(const nw::Workload& w) {
  for (const ne::Request& r : w.requests) {
    if (r.price < 0 || r.price > std::numeric_limits<std::int32_t>::max() || r.qty < 0 ||
        r.qty > std::numeric_limits<std::uint16_t>::max()) {
      std::fprintf(stderr, "regime_bench: a request's price %lld or qty %lld does not fit a HarnessReport\n",
                   static_cast<long long>(r.price), static_cast<long long>(r.qty));
      std::exit(1);
    }
  }
}

struct Run {
  double per_second;
  std::uint64_t reports;
  std::uint64_t trades;
  std::uint64_t digest;
};

// One function per subject (noinline): inlined side by side into one caller,
// the loops compile differently from run to run (engine_bench's note).
template <typename Subject>
[[gnu::noinline]] Run measure_throughput(const nw::Workload& w, const nb::Args& args) {
  const auto& clock = nc::TscClock::global();
  auto subject = std::make_unique<Subject>(w.config, args.cpu_b);
  const std::vector<ne::Request>& rq = w.requests;
  const std::size_t n = rq.size();
  const std::uint64_t t0 = nb::stamp_begin();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 1 < n) subject->prefetch(rq[i + 1]);
    subject->process(rq[i]);
    if ((i + 1) % kEngineBatch == 0) subject->end_of_batch();
  }
  const std::uint64_t t1 = subject->finish();
  const auto ns = std::max<std::int64_t>(1, clock.to_ns(static_cast<std::int64_t>(t1 - t0)));
  const nb::ReportQueue& q = subject->queue();
  return Run{static_cast<double>(n) * 1e9 / static_cast<double>(ns), q.reports(), q.trades(), q.digest()};
}

template <typename Subject>
[[gnu::noinline]] void measure_latency(const nw::Workload& w, const nb::Args& args, nc::LatencyHistogram& out) {
  const auto& clock = nc::TscClock::global();
  auto subject = std::make_unique<Subject>(w.config, args.cpu_b);
  const std::vector<ne::Request>& rq = w.requests;
  for (std::size_t i = 0; i < rq.size(); ++i) {
    const std::uint64_t t0 = nb::stamp_begin();
    if (i + 1 < rq.size()) subject->prefetch(rq[i + 1]);
    subject->process(rq[i]);
    if ((i + 1) % kEngineBatch == 0) subject->end_of_batch();
    const std::uint64_t t1 = nb::stamp_end();
    out.record(nb::elapsed_ns(clock, t0, t1));
  }
  (void)subject->finish();
}

struct Impl {
  const char* name;
  Run (*throughput)(const nw::Workload&, const nb::Args&);
  void (*latency)(const nw::Workload&, const nb::Args&, nc::LatencyHistogram&);
  std::vector<double> rates;
  Run last{};
  nc::LatencyHistogram histogram;
};

template <typename Subject>
Impl make_impl(const char* name) {
  return Impl{name, &measure_throughput<Subject>, &measure_latency<Subject>, {}, {}, nc::LatencyHistogram()};
}

// Rows that explain a figure rather than compete (only with --impl).
bool is_ablation(const char* name) {
  return name == kQueueOnlyName || name == kWithMdName || name == kControlsName || name == kPreTradeName ||
         name == kSettlementName || name == kReportsOutName || name == kControlsReportsOutName;
}

std::vector<Impl> make_impls(const Options& opt) {
  std::vector<Impl> all;
  all.push_back(make_impl<nb::EngineHarnessSubject>(kNanotickName));
  all.push_back(make_impl<nb::LiquibookHarnessSubject>(kLiquibookName));
  all.push_back(make_impl<nb::MapHarnessSubject>(kMapName));
  all.push_back(make_impl<nb::UnorderedHarnessSubject>(kUnorderedName));
  all.push_back(make_impl<nb::QueueOnlySubject>(kQueueOnlyName));
  all.push_back(make_impl<nb::EngineWithMarketDataSubject>(kWithMdName));
  all.push_back(make_impl<nb::ControlledEngineHarnessSubject>(kControlsName));
  all.push_back(make_impl<nb::PreTradeOnlyHarnessSubject>(kPreTradeName));
  all.push_back(make_impl<nb::SettlementOnlyHarnessSubject>(kSettlementName));
  all.push_back(make_impl<nb::EngineReportsOutSubject>(kReportsOutName));
  all.push_back(make_impl<nb::ControlledEngineReportsOutSubject>(kControlsReportsOutName));
  std::vector<Impl> kept;
  for (Impl& i : all)
    if ((opt.impls.empty() && !is_ablation(i.name)) ||
        std::find(opt.impls.begin(), opt.impls.end(), i.name) != opt.impls.end())
      kept.push_back(std::move(i));
  return kept;
}

// Median msgs/s of the implementation called `name` (0: not run).
double median_named(const std::vector<std::string>& names, const std::vector<double>& medians, const char* name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return medians[i];
  return 0.0;
}

// a / b as "1.23x", or "—" when either was not run.
std::string ratio_or_dash(double a, double b) { return a > 0 && b > 0 ? nb::format_ratio(a / b) : "—"; }

struct RegimeResult {
  std::string regime;
  std::vector<std::string> names;
  std::vector<double> medians;  // per impl, msgs/s
  std::vector<double> p99;      // per impl, ns (0: latency not measured)
};

double median_of(const Impl& i) { return nb::spread_of(i.rates).median; }

RegimeResult bench_regime(nw::WorkloadKind kind, const Options& opt) {
  const nw::Workload w = nw::generate(nw::GenOptions{kind, opt.seed, opt.scale});
  check_fits(w);
  nb::g_workload_clients.clear();  // every client of this workload gets an account (venue controls row)
  for (const auto& rq : w.requests) nb::g_workload_clients.push_back(rq.client);
  std::sort(nb::g_workload_clients.begin(), nb::g_workload_clients.end());
  nb::g_workload_clients.erase(std::unique(nb::g_workload_clients.begin(), nb::g_workload_clients.end()),
                               nb::g_workload_clients.end());
  std::erase_if(nb::g_workload_clients, [](ne::ClientId c) { return c > ne::kMaxClientId; });
  const std::string name(nw::to_string(kind));
  std::vector<Impl> impls = make_impls(opt);
  const std::size_t n = impls.size();
  for (int round = 0; round < opt.repeats; ++round) {
    for (std::size_t k = 0; k < n; ++k) {
      Impl& impl = impls[(k + static_cast<std::size_t>(round)) % n];
      const double seconds = impl.rates.empty() ? 0.0 : static_cast<double>(w.requests.size()) / impl.rates.front();
      const int most = seconds > kVerySlowRunSeconds ? 1 : seconds > kSlowRunSeconds ? kSlowRuns : opt.repeats;
      if (static_cast<int>(impl.rates.size()) >= most) continue;
      impl.last = impl.throughput(w, opt.args);
      impl.rates.push_back(impl.last.per_second);
    }
  }
  bool same = true;  // among the books (the queue-alone row emits a report set of its own)
  const Impl* first_book = nullptr;
  for (const Impl& impl : impls) {
    if (impl.name == kQueueOnlyName) continue;
    if (first_book == nullptr) first_book = &impl;
    same = same && impl.last.digest == first_book->last.digest;
  }
  std::vector<std::string> names;
  std::vector<double> medians;
  for (const Impl& impl : impls) {
    names.push_back(impl.name);
    medians.push_back(median_of(impl));
  }
  const double liquibook = median_named(names, medians, kLiquibookName);
  const double map = median_named(names, medians, kMapName);
  std::printf("### %s (seed %llu): %zu messages — throughput, reports across the SPSC queue (M msgs/s)\n\n",
              name.c_str(), static_cast<unsigned long long>(opt.seed), w.requests.size());
  std::printf(
      "| impl | median | min | max | runs | reports | trades | vs Liquibook | vs std::map |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Impl& impl : impls) {
    const nb::Spread s = nb::spread_of(impl.rates);
    std::printf("| %s | %.2f | %.2f | %.2f | %zu | %llu | %llu | %s | %s |\n", impl.name, s.median / 1e6, s.min / 1e6,
                s.max / 1e6, impl.rates.size(), static_cast<unsigned long long>(impl.last.reports),
                static_cast<unsigned long long>(impl.last.trades), ratio_or_dash(s.median, liquibook).c_str(),
                ratio_or_dash(s.median, map).c_str());
  }
  std::printf("\nSame report stream from every implementation (digest %016llx): %s\n\n",
              static_cast<unsigned long long>(first_book != nullptr ? first_book->last.digest : 0),
              same ? "yes" : "NO");
  if (!same) {
    for (const Impl& impl : impls)
      if (impl.name != kQueueOnlyName)
        std::fprintf(stderr, "regime_bench: %s: digest %016llx, %llu reports\n", impl.name,
                     static_cast<unsigned long long>(impl.last.digest),
                     static_cast<unsigned long long>(impl.last.reports));
    std::fprintf(stderr, "regime_bench: %s: the implementations did not produce the same reports\n", name.c_str());
    std::exit(1);
  }
  std::vector<nb::LatencyRow> rows;
  RegimeResult result{name, names, medians, {}};
  for (Impl& impl : impls) {
    const double replay_seconds = static_cast<double>(w.requests.size()) / impl.rates.front();
    if (replay_seconds > kSlowLatencySeconds) {
      std::printf("(%s: latency not measured, one replay takes %.0f s)\n", impl.name, replay_seconds);
      result.p99.push_back(0);
      continue;
    }
    impl.latency(w, opt.args, impl.histogram);
    result.p99.push_back(static_cast<double>(impl.histogram.percentile(99.0)));
    rows.push_back(nb::LatencyRow{impl.name, std::move(impl.histogram)});
  }
  rows.push_back(nb::timer_floor(std::min<std::size_t>(w.requests.size(), 1'000'000)));
  nb::print_latency_table(name + ": latency per message, reports across the queue (one replay)", rows, kLiquibookName);
  return result;
}

void print_summary(const std::vector<RegimeResult>& results, const Options& opt) {
  const std::vector<std::string>& names = results.front().names;
  std::printf("### Summary (seed %llu, %d rounds): median M msgs/s per regime, p99 ns in brackets\n\n",
              static_cast<unsigned long long>(opt.seed), opt.repeats);
  std::printf("| regime |");
  for (const std::string& n : names) std::printf(" %s |", n.c_str());
  std::printf(" nanotick vs Liquibook | nanotick vs std::map |\n|---|");
  for (std::size_t i = 0; i < names.size() + 2; ++i) std::printf("---:|");
  std::printf("\n");
  std::size_t worst = 0;
  for (std::size_t r = 0; r < results.size(); ++r) {
    const RegimeResult& res = results[r];
    const double ours = median_named(res.names, res.medians, kNanotickName);
    if (ours < median_named(results[worst].names, results[worst].medians, kNanotickName)) worst = r;
    std::printf("| %s |", res.regime.c_str());
    for (std::size_t i = 0; i < res.medians.size(); ++i) {
      if (res.p99[i] > 0) {
        std::printf(" %.2f [%.0f] |", res.medians[i] / 1e6, res.p99[i]);
      } else {
        std::printf(" %.2f [—] |", res.medians[i] / 1e6);
      }
    }
    std::printf(" %s | %s |\n", ratio_or_dash(ours, median_named(res.names, res.medians, kLiquibookName)).c_str(),
                ratio_or_dash(ours, median_named(res.names, res.medians, kMapName)).c_str());
  }
  const RegimeResult& w = results[worst];
  const double ours = median_named(w.names, w.medians, kNanotickName);
  if (ours > 0)
    std::printf("\nWorst regime for nanotick: %s, %.2f M msgs/s = %s Liquibook, %s the std::map book.\n\n",
                w.regime.c_str(), ours / 1e6,
                ratio_or_dash(ours, median_named(w.names, w.medians, kLiquibookName)).c_str(),
                ratio_or_dash(ours, median_named(w.names, w.medians, kMapName)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);
  nb::print_machine_header("regime_bench");
  nb::pin_or_warn(opt.args.cpu_a);
  std::printf("Book thread on CPU %d, report consumer on CPU %d; regimes at scale %.2f, seed %llu, %d rounds.\n\n",
              opt.args.cpu_a, opt.args.cpu_b, opt.scale, static_cast<unsigned long long>(opt.seed), opt.repeats);
  std::vector<RegimeResult> results;
  for (const nw::WorkloadKind kind : opt.regimes) results.push_back(bench_regime(kind, opt));
  print_summary(results, opt);
  return 0;
}
