// nanotick-exchange: the exchange server (docs/EXCHANGE.md). Loads the
// config, recovers from the journal, serves until SIGINT/SIGTERM, then shuts
// down cleanly and prints its counters. With --telemetry DIR its critical
// threads record hops and function timers into DIR/exchange.ntt
// (docs/TELEMETRY.md), completed once the server has stopped.
#include <CLI/CLI.hpp>

#include "app_main.hpp"
#include "observability_options.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "access/demo_credentials.hpp"
#include "config/toml_reader.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/exchange_server.hpp"
#include "telemetry/writer.hpp"
#include "venue/api_key.hpp"

using namespace nanotick::apps;  // install_stop_handlers, stop_signal, ProcessLog, log_line (app_main.hpp)

int main(int argc, char** argv) {
  set_log_name("nanotick-exchange");
  using namespace nanotick::exchange;
  CLI::App app{"The nanotick exchange: order entry over TCP, market data over UDP multicast, journal and recovery",
               "nanotick-exchange"};
  std::string config_path = "config/exchange.toml";
  std::string journal_dir;
  double status_every = 0;
  app.add_option("--config,-c", config_path, "exchange config (TOML; docs/EXCHANGE.md)")->capture_default_str();
  app.add_option("--journal-dir", journal_dir, "overrides [journal] dir");
  app.add_option("--status", status_every, "print a status line every N seconds (0: never)")
      ->check(CLI::Range(0.0, 3600.0));
  ObservabilityOptions observe;
  add_observability_options(app, observe, "exchange.ntt", thread_roles());
  CLI11_PARSE(app, argc, argv);

  install_stop_handlers();

  try {
    // Every line below goes through the process's logger (the server's log
    // callback runs on this thread only: construction and shutdown); the
    // catch blocks write theirs after it stopped.
    ProcessLog process_log("nanotick-exchange");
    ExchangeConfig config = load_exchange_config(config_path);
    for (std::size_t i = 0; i < config.clients.size(); ++i)
      if (const std::string_view demo = nanotick::access::demo_credential_name(config.clients[i].credential);
          !demo.empty())
        log_line(nanotick::venue::demo_credential_warning(
            config_path + ": clients[" + std::to_string(i) + "] (id " + std::to_string(config.clients[i].id) + ")",
            demo));
    if (!journal_dir.empty()) config.journal.dir = journal_dir;
    // Declared before the server: it must outlive the threads recording into it.
    std::unique_ptr<nanotick::telemetry::Writer> telemetry;
    if (!observe.telemetry_dir.empty())
      telemetry = std::make_unique<nanotick::telemetry::Writer>(nanotick::telemetry::WriterOptions{
          .path = observe.telemetry_dir + "/exchange.ntt", .process_name = "exchange"});
    ExchangeServer server(config, log_line, telemetry.get(), observe.counters_path);
    if (telemetry) telemetry->start();
    server.start();
    log_line("order entry listening on " + server.order_entry_address().to_string() + ", market data " +
             config.market_data.incremental + " (incremental) " + config.market_data.snapshot + " (snapshot), " +
             std::string(to_string(config.threads.mode)) + " mode, journal fsync " +
             std::string(to_string(config.journal.fsync)));
    log_line("ready");
    auto next_status = std::chrono::steady_clock::now();
    int rc = 0;
    while (stop_signal() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      server.sample_queue_depths();
      if (const std::string why = server.failure(); !why.empty()) {
        log_line("error: " + why + "; shutting down");
        rc = 1;
        break;
      }
      if (status_every > 0 && std::chrono::steady_clock::now() >= next_status) {
        log_line(server.status_line());
        next_status += std::chrono::milliseconds(static_cast<long>(status_every * 1000));
      }
    }
    if (stop_signal() != 0) log_line(std::string("received ") + stop_signal_name() + ", shutting down");
    server.shutdown();
    if (telemetry) {
      telemetry->stop();  // the recording threads have stopped: the file gets its trailer
      if (const std::string error = telemetry->error(); !error.empty()) {
        log_line("error: telemetry file " + telemetry->path() + " is incomplete: " + error);
        rc = 1;
      } else {
        log_line("telemetry: " + std::to_string(telemetry->records_written()) + " records in " + telemetry->path() +
                 ", " + std::to_string(telemetry->dropped()) + " dropped (ring full)");
      }
    }
    std::printf("%s%s", server.counters_report().c_str(), server.balances_report().c_str());
    std::fflush(stdout);
    log_line(rc == 0 ? "stopped cleanly" : "stopped after an error");
    return rc;
  } catch (const nanotick::config::ConfigError& e) {
    log_line(std::string("config error: ") + e.what());
    return 2;
  } catch (const std::exception& e) {
    log_line(std::string("error: ") + e.what());
    return 1;
  }
}
