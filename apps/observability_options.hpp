// The command-line options of the programs that keep counters and record
// telemetry (nanotick-exchange, nanotick-trader): the same words, checks and
// help text in both.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nanotick::apps {

struct ObservabilityOptions {
  std::string counters_path;  // --counters FILE ("" = none)
  std::string telemetry_dir;  // --telemetry DIR ("" = none)
};

// Adds --counters and, when the macros are compiled in, --telemetry (a build
// with -DNANOTICK_TELEMETRY=OFF would write files without records; the demo
// passes it to the binaries whose --help lists it). `telemetry_file` names
// the file the program writes in DIR, for the help text.
inline void add_observability_options(CLI::App& app, ObservabilityOptions& o, const std::string& telemetry_file) {
  app.add_option("--counters", o.counters_path,
                 "keep the counters in this memory-mapped file, readable live by ./nanotick stat (put it on tmpfs, "
                 "e.g. /dev/shm, for a production run)");
#if NANOTICK_TELEMETRY
  app.add_option("--telemetry", o.telemetry_dir,
                 "write hop stamps and function timers to DIR/" + telemetry_file + " (docs/TELEMETRY.md)")
      ->check(CLI::ExistingDirectory);
#else
  (void)telemetry_file;
#endif
}

}  // namespace nanotick::apps
