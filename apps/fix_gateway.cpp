// nanotick-fix-gateway: the venue's FIX 4.4 order entry (docs/FIX.md). A
// QuickFIX acceptor for the configured FIX sessions, each trading as one
// nanotick client over its own order-entry session to the exchange.
//
// Exit status: 0 stopped by SIGINT/SIGTERM, 1 failed (a venue session could
// not log on at start, QuickFIX could not start, the order map could not be
// written), 2 bad command line or config.
#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "app_main.hpp"
#include "core/agent_runner.hpp"
#include "core/idle_strategy.hpp"
#include "fix/fix_gateway.hpp"
#include "fix/fix_gateway_config.hpp"
#include "net/socket_address.hpp"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  namespace apps = nanotick::apps;
  namespace fix = nanotick::fix;
  CLI::App app{"nanotick-fix-gateway: FIX 4.4 order entry for the venue (QuickFIX acceptor)"};
  std::string config_path, exchange, transport = "tcp", idle, message_log;
  app.add_option("--config", config_path, "the gateway's config (config/fix-gateway.toml)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--exchange", exchange, "the exchange's order-entry address ip:port (default: its config's)");
  app.add_option("--transport", transport, "to the exchange: tcp or shm (its server.shm_path)")
      ->check(CLI::IsMember({"tcp", "shm"}));
  app.add_option("--idle", idle,
                 "spin (a CPU of its own) or backoff (waits up to 200 us when idle); default: the config's [threads]")
      ->check(CLI::IsMember({"spin", "backoff"}));
  app.add_option("--message-log", message_log, "write every FIX message in and out under this directory");
  std::uint32_t logon_timeout_ms = 10'000;
  app.add_option("--logon-timeout-ms", logon_timeout_ms, "at start, every venue session must log on within this")
      ->check(CLI::Range(1u, 600'000u));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  apps::set_log_name("nanotick-fix-gateway");
  fix::FixGatewayConfig config;
  fix::FixGatewayOptions options;
  try {
    config = fix::load_fix_gateway_config(config_path);
    if (!exchange.empty()) options.exchange = nanotick::net::parse_socket_address(exchange);
  } catch (const std::exception& e) {
    apps::log_line(std::string("error: ") + e.what());
    return kExitUsage;
  }
  options.transport = transport == "shm" ? nanotick::ipc::Transport::kShm : nanotick::ipc::Transport::kTcp;
  // The gateway's runner as its [threads] table configures it; --idle overrides the idle kind.
  nanotick::core::RunnerConfig runner_config = config.threads.runner("gateway");
  if (!idle.empty()) runner_config.idle = nanotick::core::parse_idle_kind(idle);
  options.spin = runner_config.idle == nanotick::core::IdleKind::spin;
  options.message_log_dir = message_log;
  options.logon_wait_ms = logon_timeout_ms;
  // Everything the gateway writes holds its clients' order flow (QuickFIX's
  // stores and message logs, the order maps): its user's alone.
  ::umask(077);
  apps::install_stop_handlers();
  apps::ProcessLog log("nanotick-fix-gateway");
  for (const std::string& w : config.warnings) apps::log_line("warning: " + w);
  int status = 0;
  try {
    fix::FixGateway gateway(config, options, [](const std::string& line) { apps::log_line(line); });
    // The gateway is a core agent on a runner like every process's: its
    // on_start (the venue logons, then QuickFIX listening) runs on the
    // runner's thread and start() rethrows its failure; this thread waits for
    // a stop signal or the agent's failure.
    auto runner = nanotick::core::make_agent_runner(gateway, runner_config, "nt-fix-gateway");
    runner.start();
    apps::log_line("ready: FIX 4.4 on " + config.listen.to_string() +
                   (config.listen.ip.value == 0 ? " (every interface)" : "") + ", " +
                   std::to_string(config.sessions.size()) + " session(s), data dictionary " + config.data_dictionary +
                   ", idle " + std::string(nanotick::core::to_string(runner_config.idle)));
    while (apps::stop_signal() == 0 && !runner.has_failed()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!runner.has_failed()) apps::log_line(std::string("stopping on ") + apps::stop_signal_name());
    try {
      runner.stop();  // on_close logs the sessions out; rethrows the agent's failure
    } catch (const std::exception& e) {
      apps::log_line(std::string("error: ") + e.what() + "; stopped");
      status = kExitFailed;
    }
    const fix::FixLogonCounters& lc = gateway.logon_counters();
    if (const fix::FixSessionLayer* layer = gateway.session_layer(); layer != nullptr) {
      const fix::FixSessionLayerCounters& q = layer->counters();
      apps::log_line("FIX logons: accepted " + std::to_string(lc.accepted) + "; refused with a Logout: no password " +
                     std::to_string(lc.no_password) + ", wrong password " + std::to_string(lc.wrong_password) +
                     ", venue session down " + std::to_string(lc.venue_down) + ", MsgSeqNum too low " +
                     std::to_string(q.seq_too_low) + "; dropped unanswered: unknown CompID " +
                     std::to_string(q.unknown_comp_ids) + ", session already connected " +
                     std::to_string(q.session_already_connected) + ", ResetSeqNumFlag=Y " +
                     std::to_string(q.reset_logons_refused));
    }
    for (const auto& s : gateway.sessions()) {
      const auto& c = s->counters();
      apps::log_line("client " + std::to_string(s->client().config().client_id) + ": new " +
                     std::to_string(c.new_orders) + ", cancels " + std::to_string(c.cancels) + ", replaces " +
                     std::to_string(c.replaces) + ", refused by the gateway " + std::to_string(c.refused_here) +
                     ", venue reports " + std::to_string(c.venue_reports) + ", cancelled at session end " +
                     std::to_string(c.cancelled_on_session_end) + ", resends ignored " +
                     std::to_string(c.poss_dup_ignored) + ", missed fills replayed by the venue " +
                     std::to_string(c.fills_replayed));
      // The gateway's own time per message (docs/FIX.md "What the gateway adds"); ./nanotick fix-bench reads these
      // lines.
      for (const auto& [name, h] :
           {std::pair{"inbound (FIX request -> venue message written)", &s->inbound_ns()},
            std::pair{"outbound (venue report read -> FIX message written)", &s->outbound_ns()}})
        if (h->count() != 0)
          apps::log_line("client " + std::to_string(s->client().config().client_id) + ": gateway time " + name +
                         ": n " + std::to_string(h->count()) + ", p50 " + std::to_string(h->percentile(50)) +
                         " ns, p99 " + std::to_string(h->percentile(99)) + " ns, p99.9 " +
                         std::to_string(h->percentile(99.9)) + " ns, max " + std::to_string(h->max()) + " ns");
    }
  } catch (const std::exception& e) {
    apps::log_line(std::string("error: ") + e.what());
    status = kExitFailed;
  }
  apps::log_line("stopped");
  return status;
}
