// The exchange's configuration (docs/EXCHANGE.md "Config"): loaded once at
// start-up from TOML, every key checked, every error naming the file, the key
// and the problem. Keys marked "required" must be in the file (a missing one
// is an error naming it); their initialisers below serve only code that
// builds a config by hand (tests, benchmarks). The others default to the
// value given here. Start-up code only. A plain value once loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/idle_strategy.hpp"
#include "engine/engine_config.hpp"
#include "exchange/credential.hpp"

namespace nanotick::exchange {

struct ServerConfig {
  std::string order_entry = "127.0.0.1:9100";  // required: listen address ip:port
  std::uint32_t max_sessions = 64;
  std::uint32_t logon_timeout_ms = 5000;
  std::uint32_t heartbeat_ms = 1000;
  std::uint32_t min_heartbeat_ms = 100;
  std::uint32_t max_heartbeat_ms = 60000;
  std::uint32_t output_buffer_bytes = 1u << 20;
  std::uint32_t read_budget_bytes = 1u << 16;
};

struct MarketDataConfig {
  std::string interface = "127.0.0.1";           // required: IP_MULTICAST_IF
  std::string incremental = "239.255.42.1:9201";  // required: group:port
  std::string snapshot = "239.255.42.2:9202";     // required: group:port
  std::uint32_t ttl = 0;
  std::uint32_t mtu = 1400;
  std::uint32_t heartbeat_ms = 1000;
  std::uint32_t snapshot_interval_ms = 1000;
};

enum class FsyncPolicy : std::uint8_t { kEvery, kBatch, kNone };

struct JournalConfig {
  std::string dir = "run/journal";  // required (--journal-dir overrides it)
  FsyncPolicy fsync = FsyncPolicy::kBatch;
  std::uint32_t batch_window_us = 1000;
  std::uint64_t segment_bytes = 64ull << 20;
  std::uint64_t snapshot_every = 1'000'000;  // records between engine snapshots; 0 = none
};

enum class ThreadMode : std::uint8_t { kCompact, kDedicated };

struct ThreadConfig {
  ThreadMode mode = ThreadMode::kCompact;
  core::IdleKind idle = core::IdleKind::backoff;
  std::vector<int> cpus;  // optional pinning, in agent order
};

struct ClientConfig {
  std::uint32_t id = 0;  // required, 1..65535: the engine's ClientId
  std::string name;
  CredentialHash credential;  // required
  std::uint32_t rate_limit_per_s = 100'000;
  std::uint32_t rate_burst = 1'000;
  bool cancel_on_disconnect = true;
};

struct ExchangeConfig {
  ServerConfig server;
  MarketDataConfig market_data;
  JournalConfig journal;
  ThreadConfig threads;
  engine::EngineConfig engine;  // [[instruments]], id = position; symbol, tick_size, min_price,
                                // max_price and max_order_qty required
  std::vector<ClientConfig> clients;

  // Identifies the instrument table (what the journal depends on): FNV-1a
  // over every instrument field, in order.
  std::uint64_t engine_fingerprint() const noexcept;
  const ClientConfig* find_client(std::uint32_t id) const noexcept;
};

// Throws config::ConfigError("<source>: <key>: <problem>").
ExchangeConfig parse_exchange_config(std::string_view toml_text, const std::string& source);
ExchangeConfig load_exchange_config(const std::string& path);

std::string_view to_string(FsyncPolicy p) noexcept;
std::string_view to_string(ThreadMode m) noexcept;

}  // namespace nanotick::exchange
