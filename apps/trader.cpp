// nanotick-trader: one trading client (docs/TRADER.md). Loads its config
// (and the exchange config it names), joins the market data groups, logs on,
// trades its strategy until SIGINT/SIGTERM or --duration, then cancels its
// orders, logs out and prints its summary (positions, PnL, orders, risk,
// market data recovery, tick-to-trade) as "key value" lines on stdout.
// With --telemetry DIR its engine thread (and, dedicated, its receiver
// thread) record hops and function timers into DIR/<trader name>.ntt
// (docs/TELEMETRY.md), completed once trading has stopped.
#include <CLI/CLI.hpp>

#include "app_main.hpp"
#include "observability_options.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "config/toml_reader.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "telemetry/writer.hpp"
#include "trading/strategies/liquidity_taker.hpp"
#include "trading/strategies/market_maker.hpp"
#include "trading/strategies/random_strategy.hpp"
#include "trading/trader.hpp"
#include "trading/trader_config.hpp"
#include "venue/api_key.hpp"
#include "venue/key_file.hpp"

using namespace nanotick::apps;  // install_stop_handlers, stop_signal, ProcessLog, log_line (app_main.hpp)

namespace {

// The telemetry file of this trader: DIR/<name>.ntt. The name becomes a file
// name (and the file's process name), and must not take the exchange's file.
std::unique_ptr<nanotick::telemetry::Writer> open_telemetry(const std::string& dir,
                                                            const nanotick::trading::TraderConfig& config) {
  const std::string& name = config.name;
  const bool usable = !name.empty() && name.size() <= 63 &&
                      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                          std::string::npos &&
                      name.front() != '.';
  if (!usable)
    throw std::invalid_argument("--telemetry: the trader's name '" + name + "' ([trader] name in " + config.source +
                                ") cannot name its telemetry file: use 1..63 letters, digits, '.', '_' or '-', "
                                "not starting with '.'");
  if (name == "exchange")
    throw std::invalid_argument(
        "--telemetry: a trader named 'exchange' would overwrite the exchange's telemetry "
        "file: rename it ([trader] name in " +
        config.source + ")");
  return std::make_unique<nanotick::telemetry::Writer>(
      nanotick::telemetry::WriterOptions{.path = dir + "/" + name + ".ntt", .process_name = name});
}

// The engine thread's status callback (Trader::run). The session ends and
// the periodic status lines come between passes of the hot loop: they copy
// their values into the log ring (the logger's thread formats and writes)
// and are dropped, counted, if the ring is full -- the loop never waits for
// stderr.
struct EngineLog {
  nanotick::core::Logger& log;

