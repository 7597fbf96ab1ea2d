// The venue's description: what a process needs to know to run the venue or
// to trade on it -- where orders go and the session rules there ([server]),
// where market data comes from ([market_data]), the instrument table
// ([[instruments]]: InstrumentId = position). The exchange and its clients
// (the trader, the FIX gateway, the admin command line) all read it from the
// exchange's config file through this one reader, so they cannot disagree
// about an instrument id or an address, and none depends on another. Who may
// log on and with which credential ([accounts], [[clients]]) is the
// exchange's alone: access/client_table.hpp reads it, and no client does. The
// exchange's own sections ([journal], [threads]) are read by the exchange
// (exchange/exchange_config.hpp).
//
// Keys marked "required" must be in the file (a missing one is an error naming
// it); their initialisers serve only code that builds a config by hand (tests,
// benchmarks). Start-up code only (allocates, throws config::ConfigError
// "<source>: <key>: <problem>"). A plain value once loaded: thread-safe to read.
#pragma once

#include <cstdint>
#include <string>

#include "config/toml_reader.hpp"
#include "market/instrument_table.hpp"

namespace nanotick::venue {

// Order entry: the listen address and the session rules every client meets.
struct ServerConfig {
  std::string order_entry = "127.0.0.1:9100";  // required: listen address ip:port
  std::uint32_t max_sessions = 64;
  std::uint32_t logon_timeout_ms = 5000;
  // A logged-on session's message begun but not complete this long is closed
  // (Logout PartialMessageTimeout): a client trickling bytes is never silent,
  // and would otherwise hold its slot for ever.
  std::uint32_t partial_message_timeout_ms = 5000;
  std::uint32_t heartbeat_ms = 1000;
  std::uint32_t min_heartbeat_ms = 100;
  std::uint32_t max_heartbeat_ms = 60000;
  std::uint32_t output_buffer_bytes = 1u << 20;
  std::uint32_t read_budget_bytes = 1u << 16;
  // Shared-memory sessions (docs/EXCHANGE.md "Shared-memory sessions"): the
  // UNIX socket path where clients ask for one (empty: none offered), how
  // many may be open at once, and each direction's ring.
  std::string shm_path;
  std::uint32_t shm_slots = 8;
  std::uint32_t shm_ring_bytes = 1u << 16;
};

// The largest packet a slot of the shared-memory market data ring holds (an
// Ethernet MTU's UDP payload; ipc::kMdRingMaxPacketBytes, which the exchange
// and the trader check it equals): with market_data.shm_path set, the mtu
// may not be larger.
inline constexpr std::uint32_t kMaxShmMdPacketBytes = 1472;

// The market data feeds: where they are published and how they are cut.
struct MarketDataConfig {
  std::string interface = "127.0.0.1";           // required: IP_MULTICAST_IF
  std::string incremental = "239.255.42.1:9201";  // required: group:port
  std::string snapshot = "239.255.42.2:9202";     // required: group:port
  std::uint32_t ttl = 0;
  std::uint32_t mtu = 1400;
  std::uint32_t heartbeat_ms = 1000;
  std::uint32_t snapshot_interval_ms = 1000;
  // The incremental channel in shared memory too (docs/EXCHANGE.md "Market
  // data in shared memory"): the UNIX socket path where readers ask for the
  // ring (empty: not offered) and its slots, one packet each.
  std::string shm_path;
  std::uint32_t shm_ring_packets = 4096;
  // Who sends the incremental datagrams (docs/EXCHANGE.md "Market data in
  // shared memory"): the publisher's own thread, between engine batches
  // (false), or -- with shm_path set -- the auxiliary thread, forwarding the
  // ring's packets (true: udp_sender = "aux", the default when shm_path is
  // set), so that the critical thread never waits for the kernel's sendto.
  bool udp_from_ring = false;
};

struct VenueConfig {
  ServerConfig server;
  MarketDataConfig market_data;
  market::InstrumentTable instruments;  // [[instruments]], id = position; symbol, tick_size,
                                        // min_price, max_price and max_order_qty required
};

// Reads the venue's sections from a config file's root table, each key
// checked; leaves every other key of the root to the caller (whose
// root.finish() refuses what nobody read). Then validate_instruments() checks
// the table as a whole (after finish(): a misspelt key is named first).
VenueConfig read_venue(config::TableReader& root);
// Throws config::ConfigError("<source>: instruments: <problem>").
void validate_instruments(const VenueConfig& venue, const std::string& source);

// The venue's description from the exchange config at `path`: its sections
// checked as strictly as the exchange checks them; the exchange's own sections
// ([accounts], [[clients]], [journal], [threads]) allowed but not read: a
// client has no business with who else may log on; anything else refused.
VenueConfig load_venue_config(const std::string& path);

}  // namespace nanotick::venue
