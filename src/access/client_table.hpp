// Who may log on at the venue and with what ([accounts], [[clients]] of the
// exchange config; docs/EXCHANGE.md "Config"): each client's id, name, stored
// credential, rate limits, role and account. The exchange's alone: a client
// sends its key and the venue checks it, so nothing that trades on the venue
// (client/, trading/) reads this table or links this module
// (cmake/NanotickModuleGraph.cmake's NANOTICK_MODULE_NEVER).
//
// Start-up code only (allocates, throws config::ConfigError
// "<source>: <key>: <problem>"). A plain value once loaded: thread-safe to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "access/credential.hpp"
#include "config/toml_reader.hpp"
#include "market/instrument_table.hpp"

namespace nanotick::access {

// A client's account at the venue ([clients.account]; docs/CONTROLS.md
// "Accounts"): opening cash and positions, and the limits of the venue's
// pre-trade checks. Instruments by id (the config names them by symbol).
struct ClientAccount {
  std::int64_t cash = 0;
  std::vector<std::pair<std::uint32_t, std::int64_t>> positions;  // (instrument, qty); others start flat
  std::vector<std::uint32_t> instruments;                         // permitted; empty: every instrument
  std::int64_t max_order_qty = 0;                                 // 0: the instrument's own limit only
  std::int64_t max_notional = 0;                                  // 0: none
  std::int64_t collar = 0;                                        // 0: none
  std::int64_t short_limit = 0;
  std::uint32_t max_open_orders = 0;                              // 0: none
};

// A client who may log on, with its limits.
struct ClientConfig {
  std::uint32_t id = 0;  // required, 1..65535: the engine's ClientId
  std::string name;
  CredentialHash credential;  // required
  std::uint32_t rate_limit_per_s = 100'000;
  std::uint32_t rate_burst = 1'000;
  bool cancel_on_disconnect = true;
  // role = "admin": its session may send admin requests (halt/resume an
  // instrument, block/unblock a client, cancel all of a client's orders:
  // docs/CONTROLS.md "Admin"); "trader" (the default) may not.
  bool admin = false;
  std::optional<ClientAccount> account;  // none: unchecked, unless accounts are required
};

struct ClientTable {
  // [accounts] required: a client without [clients.account] may not trade
  // (its orders are refused NoAccount); false: it trades unchecked.
  bool accounts_required = false;
  std::vector<ClientConfig> clients;  // at least one

  const ClientConfig* find_client(std::uint32_t id) const noexcept;
};

// Reads [accounts] and [[clients]] from a config file's root table, each key
// checked (a [clients.account] names instruments by symbol: `instruments` is
// the venue's table, read first by venue::read_venue); leaves every other key
// of the root to the caller.
ClientTable read_client_table(config::TableReader& root, const market::InstrumentTable& instruments);

// The client table of the exchange config at `path`, its other sections
// checked as venue::load_venue_config checks them. For a process that fronts
// the venue's clients with credentials of its own (the FIX gateway).
ClientTable load_client_table(const std::string& path);

}  // namespace nanotick::access