  void operator()(const nanotick::trading::TraderStatus& s) const {
    using nanotick::core::LogFullPolicy, nanotick::core::LogLevel, nanotick::trading::TraderStatus;
    s.apply([&](const auto&... v) {
      NT_LOG_WITH(log, LogLevel::kInfo, LogFullPolicy::kDrop, TraderStatus::kFormat, v...);
    });
  }
  void operator()(const nanotick::trading::SessionEnd& e) const {
    using nanotick::core::LogFullPolicy, nanotick::core::LogLevel, nanotick::trading::SessionEnd;
    if (e.retry_in_ms != 0) {
      e.apply([&](const auto&... v) {
        NT_LOG_WITH(log, LogLevel::kWarn, LogFullPolicy::kDrop, SessionEnd::kRetryFormat, v..., e.retry_in_ms);
      });
    } else {
      e.apply([&](const auto&... v) {
        NT_LOG_WITH(log, LogLevel::kWarn, LogFullPolicy::kDrop, SessionEnd::kFormat, v...);
      });
    }
  }
};

template <typename Strategy>
int trade(const nanotick::trading::TraderConfig& config, Strategy strategy, double duration_s,
          const std::string& book_dump_path, const std::string& telemetry_dir, const std::string& counters_path) {
  using namespace nanotick;
  // Before the trader: the writer outlives every thread recording into it.
  std::unique_ptr<telemetry::Writer> writer;
  trading::TraderTelemetry recorders;
  if (!telemetry_dir.empty()) {
    writer = open_telemetry(telemetry_dir, config);
    recorders.engine = &writer->create_recorder("engine");
    if (config.threads.mode == core::ThreadMode::kDedicated) recorders.receiver = &writer->create_recorder("receiver");
  }
  trading::Trader<Strategy> trader(config, strategy, recorders, counters_path);
  if (writer) writer->start();
  // This thread is the "engine" runner ([threads.engine] or threads.cpus[0]).
  const core::RunnerConfig& engine_runner = config.threads.runner("engine");
  if (engine_runner.cpu >= 0) {
    if (const std::error_code ec = core::pin_current_thread(engine_runner.cpu); ec)
      log_line("warning: cannot pin to cpu " + std::to_string(engine_runner.cpu) + ": " + ec.message());
  }
  log_line(std::string("trading ") + std::string(trading::to_string(config.strategy)) + " on " +
           std::to_string(config.traded_instruments()) + " of " +
           std::to_string(config.instruments.instruments.size()) + " instruments as client " +
           std::to_string(config.session.client_id) + ", exchange " +
           (config.transport == ipc::Transport::kShm ? "shm:" + config.session.shm_path
                                                     : config.session.exchange.to_string()) +
           ", market data " + config.market_data.incremental + " + " + config.market_data.snapshot);
  log_line("ready");
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(duration_s);
  std::uint32_t passes = 0;
  auto stop = [&] {
    if (stop_signal() != 0) return true;
    // The clock is read every 256 passes only: the check stays off the hot path.
    if (duration_s > 0 && (++passes & 255u) == 0) return std::chrono::steady_clock::now() - start >= limit;
    return false;
  };
  const EngineLog status{process_logger()};
  core::IdleConfig idle;
  idle.kind = engine_runner.idle;
  trader.run(idle, stop, status);
  if (stop_signal() != 0) log_line(std::string("received ") + stop_signal_name() + ", stopped");
  bool telemetry_failed = false;
  if (writer) {
    writer->stop();  // run() returned: no thread records any more, the file gets its trailer
    if (const std::string error = writer->error(); !error.empty()) {
      log_line("error: telemetry file " + writer->path() + " is incomplete: " + error);
      telemetry_failed = true;
    } else {
      log_line("telemetry: " + std::to_string(writer->records_written()) + " records in " + writer->path() + ", " +
               std::to_string(writer->dropped()) + " dropped (ring full)");
    }
  }
  if (!book_dump_path.empty()) {
    std::FILE* f = std::fopen(book_dump_path.c_str(), "w");
    const std::string dump = trader.book_dump();
    if (f == nullptr || std::fwrite(dump.data(), 1, dump.size(), f) != dump.size() || std::fclose(f) != 0) {
      log_line("error: cannot write the book dump to " + book_dump_path);
      return 1;
    }
  }
  std::printf("%s", trader.summary().c_str());
  std::fflush(stdout);
  log_line(trader.status_line());
  if (trader.session_failed()) {
    log_line("error: the exchange refused the logon for good (reason above): check the config; stopped");
    return 1;
  }
  if (telemetry_failed) return 1;
  log_line("stopped cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  set_log_name("nanotick-trader");
  using namespace nanotick::trading;
  CLI::App app{"A nanotick trading client: market data, order entry, one strategy under risk limits",
               "nanotick-trader"};
  std::string config_path;
  double duration_s = 0;
  app.add_option("--config,-c", config_path, "trader config (TOML; docs/TRADER.md)")->required();
  app.add_option("--duration", duration_s, "stop after N seconds (0: run until SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, 1e7));
  std::string book_dump_path;
  app.add_option("--book-dump", book_dump_path, "at exit, write every book order by order to this file");
  ObservabilityOptions observe;
  add_observability_options(app, observe, "<trader name>.ntt", thread_roles());
  CLI11_PARSE(app, argc, argv);

  install_stop_handlers();

  try {
    const TraderConfig config = load_trader_config(config_path);
    // From here every line goes through the process's logger; the catch
    // blocks below write theirs after it stopped.
    ProcessLog process_log("nanotick-trader[" + config.name + "]");
    if (const std::string mode = nanotick::venue::shared_key_mode_problem(config_path, "its session.api_key");
        !mode.empty())
      log_line("warning: " + mode);
    if (const std::string_view demo = nanotick::venue::demo_key_name(config.session.api_key); !demo.empty())
      log_line(nanotick::venue::demo_credential_warning(config_path + ": session.api_key", demo));
    switch (config.strategy) {
      case StrategyKind::kMarketMaker:
        return trade(config, MarketMaker(config.strategy_params), duration_s, book_dump_path, observe.telemetry_dir,
                     observe.counters_path);
      case StrategyKind::kLiquidityTaker:
        return trade(config, LiquidityTaker(config.strategy_params), duration_s, book_dump_path, observe.telemetry_dir,
                     observe.counters_path);
      case StrategyKind::kRandom:
        return trade(config, RandomStrategy(config.strategy_params, config.seed), duration_s, book_dump_path,
                     observe.telemetry_dir, observe.counters_path);
    }
    log_line("error: unknown strategy kind");
    return 2;
  } catch (const nanotick::config::ConfigError& e) {
    log_line(std::string("config error: ") + e.what());
    return 2;
  } catch (const std::exception& e) {
    log_line(std::string("error: ") + e.what());
    return 1;
  }
}
