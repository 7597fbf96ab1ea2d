// The exchange server (docs/EXCHANGE.md): recovers the engine from the
// journal, then runs the pipeline of agents -- gateway, sequencer, engine,
// market data publisher (and, with [market_data] shm_path, its shared-memory
// ring) on the critical thread(s), snapshot publisher and journal syncer on
// the auxiliary thread -- in the thread layout the config asks for, until
// shutdown() drains and stops it cleanly.
//
// Threads: construct, start(), poll failure(), shutdown() and read the
// report from one controlling thread (main); the agents run on their own.
//
// Telemetry (docs/TELEMETRY.md): given a telemetry::Writer, the server
// creates one recorder per critical thread of its layout ("critical" in
// compact mode; "gateway", "sequencer", "engine", "md" in dedicated mode)
// and binds each on its thread while the thread runs. The caller starts the
// writer before start() and stops it after shutdown().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "exchange/exchange_config.hpp"
#include "net/socket_address.hpp"

namespace nanotick::telemetry {
class Writer;
}

namespace nanotick::exchange {

class ExchangeServer {
 public:
  // Called on the controlling thread only, from the constructor (recovery
  // report) and shutdown() (what failed while stopping): never on an agent's
  // thread, so it may wait for I/O (nanotick-exchange logs through its
  // process logger, waiting for room: these lines are never dropped).
  using Log = std::function<void(std::string_view)>;

  // Opens the journal (recovering the books from it: the recovery report goes
  // to `log`), binds the order-entry and market data sockets. Throws with a
  // message naming what failed (config, journal, address in use...).
  // `telemetry` (optional, not started yet) gets the critical threads'
  // recorders and must outlive the server. `counters_path`: the counters
  // file (core/counters_file.hpp) `./nanotick stat` reads; empty keeps the
  // counters in memory only.
  ExchangeServer(const ExchangeConfig& config, Log log, telemetry::Writer* telemetry = nullptr,
                 const std::string& counters_path = "");
  ~ExchangeServer();
  ExchangeServer(const ExchangeServer&) = delete;
  ExchangeServer& operator=(const ExchangeServer&) = delete;

  void start();
  // Non-empty when the server cannot go on (journal failure, an agent
  // thread died): what happened. The caller then calls shutdown().
  std::string failure() const;
  // Stops accepting, logs every session out, lets the pipeline drain, syncs
  // the journal, stops the threads. Idempotent.
  void shutdown();

  const net::SocketAddress& order_entry_address() const noexcept;
  // Every counter as "name value" lines (sessions, messages, rejects by
  // reason, clients' fills, journal, market data, queue depths, ack latency
  // summaries): the counters file's contents.
  std::string counters_report() const;
  // Every account's balances (docs/CONTROLS.md), "name value" lines:
  // account.<client>.opening_cash, .opening_position.<symbol> (the config's),
  // .cash, .cash_held, .working_orders, .position.<symbol>.
  // Call after shutdown() (the engine's thread has stopped).
  std::string balances_report() const;
  // Writes the pipeline rings' depths into their gauges (controlling thread;
  // the exchange's main loop does it every 20 ms).
  void sample_queue_depths() noexcept;
  // One line: orders/s so far and a few totals (for a live status display).
  std::string status_line() const;

  // Opaque; named here only so the layout classes in the .cpp can use it.
  struct Impl;

 private:
  void place_counters();

  std::unique_ptr<Impl> impl_;
};

}  // namespace nanotick::exchange
