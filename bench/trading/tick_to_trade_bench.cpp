// Tick-to-trade of the trading client (issue 5, "Performance"): inside the
// real nanotick-trader, market data packet read -> the order it caused
// written to the socket, beside the floor of that hop on this machine,
// measured in the same run.
//
// Subjects, one fresh set per measurement, each with a config generated for
// it (bench/trading/venue_configs.hpp) in a temp dir under $TMPDIR, from the
// build tree (bench/common/child_process.hpp):
//   - nanotick-exchange: compact mode, idle backoff, every thread on the
//     venue CPU, fsync batch, the demo's two instruments, market data on
//     multicast groups and ports of this run's own;
//   - client A, a nanotick-trader running the random strategy (the load:
//     --rate actions/s, resting orders and IOCs), backoff, on the venue CPU;
//   - client B, the measured nanotick-trader: the market maker in compact
//     mode (feed, engine and gateway on one thread) pinned on the measured
//     CPU, with idle backoff and then idle spin (--idle picks). Spin is how a
//     latency-critical trader runs on a core of its own; with 2 vCPUs shared
//     by the exchange, the load generator and the floor peer it takes half
//     the machine, so backoff is the fair setting here and both are shown.
// The trader measures tick-to-trade itself (TradeEngine): the TSC right
// after recv() returned the packet -> the TSC right after the write() of the
// order(s) its handling sent (one write per decision), and, where it has it,
// tick-to-decision: the same start -> the orders queued, before the write
// (our code alone, without the kernel's send). Its summary (stdout, at
// SIGINT) gives count/p50/p99/p99.9/max of both.
//
// The peer (src/floor/tick_to_trade_floor.hpp, the one nanotick-floor runs
// beside the demo's traders), in this process during the same
// window: a thread pinned beside the measured trader joins the same
// incremental group and, for every datagram, send()s 64 bytes to a
// loopback TCP connection whose reader waits like the exchange's gateway,
// timed with the same clock at the same two points. That hop has no book,
// no strategy, no risk: trader / floor is the cost of our code and of
// writing more than one order's bytes.
//
// Per measurement: exchange up, both traders logged on with live books, then
// the window (--seconds, default 10; --quick 2) with the peer recording;
// then the peer stops, both traders get SIGINT (they cancel, log out and
// print their summaries), the exchange SIGTERM; every process must exit 0.
// A measurement in which the maker timed no order fails the run (exit 1).
//
// Telemetry overhead (docs/TELEMETRY.md "Overhead"): --telemetry on runs
// every subject with --telemetry DIR (files in the measurement's temp dir,
// as the demo does), --telemetry both measures each idle setting without and
// then with it; --bin-dir points at another build's binaries, e.g. one
// configured with -DNANOTICK_TELEMETRY=OFF (the macros compiled out).
//
// Shared memory (issue 16): --transport shm runs every subject over the
// exchange's shared-memory sessions and market data ring (the datagrams
// sent from the ring by the exchange's aux thread, market_data.udp_sender
// = "aux"); --transport both interleaves tcp and shm measurements in each
// round. The trader's hop is then ring read -> order bytes in the session
// ring. The floor peer reads multicast and writes TCP, so it runs beside the
// tcp measurements only. With --telemetry on and --keep DIR the telemetry
// files are kept, and './nanotick report DIR/<measurement>' gives the
// venue-side tick-to-trade (market data written by the exchange -> the
// order it caused read by the exchange).
//
// Usage: tick_to_trade_bench [--seconds N] [--quick] [--idle backoff|spin|both]
//                            [--rate ACTIONS_PER_S] [--cpus VENUE,MEASURED]
//                            [--telemetry off|on|both] [--bin-dir DIR]
//                            [--transport tcp|shm|both] [--venue-idle backoff|spin]
//                            [--repeats N] [--keep DIR]

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_util.hpp"
#include "common/child_process.hpp"
#include "core/idle_strategy.hpp"
#include "core/tsc_clock.hpp"
#include "floor/tick_to_trade_floor.hpp"
#include "net/socket_address.hpp"
#include "trading/tick_to_trade_options.hpp"
#include "trading/venue_configs.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace nf = nanotick::floors;
namespace nn = nanotick::net;

