// nanotick-floor: the loopback floor measured beside a running venue
// (docs/TELEMETRY.md "The loopback floor"). Two floors run until
// SIGINT/SIGTERM or --duration, then their "key value" summary is printed on
// stdout (and written to --summary FILE):
//   - tick-to-trade floor: joins the exchange's incremental multicast group
//     and, for every datagram, writes a 64-byte order to a loopback TCP
//     connection (or a shared-memory session: --transport shm) read like
//     the exchange reads its sessions (src/floor/tick_to_trade_floor.hpp);
//   - round trip floor: a ping-pong over the same transport of an order's
//     and its answer's sizes, paced at --rate pings/s, against an echo that
//     waits like the exchange's gateway (src/floor/round_trip_floor.hpp).
// The group comes from the exchange config as the trader reads it
// ([market_data] incremental and interface), or from --group/--port. The
// threads standing in for a trader idle with --idle; those standing in for
// the exchange idle like the exchange config says ([threads] idle; backoff
// without a config). Nothing is pinned: the demo runs it beside the traders
// under the same load, on the same CPUs.
//
// Exit status: 0 stopped cleanly; 1 a floor failed (its connection broke) or
// the summary could not be written; 2 bad options or config (one line naming
// the option or the key).
#include <CLI/CLI.hpp>

#include "app_main.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/idle_strategy.hpp"
#include "exchange/exchange_config.hpp"
#include "floor/floor_summary.hpp"
#include "floor/round_trip_floor.hpp"
#include "floor/tick_to_trade_floor.hpp"
#include "net/socket_address.hpp"

using namespace nanotick::apps;  // install_stop_handlers, stop_signal, ProcessLog, log_line (app_main.hpp)

