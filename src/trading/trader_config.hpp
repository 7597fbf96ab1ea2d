// The trading client's configuration (docs/TRADER.md "Config"): loaded once
// at start-up from TOML, every key checked, every error naming the file, the
// key and the problem (config::ConfigError "file: key: problem"). The
// venue's side -- its instrument table, its order-entry and market data
// addresses, the client's credential -- is read from the exchange config the
// trader file names, so the two cannot disagree about instruments (a trader
// with another table would misread every InstrumentId on the wire).
//
// Start-up code only (allocates, throws). A plain value once loaded:
// thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/order_entry_client.hpp"
#include "config/thread_layout_reader.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread_layout.hpp"
#include "core/thread_mode.hpp"
#include "market/instrument_table.hpp"
#include "market/types.hpp"
#include "trading/features.hpp"
#include "trading/risk_manager.hpp"
#include "trading/strategies/strategy_params.hpp"

namespace nanotick::trading {

core::ThreadLayout default_threads();

struct TraderConfig {
  std::string name;             // for logs and status lines; defaults to the file's stem
  std::string source;           // the trader config file (as given)
  std::string exchange_config;  // the exchange config it read, resolved against the trader file's directory
  StrategyKind strategy = StrategyKind::kMarketMaker;
  // [threads]: runner "engine" (the caller's thread: consumer, trade engine,
  // strategy, order entry) and, in the dedicated layout, "receiver" (the
  // market data sockets into a ring); both default to [threads] idle. Wired
  // in trader.hpp.
  core::ThreadLayout threads = default_threads();

  // Order entry and the incremental market data channel over TCP and UDP
  // multicast, or both over shared memory ([trader] transport; the snapshot
  // channel is multicast either way: docs/TRADER.md "Transport").
  ipc::Transport transport = ipc::Transport::kTcp;
  client::OrderEntryClientConfig
      session;  // exchange address / shm_path default to the exchange config's server.order_entry / shm_path

  struct MarketData {
    // Defaults: the exchange config's [market_data].
    std::string interface;    // local IPv4 address the groups are joined on
    std::string incremental;  // multicast group:port
    std::string snapshot;     // multicast group:port
    std::string shm_path;     // transport "shm": the exchange's market data ring (its market_data.shm_path)
    std::uint32_t reorder_packets = 8;    // packets held while waiting for a missing one
    std::uint32_t reorder_us = 200;       // longest wait for a missing packet
    std::uint32_t buffer_messages = 65536;  // incrementals buffered for instruments in recovery, all together
    std::uint32_t max_datagram_bytes = 1400;  // the exchange's market data mtu
  } market_data;

  market::InstrumentTable instruments;            // the exchange's table, InstrumentId = index
  std::vector<FeatureConfig> features;         // one per instrument
  std::vector<InstrumentRiskLimits> risk;      // one per instrument
  GlobalRiskLimits global_risk;
  std::vector<StrategyParams> strategy_params;  // one per instrument; unlisted ones: enabled = false

  std::uint64_t seed = 1;
  std::uint32_t status_interval_ms = 1000;  // status line period, 0 = none
  std::size_t max_orders = 4096;            // order manager capacity

  // Instruments whose strategy is enabled (listed in the trader file).
  std::size_t traded_instruments() const noexcept;
};

// `source` names the text in messages and is the path the exchange_config
// key is resolved against (its directory). Throws config::ConfigError.
TraderConfig parse_trader_config(std::string_view toml_text, const std::string& source);
TraderConfig load_trader_config(const std::string& path);

// "market_maker", "liquidity_taker", "random": the names the config uses.
std::string_view to_string(StrategyKind kind) noexcept;

// The runners [threads] may name, per mode (what `nanotick-trader --describe`
// prints for tools/doctor).
const config::ThreadRoles& thread_roles() noexcept;

}  // namespace nanotick::trading