namespace {

constexpr double kTargetP50Ns = 2'000;
constexpr double kTargetP99Ns = 10'000;

struct Binaries {
  std::filesystem::path exchange;
  std::filesystem::path trader;
};

std::filesystem::path binary_in(const std::string& dir, const char* name) {
  const std::filesystem::path p = std::filesystem::path(dir) / name;
  if (::access(p.c_str(), X_OK) != 0) throw std::runtime_error("--bin-dir: no executable " + p.string());
  return p;
}

Binaries find_binaries(const Options& o) {
  if (o.bin_dir.empty())
    return {nb::find_build_binary("nanotick-exchange", "nanotick-exchange"),
            nb::find_build_binary("nanotick-trader", "nanotick-trader")};
  return {binary_in(o.bin_dir, "nanotick-exchange"), binary_in(o.bin_dir, "nanotick-trader")};
}

// One summary's latency figures ("tick_to_trade_ns.p50" ...); absent keys
// (an older trader without tick_to_decision) leave `present` false.
struct Percentiles {
  bool present = false;
  double count = 0, p50 = 0, p99 = 0, p999 = 0, max = 0;
};

double value_of(const std::map<std::string, std::string>& kv, const std::string& key) {
  const auto it = kv.find(key);
  if (it == kv.end()) return 0;
  return std::strtod(it->second.c_str(), nullptr);
}

Percentiles percentiles_of(const std::map<std::string, std::string>& kv, const std::string& prefix) {
  Percentiles p;
  p.present = kv.count(prefix + ".count") != 0;
  p.count = value_of(kv, prefix + ".count");
  p.p50 = value_of(kv, prefix + ".p50");
  p.p99 = value_of(kv, prefix + ".p99");
  p.p999 = value_of(kv, prefix + ".p99.9");
  p.max = value_of(kv, prefix + ".max");
  return p;
}

struct Measurement {
  std::string idle;
  std::string transport;
  bool has_floor = false;  // the floor peer reads multicast: tcp measurements only
  std::map<std::string, std::string> maker;  // its summary
  std::map<std::string, std::string> load;
  nf::TickToTradeFloorResult floor;
  double window_s = 0;
  double load_s = 0;  // the load generator's logged-on time
  nb::ChildProcess::Sched maker_sched;  // during the window
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sleeps `seconds`, failing fast (with its log) if a subject exits.
void watch(double seconds, std::vector<nb::ChildProcess*> subjects) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (nb::ChildProcess* p : subjects)
      if (!p->running()) throw std::runtime_error(p->label() + " exited during the measurement; its log:\n" + p->err());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Measurement measure(const Options& o, const Binaries& bin, const std::string& idle, bool telemetry,
                    const std::string& transport, int round, int index) {
  using std::chrono::milliseconds;
  Measurement m;
  m.idle = telemetry ? idle + ", --telemetry" : idle;
  m.transport = transport;
  m.has_floor = transport == "tcp";
  const nb::TempDir dir;
  std::vector<std::string> telemetry_args;
  if (telemetry) {
    std::filesystem::create_directories(dir.path() / "telemetry");
    telemetry_args = {"--telemetry", (dir.path() / "telemetry").string()};
  }
  const auto with_telemetry = [&telemetry_args](std::vector<std::string> args) {
    args.insert(args.end(), telemetry_args.begin(), telemetry_args.end());
    return args;
  };
  nb::VenueSetup setup;
  setup.venue_cpu = o.venue_cpu;
  setup.measured_cpu = o.measured_cpu;
  setup.maker_idle = idle;
  setup.load_actions_per_s = o.rate;
  setup.transport = transport;
  setup.shm_dir = dir.path().string();
  setup.venue_idle = o.venue_idle;
  // Groups and ports of our own, outside the ephemeral range (and apart from
  // order_entry_bench's 239.255.91.x / 61000-62999), per measurement.
  const int pid = static_cast<int>(::getpid());
  setup.md_group = 1 + (pid % 120) * 2;
  // A port pair per measurement (index < 160), 320 ports per pid bucket.
  setup.md_port = static_cast<std::uint16_t>(50000 + (pid % 40) * 320 + (index % 160) * 2);

  const std::filesystem::path journal = dir.path() / "journal";
  std::filesystem::create_directories(journal);
  std::ofstream(dir.path() / "exchange.toml") << nb::venue_exchange_toml(setup, journal.string());
  nb::ChildProcess exchange("nanotick-exchange", bin.exchange,
                            with_telemetry({"--config", (dir.path() / "exchange.toml").string()}),
                            dir.path() / "exchange");
  const std::string port = exchange.wait_for_log("order entry listening on 127.0.0.1:", milliseconds(20'000));
  setup.order_entry_port = static_cast<std::uint16_t>(std::stoul(port.substr(0, port.find_first_not_of("0123456789"))));

  std::ofstream(dir.path() / "trader-load.toml") << nb::load_trader_toml(setup);
  std::ofstream(dir.path() / "trader-maker.toml") << nb::maker_trader_toml(setup);
  // Joined before the traders start (what queues up before start() is dropped).
  // The sink reads like the exchange (backoff), pinned beside it.
  std::optional<nf::TickToTradeFloor> floor;
  if (m.has_floor)
    floor.emplace(nf::TickToTradeFloorSetup{nn::parse_ipv4("127.0.0.1"),
                                            {nn::parse_ipv4(setup.incremental_group()), setup.md_port},
                                            nc::parse_idle_kind(idle),
                                            nc::IdleKind::backoff,
                                            o.measured_cpu,
                                            o.venue_cpu});
  nb::ChildProcess load("load generator (nanotick-trader, random)", bin.trader,
                        with_telemetry({"--config", (dir.path() / "trader-load.toml").string()}), dir.path() / "load");
  nb::ChildProcess maker("market maker (nanotick-trader)", bin.trader,
                         with_telemetry({"--config", (dir.path() / "trader-maker.toml").string()}),
                         dir.path() / "maker");
  const auto load_start = std::chrono::steady_clock::now();
  (void)load.wait_for_log("load: logged on, books live 2/2", milliseconds(20'000));
  (void)maker.wait_for_log("maker: logged on, books live 2/2", milliseconds(20'000));

  const nb::ChildProcess::Sched sched0 = maker.main_thread_sched();
  const auto t0 = std::chrono::steady_clock::now();
  if (floor) floor->start();  // throws naming the CPU if a floor thread cannot be pinned where asked
  watch(o.seconds, {&exchange, &load, &maker});
  if (floor) floor->stop();
  m.window_s = seconds_since(t0);
  const nb::ChildProcess::Sched sched1 = maker.main_thread_sched();
  m.maker_sched = {sched1.involuntary_switches - sched0.involuntary_switches, sched1.cpu_seconds - sched0.cpu_seconds};
  if (floor) m.floor = floor->result();

  maker.signal(SIGINT);
  load.signal(SIGINT);
  m.load_s = seconds_since(load_start);
  maker.wait_clean_exit(milliseconds(15'000));
  load.wait_clean_exit(milliseconds(15'000));
  exchange.signal(SIGTERM);
  exchange.wait_clean_exit(milliseconds(30'000));
  m.maker = nb::parse_key_values(maker.out());
  m.load = nb::parse_key_values(load.out());

  if (m.maker.count("tick_to_trade_ns.count") == 0)
    throw std::runtime_error("the market maker printed no tick_to_trade_ns figures; its stdout:\n" + maker.out());
  if (value_of(m.maker, "tick_to_trade_ns.count") == 0)
    throw std::runtime_error("the market maker timed no order in " + std::to_string(m.window_s) + " s (idle " + idle +
                             "): nothing to report; its log:\n" + maker.err());
  if (m.has_floor && m.floor.hop_ns.count() == 0)
    throw std::runtime_error("the floor peer read no market data packet in the window (group " +
                             setup.incremental_group() + ":" + std::to_string(setup.md_port) + ")");
  if (telemetry && maker.err().find("telemetry: ") == std::string::npos)
    throw std::runtime_error(
        "--telemetry: the market maker did not report its telemetry file (a build without "
        "the option?); its log:\n" +
        maker.err());
  if (!o.keep_dir.empty() && telemetry) {
    const std::filesystem::path keep =
        std::filesystem::path(o.keep_dir) / (idle + "-" + transport + "-" + std::to_string(round + 1));
    std::filesystem::create_directories(keep);
    std::filesystem::copy(dir.path() / "telemetry", keep / "telemetry",
                          std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
    std::fprintf(stderr, "tick_to_trade_bench: telemetry kept in %s\n", keep.string().c_str());
  }
  return m;
}

// ---- report ----------------------------------------------------------------------

std::string ns(double v) { return nb::format_ns(v); }

std::string ratio(double a, double b) { return b > 0 ? nb::format_ratio(a / b) : "n/a"; }

// "spin, shm": the settings of one measurement as its rows name them.
std::string setting(const Measurement& m) { return m.idle + ", " + m.transport; }

const char* yes_no(bool met) { return met ? "yes" : "**no**"; }

void print_row(const std::string& subject, const std::string& idle, const Percentiles& p, const Percentiles& floor) {
  std::printf("| %s | %s | %.0f | %s | %s | %s | %s | %s | %s |\n", subject.c_str(), idle.c_str(), p.count,
              ns(p.p50).c_str(), ns(p.p99).c_str(), ns(p.p999).c_str(), ns(p.max).c_str(),
              ratio(p.p50, floor.p50).c_str(), ratio(p.p99, floor.p99).c_str());
}

Percentiles floor_percentiles(const Measurement& m) {
  if (!m.has_floor) return {};
  const auto& h = m.floor.hop_ns;
  return {true,
          static_cast<double>(h.count()),
          static_cast<double>(h.percentile(50)),
          static_cast<double>(h.percentile(99)),
          static_cast<double>(h.percentile(99.9)),
          static_cast<double>(h.max())};
}

void report(const Options& o, const std::vector<Measurement>& ms) {
  std::printf("### Tick-to-trade: market data packet read -> order written (ns)\n\n");
  std::printf(
      "| subject | maker idle, transport | samples | p50 | p99 | p99.9 | max | p50 vs floor | p99 vs floor |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Measurement& m : ms) {
    const Percentiles floor = floor_percentiles(m);
    print_row("nanotick-trader market maker: tick-to-trade", setting(m), percentiles_of(m.maker, "tick_to_trade_ns"),
              floor);
    const Percentiles decision = percentiles_of(m.maker, "tick_to_decision_ns");
    if (decision.present)
      print_row("the same to the orders queued, before the write (our code only)", setting(m), decision, floor);
    if (m.has_floor)
      print_row("floor: recv() -> send() of 64 bytes, no book/strategy/risk (bench thread)", setting(m), floor, floor);
  }
  std::printf(
      "\nThe trader records one sample per order message: a two-sided requote (two ModifyOrders, 80 "
      "bytes in one write) gives two samples with the same value. The floor records one per datagram; it "
      "reads multicast, so it runs beside the tcp measurements only. Over shm, 'read' is the packet copied "
      "out of the market data ring and 'written' the order's bytes in the session's ring.\n\n");

  std::printf("### Against the issue's targets (p50 <= 2 us, p99 <= 10 us, compact mode on 2 cores)\n\n");
  std::printf(
      "| maker idle, transport | tick-to-trade p50 | met? | p99 | met? | p50 / p99 vs floor | p50 to the orders "
      "queued | p50 difference (the write) | floor p50 |\n"
      "|---|---:|---|---:|---|---:|---:|---:|---:|\n");
  for (const Measurement& m : ms) {
    const Percentiles t = percentiles_of(m.maker, "tick_to_trade_ns");
    const Percentiles d = percentiles_of(m.maker, "tick_to_decision_ns");
    const Percentiles floor = floor_percentiles(m);
    std::printf("| %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", setting(m).c_str(), ns(t.p50).c_str(),
                yes_no(t.p50 <= kTargetP50Ns), ns(t.p99).c_str(), yes_no(t.p99 <= kTargetP99Ns),
                ratio(t.p50, floor.p50).c_str(), ratio(t.p99, floor.p99).c_str(), d.present ? ns(d.p50).c_str() : "n/a",
                d.present ? ns(t.p50 - d.p50).c_str() : "n/a", m.has_floor ? ns(floor.p50).c_str() : "n/a");
  }

  std::printf("\n### What each window held\n\n");
  std::printf(
      "| maker idle, transport | window s | incremental packets/s (floor peer) | maker orders timed/s (untimed, in "
      "all) | maker placed / "
      "modifies / cancels | maker fills | load actions/s | maker CPU | involuntary switches/s, maker / "
      "floor peer | md gaps (maker) | floor short writes |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Measurement& m : ms) {
    const double load_actions =
        value_of(m.load, "orders.placed") + value_of(m.load, "orders.modifies") + value_of(m.load, "orders.cancels");
    std::printf(
        "| %s | %.1f | %s | %.0f (%.0f) | %.0f / %.0f / %.0f | %.0f | %.0f | %.0f%% | %.0f / %s | %.0f | "
        "%s |\n",
        setting(m).c_str(), m.window_s,
        m.has_floor ? std::to_string(std::lround(static_cast<double>(m.floor.datagrams) / m.floor.seconds)).c_str()
                    : "n/a",
        value_of(m.maker, "tick_to_trade_ns.count") / m.window_s, value_of(m.maker, "tick_to_trade.untimed_orders"),
        value_of(m.maker, "orders.placed"), value_of(m.maker, "orders.modifies"), value_of(m.maker, "orders.cancels"),
        value_of(m.maker, "fills"), load_actions / m.load_s, 100 * m.maker_sched.cpu_seconds / m.window_s,
        static_cast<double>(m.maker_sched.involuntary_switches) / m.window_s,
        m.has_floor
            ? std::to_string(std::lround(static_cast<double>(m.floor.peer_involuntary_switches) / m.floor.seconds))
                  .c_str()
            : "n/a",
        value_of(m.maker, "md.gaps"), m.has_floor ? std::to_string(m.floor.short_writes).c_str() : "n/a");
  }
  std::printf(
      "\nMaker counts are over its whole session (logon to SIGINT, a little longer than the window); "
      "its tick-to-trade histogram too. Load actions/s: the load generator's orders, modifies and "
      "cancels over its session. Involuntary switches: of the maker's trading thread and the floor "
      "peer thread (preemptions, and with backoff also every sched_yield that handed the CPU over).%s\n\n",
      o.quick ? " (--quick: a smoke run, too short for tails.)" : "");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  try {
    const Binaries bin = find_binaries(o);
    nb::print_machine_header("tick_to_trade_bench");
    std::printf(
        "Exchange %s and traders %s, compact mode. Exchange (idle %s, fsync batch) and load generator "
        "(random strategy, %.0f actions/s, idle backoff) on CPU %d; the measured market maker on CPU %d "
        "with the floor peer thread beside it (same idle); the floor's reader thread on CPU %d. %.0f s "
        "per window, %d round(s). Load average at start: %s.\n\n",
        bin.exchange.string().c_str(), bin.trader.string().c_str(), o.venue_idle.c_str(), o.rate, o.venue_cpu,
        o.measured_cpu, o.venue_cpu, o.seconds, o.repeats, nb::load_average().c_str());
    if (o.telemetry.size() > 1 || o.telemetry[0])
      std::printf("Telemetry: %s (every subject with --telemetry DIR, files in the measurement's temp dir).\n\n",
                  o.telemetry.size() > 1 ? "each idle setting without, then with it" : "on");
    std::fflush(stdout);
    std::vector<Measurement> ms;
    int index = 0;
    for (int round = 0; round < o.repeats; ++round) {
      for (const std::string& idle : o.idles) {
        for (const bool telemetry : o.telemetry) {
          for (const std::string& transport : o.transports) {  // innermost: tcp and shm interleaved
            std::fprintf(stderr, "tick_to_trade_bench: round %d/%d, maker idle %s%s, %s, %.0f s\n", round + 1,
                         o.repeats, idle.c_str(), telemetry ? ", --telemetry" : "", transport.c_str(), o.seconds);
            if (index != 0)
              std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the previous processes' exit settles
            ms.push_back(measure(o, bin, idle, telemetry, transport, round, index));
            ++index;
          }
        }
      }
    }
    report(o, ms);
    std::printf("Load average at the end: %s.\n", nb::load_average().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tick_to_trade_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