namespace {

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string us(std::uint64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", static_cast<double>(ns) / 1000.0);
  return b;
}

// "floor: tick-to-trade floor p50 X us p99 Y us (N), round trip floor p50 X us p99 Y us (N)"
// (tools/demo/demo_console.py parses it for the demo's live row).
std::string status_line(const nanotick::floors::LiveFigures& t2t, const nanotick::floors::LiveFigures& rt) {
  return "floor: tick-to-trade floor p50 " + us(t2t.p50_ns()) + " us p99 " + us(t2t.p99_ns()) + " us (" +
         std::to_string(t2t.count()) + "), round trip floor p50 " + us(rt.p50_ns()) + " us p99 " + us(rt.p99_ns()) +
         " us (" + std::to_string(rt.count()) + ")";
}

// CLI11 validators: the message becomes "--option: <message>".
std::string check_ipv4(const std::string& text, bool multicast) {
  try {
    const nanotick::net::Ipv4Address a = nanotick::net::parse_ipv4(text);
    if (multicast && !a.is_multicast()) return "'" + text + "' is not a multicast group (224.0.0.0/4)";
    if (!multicast && a.is_multicast()) return "'" + text + "' is a multicast group, not an interface address";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

struct Where {
  nanotick::net::SocketAddress group;
  nanotick::net::Ipv4Address interface;
  nanotick::core::IdleKind venue_idle = nanotick::core::IdleKind::backoff;
  std::uint64_t shm_ring_bytes = 1u << 16;  // the exchange's server.shm_ring_bytes
  std::string source;  // for the log
};

}  // namespace

int main(int argc, char** argv) {
  set_log_name("nanotick-floor");
  namespace nf = nanotick::floors;
  namespace nn = nanotick::net;
  namespace nc = nanotick::core;
  CLI::App app{
      "The loopback floor beside a running venue: multicast recv -> 64-byte TCP send (tick-to-trade floor) "
      "and a 40/96-byte TCP ping-pong (order round trip floor)",
      "nanotick-floor"};
  std::string config_path;
  std::string group_text;
  int port = 0;
  std::string interface_text;
  double duration_s = 0;
  double rate = 1000;
  std::string idle_text = "backoff";
  std::string transport_text = "tcp";
  std::string summary_path;
  double status_every = 0;
  CLI::Option* config_opt =
      app.add_option("--config,-c", config_path,
                     "exchange config (TOML): its [market_data] incremental group and interface, its [threads] idle")
          ->check(CLI::ExistingFile);
  CLI::Option* group_opt =
      app.add_option("--group", group_text, "incremental multicast group (instead of --config), e.g. 239.255.42.1")
          ->check(CLI::Validator([](std::string& s) { return check_ipv4(s, true); }, "IPV4"));
  CLI::Option* port_opt =
      app.add_option("--port", port, "incremental channel's port (with --group)")->check(CLI::Range(1, 65535));
  app.add_option("--interface", interface_text,
                 "join the group on this local address (default: the config's [market_data] interface, or 127.0.0.1)")
      ->check(CLI::Validator([](std::string& s) { return check_ipv4(s, false); }, "IPV4"));
  app.add_option("--duration", duration_s, "stop after N seconds (0: run until SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--rate", rate, "round trip floor: pings per second, one in flight at a time")
      ->check(CLI::Range(0.1, 100000.0))
      ->capture_default_str();
  app.add_option("--idle", idle_text, "how the trader-side threads (the floor peer, the ping client) wait")
      ->check(CLI::IsMember({"backoff", "spin", "block"}))
      ->capture_default_str();
  app.add_option("--transport", transport_text,
                 "the order-entry transport the floor stands for: the order leg of the tick-to-trade floor and the "
                 "round trip floor's ping-pong go over loopback TCP or a shared-memory session (the exchange's)")
      ->check(CLI::IsMember({"tcp", "shm"}))
      ->capture_default_str();
  app.add_option("--summary", summary_path, "also write the summary to FILE");
  app.add_option("--status", status_every, "log a status line every N seconds (0: never)")
      ->check(CLI::Range(0.0, 3600.0));
  group_opt->needs(port_opt);
  port_opt->needs(group_opt);
  config_opt->excludes(group_opt);
  group_opt->excludes(config_opt);
  try {
    app.parse(argc, argv);
    if (config_path.empty() && group_text.empty())
      throw CLI::ValidationError("--config", "give --config EXCHANGE_TOML, or --group and --port");
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;  // --help is 0; every error is 2, named by CLI11
  }

  install_stop_handlers();

  Where where;
  try {
    if (!config_path.empty()) {
      // As the trader reads it (trader_config.cpp: market_data defaults).
      const nanotick::exchange::ExchangeConfig config = nanotick::exchange::load_exchange_config(config_path);
      where.group = nn::parse_multicast_group(config.market_data.incremental);
      where.interface = nn::parse_ipv4(config.market_data.interface);
      // The echo waits like the exchange's gateway: its runner's idle strategy.
      where.venue_idle =
          config.threads.runner(config.threads.mode == nanotick::core::ThreadMode::kDedicated ? "gateway" : "critical")
              .idle;
      where.shm_ring_bytes = config.server.shm_ring_bytes;
      where.source = config_path;
    } else {
      where.group = {nn::parse_ipv4(group_text), static_cast<std::uint16_t>(port)};
      where.interface = nn::parse_ipv4("127.0.0.1");
      where.source = "--group/--port";
    }
    if (!interface_text.empty()) where.interface = nn::parse_ipv4(interface_text);
  } catch (const std::exception& e) {  // ConfigError, and a bad address in an option
    log_line(std::string("config error: ") + e.what());
    return 2;
  }

  try {
    ProcessLog process_log("nanotick-floor");  // the lines above and in the catch block: straight to stderr
    const nc::IdleKind trader_idle = nc::parse_idle_kind(idle_text);
    const auto transport = transport_text == "shm" ? nanotick::ipc::Transport::kShm : nanotick::ipc::Transport::kTcp;
    nf::TickToTradeFloor t2t(
        {where.interface, where.group, trader_idle, where.venue_idle, -1, -1, transport, where.shm_ring_bytes});
    nf::RoundTripFloor rt({rate, trader_idle, where.venue_idle, -1, -1, transport, where.shm_ring_bytes});
    t2t.start();
    rt.start();
    // "ready" only once the peer records: a datagram sent after it is answered.
    const auto ready_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!t2t.recording() && t2t.failure() == nullptr && std::chrono::steady_clock::now() < ready_by)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!t2t.recording()) throw std::runtime_error("the tick-to-trade floor's peer did not start within 10 s");
    log_line("tick-to-trade floor on " + t2t.group().to_string() + " (joined on " + where.interface.to_string() +
             ", from " + where.source + "), round trip floor at " + number(rate) + " pings/s, order entry over " +
             transport_text + "; idle " + idle_text + " (trader side), " +
             std::string(nc::to_string(where.venue_idle)) + " (exchange side)");
    log_line("ready");
    const auto start = std::chrono::steady_clock::now();
    auto next_status = start + std::chrono::duration<double>(status_every);
    int rc = 0;
    while (stop_signal() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto now = std::chrono::steady_clock::now();
      if (const char* why = t2t.failure() ? t2t.failure() : rt.failure(); why != nullptr) {
        log_line(std::string("error: ") + why + "; stopping");
        rc = 1;
        break;
      }
      if (duration_s > 0 && now - start >= std::chrono::duration<double>(duration_s)) break;
      if (status_every > 0 && now >= next_status) {
        log_line(status_line(t2t.live(), rt.live()));
        next_status += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(status_every));
      }
    }
    if (stop_signal() != 0) log_line(std::string("received ") + stop_signal_name() + ", stopping");
    rt.stop();
    t2t.stop();
    const std::string text =
        nf::transport_summary(transport) + nf::summary(t2t.result()) + nf::summary(rt.result(), rate);
    std::printf("%s", text.c_str());
    std::fflush(stdout);
    if (!summary_path.empty()) {
      std::ofstream out(summary_path, std::ios::binary | std::ios::trunc);
      out << text;
      out.close();
      if (!out) {
        log_line("error: cannot write the summary to " + summary_path);
        rc = 1;
      }
    }
    log_line(status_line(t2t.live(), rt.live()));
    log_line(rc == 0 ? "stopped cleanly" : "stopped after an error");
    return rc;
  } catch (const std::exception& e) {
    log_line(std::string("error: ") + e.what());
    return 1;
  }
}
