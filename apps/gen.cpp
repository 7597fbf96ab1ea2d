// nanotick-gen: writes a seeded, deterministic workload (docs/WORKLOADS.md) as
// a binary file and, optionally, as CSV.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "core/time_units.hpp"
#include "workload/generators.hpp"
#include "workload/workload_csv.hpp"
#include "workload/workload_file.hpp"

int main(int argc, char** argv) {
  using namespace nanotick::workload;
  CLI::App app{"Generate a deterministic matching-engine workload (see docs/WORKLOADS.md)", "nanotick-gen"};
  std::string kind_name = "mixed";
  GenOptions options;
  std::string out;
  std::string csv;
  bool quiet = false;
  app.add_option("--workload,-w", kind_name,
                 "cancel-heavy, mixed, deep, crash, or a regime: regime-static, regime-normal, "
                 "regime-swing-25, regime-swing-40, regime-flash-crash")
      ->capture_default_str();
  app.add_option("--seed,-s", options.seed, "random seed (same seed, same bytes)")->capture_default_str();
  app.add_option("--scale", options.scale, "multiplies every count, in (0, 100]")->capture_default_str();
  app.add_option("--out,-o", out, "binary workload file to write")->required();
  app.add_option("--csv", csv, "also write the workload as CSV to this file");
  app.add_flag("--quiet,-q", quiet, "print nothing on success");
  CLI11_PARSE(app, argc, argv);

  try {
    options.kind = parse_workload_kind(kind_name);
    GenStats stats;
    const Workload workload = generate(options, &stats);
    write_workload(workload, out);
    if (!csv.empty()) write_workload_csv(workload, csv);
    if (!quiet) {
      std::printf("%s: workload %s seed %llu scale %g: %zu instruments, %zu requests\n", out.c_str(),
                  std::string(to_string(workload.kind)).c_str(), static_cast<unsigned long long>(workload.seed),
                  workload.scale, workload.config.instruments.size(), workload.requests.size());
      std::printf(
          "  new %llu (limit %llu, ioc %llu, market %llu), cancel %llu (late %llu, unknown %llu), "
          "modify %llu\n  rested %llu: cancelled %llu, filled %llu, modified %llu; trades %llu; "
          "peak live %llu, peak levels %llu; trade prices [%lld, %lld]\n",
          static_cast<unsigned long long>(stats.new_orders), static_cast<unsigned long long>(stats.limit_orders),
          static_cast<unsigned long long>(stats.ioc_orders), static_cast<unsigned long long>(stats.market_orders),
          static_cast<unsigned long long>(stats.cancels), static_cast<unsigned long long>(stats.late_cancels),
          static_cast<unsigned long long>(stats.unknown_cancels), static_cast<unsigned long long>(stats.modifies),
          static_cast<unsigned long long>(stats.rested), static_cast<unsigned long long>(stats.rested_cancelled),
          static_cast<unsigned long long>(stats.rested_filled), static_cast<unsigned long long>(stats.rested_modified),
          static_cast<unsigned long long>(stats.trades), static_cast<unsigned long long>(stats.peak_live_orders),
          static_cast<unsigned long long>(stats.peak_levels), static_cast<long long>(stats.min_trade_price),
          static_cast<long long>(stats.max_trade_price));
      std::printf("  live orders avg %.0f, levels (both sides) avg %.1f; modifies of orders already done %llu\n",
                  stats.avg_live_orders, stats.avg_levels, static_cast<unsigned long long>(stats.late_modifies));
      if (stats.synthetic_ns > 0) {
        std::printf(
            "  regime: mid [%lld, %lld], duplicate cancels %llu, stale modifies %llu, median lifetime "
            "%.3f ms, %.1f ms of synthetic time\n",
            static_cast<long long>(stats.min_mid), static_cast<long long>(stats.max_mid),
            static_cast<unsigned long long>(stats.duplicate_cancels),
            static_cast<unsigned long long>(stats.stale_modifies),
            nanotick::core::ms_from_ns(static_cast<double>(stats.median_lifetime_ns)),
            nanotick::core::ms_from_ns(static_cast<double>(stats.synthetic_ns)));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-gen: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
