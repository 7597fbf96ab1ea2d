// nanotick-replay: runs a workload file through engine::MatchingEngine; writes
// the reports and market data as CSV (deterministic: same input, same bytes)
// and prints throughput, per-message latency percentiles and report counts.
//
// Timing is outside the engine: a TSC stamp before and after each process()
// call. The sink only counts and (when CSV output is asked for) copies events
// into vectors; formatting and file writes happen between calls, untimed.
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/histogram.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "engine/matching_engine.hpp"
#include "engine/types.hpp"
#include "workload/output_csv.hpp"
#include "workload/workload_file.hpp"

namespace {

using namespace nanotick;

// Counts every output; keeps copies only when they are to be written.
struct ReplaySink {
  bool keep_reports = false;
  bool keep_market_data = false;
  std::vector<engine::ExecReport> reports;
  std::vector<engine::MdEvent> market_data;
  std::array<std::uint64_t, 8> by_report_type{};
  std::array<std::uint64_t, 8> by_cancel_reason{};
  std::array<std::uint64_t, 8> by_md_type{};
  std::array<std::uint64_t, 512> by_reject_reason{};

  void on_report(const engine::ExecReport& r) {
    ++by_report_type[static_cast<std::size_t>(r.type) & 7u];
    if (r.reason != engine::RejectReason::kNone) ++by_reject_reason[static_cast<std::size_t>(r.reason) & 511u];
    if (r.type == engine::ReportType::kCancelled) ++by_cancel_reason[static_cast<std::size_t>(r.cancel_reason) & 7u];
    if (keep_reports) reports.push_back(r);
  }
  void on_market_data(const engine::MdEvent& m) {
    ++by_md_type[static_cast<std::size_t>(m.type) & 7u];
    if (keep_market_data) market_data.push_back(m);
  }
};

void print_counts(const ReplaySink& s) {
  using engine::CancelReason;
  using engine::ReportType;
  const auto n = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
  std::printf("reports:");
  for (unsigned t = 1; t <= 7; ++t)
    std::printf(" %s %llu%s", workload::name_of(static_cast<ReportType>(t)).c_str(), n(s.by_report_type[t]),
                t < 7 ? "," : "\n");
  std::printf("cancelled by reason:");
  for (unsigned c = 1; c <= 5; ++c)
    std::printf(" %s %llu%s", workload::name_of(static_cast<CancelReason>(c)).c_str(), n(s.by_cancel_reason[c]),
                c < 5 ? "," : "\n");
  std::printf("rejects by reason:");
  bool any = false;
  for (std::size_t r = 1; r < s.by_reject_reason.size(); ++r) {
    if (s.by_reject_reason[r] == 0) continue;
    const auto reason = static_cast<engine::RejectReason>(r);
    std::printf("%s %s (%zu) %llu", any ? "," : "", workload::name_of(reason).c_str(), r, n(s.by_reject_reason[r]));
    any = true;
  }
  std::printf("%s\n", any ? "" : " none");
  std::printf("market data:");
  for (unsigned t = 1; t <= 5; ++t)
    std::printf(" %s %llu%s", workload::name_of(static_cast<engine::MdType>(t)).c_str(), n(s.by_md_type[t]),
                t < 5 ? "," : "\n");
}

struct Options {
  std::string input;
  std::string reports;
  std::string market_data;
  unsigned repeat = 1;
};

int run(const Options& opt) {
  const workload::Workload wl = workload::read_workload(opt.input);
  const core::TscClock& clock = core::TscClock::global();
  std::printf("%s: workload %s seed %llu scale %g: %zu instruments, %zu requests\n", opt.input.c_str(),
              std::string(workload::to_string(wl.kind)).c_str(), static_cast<unsigned long long>(wl.seed), wl.scale,
              wl.config.instruments.size(), wl.requests.size());

  std::unique_ptr<workload::CsvFileWriter> report_csv;
  std::unique_ptr<workload::CsvFileWriter> md_csv;
  if (!opt.reports.empty())
    report_csv = std::make_unique<workload::CsvFileWriter>(opt.reports, workload::kReportCsvHeader);
  if (!opt.market_data.empty())
    md_csv = std::make_unique<workload::CsvFileWriter>(opt.market_data, workload::kMarketDataCsvHeader);

  core::LatencyHistogram latency;  // in TSC ticks
  std::uint64_t busy_ticks = 0;
  double wall_seconds = 0;
  ReplaySink first_pass_counts;
  for (unsigned pass = 0; pass < opt.repeat; ++pass) {
    ReplaySink sink;
    sink.keep_reports = pass == 0 && report_csv != nullptr;
    sink.keep_market_data = pass == 0 && md_csv != nullptr;
    sink.reports.reserve(1u << 16);
    sink.market_data.reserve(1u << 16);
    auto engine = std::make_unique<engine::MatchingEngine<ReplaySink>>(wl.config, sink);
    const auto wall_start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < wl.requests.size(); ++i) {
      const engine::Request& request = wl.requests[i];
      const std::uint64_t t0 = core::rdtsc();
      // Output-neutral hint: start the next request's cache misses now.
      if (i + 1 < wl.requests.size()) engine->prefetch(wl.requests[i + 1]);
      engine->process(request);
      const std::uint64_t t1 = core::rdtscp();
      latency.record(t1 - t0);
      busy_ticks += t1 - t0;
      if (!sink.reports.empty()) {
        for (const auto& r : sink.reports) report_csv->add(r);
        sink.reports.clear();
      }
      if (!sink.market_data.empty()) {
        for (const auto& m : sink.market_data) md_csv->add(m);
        sink.market_data.clear();
      }
    }
    wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (pass == 0) first_pass_counts = sink;
  }
  if (report_csv) report_csv->close();
  if (md_csv) md_csv->close();

  const double messages = static_cast<double>(wl.requests.size()) * opt.repeat;
  const double busy_seconds =
      core::sec_from_ns(static_cast<double>(clock.to_ns(static_cast<std::int64_t>(busy_ticks))));
  std::printf("messages: %.0f (%u pass%s)\n", messages, opt.repeat, opt.repeat == 1 ? "" : "es");
  std::printf("throughput: %.2f M msgs/s inside process(); %.2f M msgs/s for the whole loop (stamps%s)\n",
              busy_seconds > 0 ? messages / busy_seconds * 1e-6 : 0.0,
              wall_seconds > 0 ? messages / wall_seconds * 1e-6 : 0.0, report_csv || md_csv ? ", CSV output" : "");
  const auto ns = [&](std::uint64_t ticks) {
    return static_cast<long long>(clock.to_ns(static_cast<std::int64_t>(ticks)));
  };
  std::printf("latency per message (ns, %s): p50 %lld, p90 %lld, p99 %lld, p99.9 %lld, max %lld\n",
              clock.uses_tsc() ? "TSC" : "steady clock", ns(latency.percentile(50)), ns(latency.percentile(90)),
              ns(latency.percentile(99)), ns(latency.percentile(99.9)), ns(latency.max()));
  print_counts(first_pass_counts);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Replay a workload file through the matching engine (see docs/WORKLOADS.md)", "nanotick-replay"};
  Options opt;
  app.add_option("workload", opt.input, "binary workload file (from nanotick gen)")->required();
  app.add_option("--reports", opt.reports, "write every execution report as CSV to this file");
  app.add_option("--market-data", opt.market_data, "write every market data event as CSV to this file");
  app.add_option("--repeat", opt.repeat, "replay the workload N times, each on a fresh engine (CSV: first pass)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-replay: error: %s\n", e.what());
    return 1;
  }
}
