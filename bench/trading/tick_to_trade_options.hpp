// tick_to_trade_bench: its options (--seconds, --idle, --rate, --cpus,
// --telemetry, --bin-dir, --transport, --venue-idle, --repeats, --keep),
// parsed and checked; a bad value exits 2 with the usage.
// Part of tick_to_trade_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/bench_util.hpp"

namespace {

struct Options {
  double seconds = 10;
  bool seconds_given = false;
  bool quick = false;
  std::vector<std::string> idles{"backoff", "spin"};
  double rate = 1000;
  int venue_cpu = 0;
  int measured_cpu = 1;
  std::vector<bool> telemetry{false};  // per idle setting: without and/or with --telemetry
  std::string bin_dir;                 // empty: this build's bin/
  std::vector<std::string> transports{"tcp"};
  std::string venue_idle = "backoff";
  int repeats = 1;
  std::string keep_dir;  // non-empty: each measurement's telemetry kept under it
};

[[noreturn]] void usage_exit(const char* prog, const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "%s: %s\n", prog, problem.c_str());
  std::fprintf(stderr,
               "usage: %s [--seconds N] [--quick] [--idle backoff|spin|both] [--rate ACTIONS_PER_S] "
               "[--cpus VENUE,MEASURED] [--telemetry off|on|both] [--bin-dir DIR] [--transport tcp|shm|both] "
               "[--venue-idle backoff|spin] [--repeats N] [--keep DIR]\n"
               "  --seconds N       measuring window per idle setting, 1..3600 (default 10)\n"
               "  --quick           a smoke run: 2 s windows unless --seconds is given\n"
               "  --idle KIND       the market maker's idle strategy: backoff, spin or both (default both)\n"
               "  --rate N          the load generator's actions per second, 10..100000 (default 1000)\n"
               "  --cpus V,M        CPU of the exchange and the load generator, CPU of the measured trader\n"
               "                    and the floor peer (default 0,1)\n"
               "  --telemetry WHEN  run the exchange and both traders with --telemetry: off, on or both\n"
               "                    (both: each idle setting without, then with it; default off)\n"
               "  --bin-dir DIR     take nanotick-exchange and nanotick-trader from DIR (default: this\n"
               "                    build's bin/), e.g. a build with -DNANOTICK_TELEMETRY=OFF\n"
               "  --transport T     tcp (order entry over TCP, market data over multicast), shm (both over\n"
               "                    shared memory; the exchange's datagrams sent by its aux thread) or both\n"
               "                    (interleaved: tcp then shm in each round); default tcp. The floor peer\n"
               "                    reads multicast: it runs beside the tcp measurements only\n"
               "  --venue-idle KIND the exchange's idle strategy: backoff (default) or spin\n"
               "  --repeats N       rounds of every setting, interleaved, 1..20 (default 1)\n"
               "  --keep DIR        keep each measurement's telemetry in DIR/<idle>-<transport>-<round>/telemetry\n"
               "                    (with --telemetry on: './nanotick report DIR/...' adds the venue-side\n"
               "                    tick-to-trade, market data written -> the order it caused read)\n",
               prog);
  std::exit(problem.empty() ? 0 : 2);
}

double number_arg(const char* prog, const std::string& flag, const char* text, double min, double max) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !(v >= min && v <= max))
    usage_exit(prog, flag + " expects a number in [" + nanotick::bench::format_ns(min) + ", " +
                         nanotick::bench::format_ns(max) + "], got '" + text + "'");
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_exit(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--seconds") {
      o.seconds = number_arg(argv[0], a, value(), 1, 3600);
      o.seconds_given = true;
    } else if (a == "--idle") {
      const std::string v = value();
      if (v == "both") o.idles = {"backoff", "spin"};
      else if (v == "backoff" || v == "spin") o.idles = {v};
      else usage_exit(argv[0], "--idle expects backoff, spin or both, got '" + v + "'");
    } else if (a == "--rate") {
      o.rate = number_arg(argv[0], a, value(), 10, 100'000);
    } else if (a == "--cpus") {
      const char* v = value();
      int x = -1, y = -1;
      char extra = 0;
      if (std::sscanf(v, "%d,%d%c", &x, &y, &extra) != 2 || x < 0 || y < 0)
        usage_exit(argv[0],
                   std::string("--cpus expects two non-negative CPU numbers, e.g. --cpus 0,1, got '") + v + "'");
      if (x == y) usage_exit(argv[0], "--cpus: the venue CPU and the measured CPU must differ");
      o.venue_cpu = x;
      o.measured_cpu = y;
    } else if (a == "--telemetry") {
      const std::string v = value();
      if (v == "both") o.telemetry = {false, true};
      else if (v == "on") o.telemetry = {true};
      else if (v == "off") o.telemetry = {false};
      else usage_exit(argv[0], "--telemetry expects off, on or both, got '" + v + "'");
    } else if (a == "--bin-dir") {
      o.bin_dir = value();
      if (!std::filesystem::is_directory(o.bin_dir))
        usage_exit(argv[0], "--bin-dir: '" + o.bin_dir + "' is not a directory");
    } else if (a == "--transport") {
      const std::string v = value();
      if (v == "both") o.transports = {"tcp", "shm"};
      else if (v == "tcp" || v == "shm") o.transports = {v};
      else usage_exit(argv[0], "--transport expects tcp, shm or both, got '" + v + "'");
    } else if (a == "--venue-idle") {
      o.venue_idle = value();
      if (o.venue_idle != "backoff" && o.venue_idle != "spin")
        usage_exit(argv[0], "--venue-idle expects backoff or spin, got '" + o.venue_idle + "'");
    } else if (a == "--repeats") {
      o.repeats = static_cast<int>(number_arg(argv[0], a, value(), 1, 20));
    } else if (a == "--keep") {
      o.keep_dir = value();
      std::filesystem::create_directories(o.keep_dir);
    } else if (a == "--help" || a == "-h") {
      usage_exit(argv[0], "");
    } else {
      usage_exit(argv[0], "unknown argument '" + a + "'");
    }
  }
  if (o.quick && !o.seconds_given) o.seconds = 2;
  return o;
}

}  // namespace
