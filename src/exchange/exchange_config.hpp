// The exchange's configuration (docs/EXCHANGE.md "Config"): loaded once at
// start-up from TOML, every key checked, every error naming the file, the key
// and the problem. The venue's sections ([server], [market_data],
// [[instruments]], [[clients]]) are read by venue/venue_config.hpp, which the
// trading client reads them with as well; [journal] and [threads] here.
// Keys marked "required" must be in the file (a missing one is an error
// naming it); their initialisers below serve only code that builds a config
// by hand (tests, benchmarks). The others default to the value given here.
// Start-up code only. A plain value once loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "access/client_table.hpp"
#include "config/thread_layout_reader.hpp"
#include "controls/account_limits.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread_layout.hpp"
#include "core/thread_mode.hpp"
#include "engine/types.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::exchange {

using access::ClientConfig;
using venue::MarketDataConfig;
using venue::ServerConfig;

enum class FsyncPolicy : std::uint8_t { kEvery, kBatch, kNone };

struct JournalConfig {
  std::string dir = "run/journal";  // required (--journal-dir overrides it)
  FsyncPolicy fsync = FsyncPolicy::kBatch;
  std::uint32_t batch_window_us = 1000;
  std::uint64_t segment_bytes = 64ull << 20;
  std::uint64_t snapshot_every = 1'000'000;  // records between engine snapshots; 0 = none
};

using core::ThreadMode;

// [threads]: the exchange's runners by layout (docs/EXCHANGE.md "Threads"),
// wired in exchange_server.cpp:
//   compact:   critical (gateway + sequencer + engine + md), aux, snapshotter
//   dedicated: gateway, sequencer, engine, md, aux, snapshotter
// aux = snapshot publisher + journal syncer. The critical runners default to
// [threads] idle, aux and snapshotter to backoff.
using ThreadConfig = core::ThreadLayout;
ThreadConfig default_threads();

// The venue's description (read by venue::read_venue, the reader the trading
// client uses too) and the exchange process's own sections.
struct ExchangeConfig {
  ServerConfig server;
  MarketDataConfig market_data;
  JournalConfig journal;
  ThreadConfig threads = default_threads();
  engine::EngineConfig engine;  // the venue's [[instruments]], id = position
  std::vector<ClientConfig> clients;
  bool accounts_required = false;  // [accounts] required

  // Identifies what the journal's replay depends on: FNV-1a over every
  // instrument field, in order, then the accounts (docs/CONTROLS.md): their
  // opening balances and limits decide which requests the engine took.
  std::uint64_t engine_fingerprint() const;
  // The venue's controls from [accounts] and each [clients.account].
  controls::ControlsConfig controls() const;
  const ClientConfig* find_client(std::uint32_t id) const noexcept;
};

// Throws config::ConfigError("<source>: <key>: <problem>").
ExchangeConfig parse_exchange_config(std::string_view toml_text, const std::string& source);
ExchangeConfig load_exchange_config(const std::string& path);

std::string_view to_string(FsyncPolicy p) noexcept;

// The runners [threads] may name, per mode (what `nanotick-exchange --describe`
// prints for tools/doctor).
const config::ThreadRoles& thread_roles() noexcept;

}  // namespace nanotick::exchange
