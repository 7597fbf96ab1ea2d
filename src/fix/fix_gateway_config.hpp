// The FIX gateway's config (docs/FIX.md "Sessions and credentials"): the
// venue it fronts, where it listens, where QuickFIX keeps its session stores,
// and the FIX sessions it accepts, each mapped to one nanotick client whose
// API key it logs on with. Start-up code: throws config::ConfigError naming
// the file and the key; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/socket_address.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::fix {

struct FixSessionConfig {
  std::string sender_comp_id;  // the FIX client's SenderCompID (our TargetCompID)
  std::string target_comp_id;  // the gateway's CompID as the client addresses it
  std::uint32_t client_id = 0;  // the nanotick client this session trades as
  std::string api_key;          // that client's key, read from key_file (checked against the venue's credential)
};

struct FixGatewayConfig {
  std::string source;             // the file read
  std::string exchange_config;    // the venue's config, resolved against the file's directory
  venue::VenueConfig venue;       // loaded from it: clients, instruments, order-entry address
  net::SocketAddress listen;      // where FIX clients connect
  std::string store_dir;          // QuickFIX's file stores and the gateway's order map (resolved)
  std::string data_dictionary;    // FIX44.xml (resolved; ./nanotick setup fetches it to build/fix/)
  std::string trade_ledger;       // the venue's trade ledger, read at start ("" = none; docs/FIX.md "Restarts")
  std::vector<FixSessionConfig> sessions;
};

// CompIDs: 1..32 characters, printable ASCII, no space, no '|' and no SOH.
bool valid_comp_id(const std::string& id) noexcept;

FixGatewayConfig load_fix_gateway_config(const std::string& path);

}  // namespace nanotick::fix
