// The command-line options of the programs that keep counters and record
// telemetry (nanotick-exchange, nanotick-trader): the same words, checks and
// help text in both, and --describe, which prints what the program is made
// of for the tools that would otherwise keep a copy (tools/doctor plans
// CPUs per runner role; tools/counters/labels.py names the counter labels
// the tools read, which the counters file itself carries).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "config/thread_layout_reader.hpp"

namespace nanotick::apps {

struct ObservabilityOptions {
  std::string counters_path;  // --counters FILE ("" = none)
  std::string telemetry_dir;  // --telemetry DIR ("" = none)
};

namespace detail {
inline std::string json_string(std::string_view s) {
  std::string out(1, '"');
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

inline std::string json_strings(const std::vector<std::string_view>& items) {
  std::string out = "[";
  // Appended piece by piece: `const char* + std::string` (an insert at 0)
  // draws GCC 12's bogus -Wstringop-overflow at the LTO link.
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += ", ";
    out += json_string(items[i]);
  }
  out += ']';
  return out;
}
}  // namespace detail

// What --describe prints: one JSON object, e.g.
//   {"program": "nanotick-trader", "runners": {"compact": ["engine"], "dedicated": ["engine", "receiver"]},
//    "critical": ["engine", "receiver"], "idle": ["spin", "yield", "backoff", "block"],
//    "counters_file": true, "telemetry_file": "<trader name>.ntt"}
// runners: the roles of each [threads] mode, in `cpus` order; critical: the
// roles whose default idle is [threads] idle; telemetry_file: null in a
// build without telemetry. Counter labels are not listed: each counters file
// carries its own (docs/TELEMETRY.md "The counters file").
inline std::string describe_json(std::string_view program, const config::ThreadRoles& roles,
                                 std::string_view telemetry_file) {
  std::string out = "{\"program\": ";
  out += detail::json_string(program);
  out += ", \"runners\": {\"compact\": ";
  out += detail::json_strings(roles.compact);
  out += ", \"dedicated\": ";
  out += detail::json_strings(roles.dedicated);
  out += "}, \"critical\": ";
  out += detail::json_strings(roles.critical);
  out += ", \"idle\": ";
  out += detail::json_strings(roles.idle_kinds);
  out += ", \"counters_file\": true, \"telemetry_file\": ";
#if NANOTICK_TELEMETRY
  out += detail::json_string(telemetry_file);
#else
  (void)telemetry_file;
  out += "null";
#endif
  out += '}';
  return out;
}

// Adds --counters, --describe and, when the macros are compiled in,
// --telemetry (a build with -DNANOTICK_TELEMETRY=OFF would write files
// without records; the demo passes it to the binaries whose --help lists
// it). `telemetry_file` names the file the program writes in DIR, for the
// help text; `roles` are the program's runners (its config's ThreadRoles).
inline void add_observability_options(CLI::App& app, ObservabilityOptions& o, const std::string& telemetry_file,
                                      const config::ThreadRoles& roles) {
  app.add_option("--counters", o.counters_path,
                 "keep the counters in this memory-mapped file, readable live by ./nanotick stat (put it on tmpfs, "
                 "e.g. /dev/shm, for a production run)");
  // A flag callback runs before CLI11 checks required options: --describe
  // needs no config. CLI::Success ends the parse with exit code 0.
  app.add_flag_callback(
      "--describe",
      [&app, &roles, telemetry_file] {
        std::printf("%s\n", describe_json(app.get_name(), roles, telemetry_file).c_str());
        throw CLI::Success();
      },
      "print the runner roles per [threads] mode and the files this program writes, as JSON, and exit");
#if NANOTICK_TELEMETRY
  app.add_option("--telemetry", o.telemetry_dir,
                 "write hop stamps and function timers to DIR/" + telemetry_file + " (docs/TELEMETRY.md)")
      ->check(CLI::ExistingDirectory);
#endif
}

}  // namespace nanotick::apps
