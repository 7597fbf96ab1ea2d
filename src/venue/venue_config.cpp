#include "venue/venue_config.hpp"

#include <algorithm>
#include <bit>
#include <set>
#include <stdexcept>

#include "market/types.hpp"
#include "net/socket_address.hpp"

namespace nanotick::venue {

namespace {

using config::ConfigError;
using config::TableReader;

// Addresses are checked here, where the key and the file are known: left to
// the socket code they would fail at start-up without naming either (and exit
// 1, not the config error's 2).
void check_address(const TableReader& t, std::string_view key, const std::string& text, net::PortZero zero) {
  try {
    (void)net::parse_socket_address(text, zero);
  } catch (const std::invalid_argument& e) {
    t.fail(key, e.what());
  }
}

void check_interface(const TableReader& t, std::string_view key, const std::string& text) {
  try {
    (void)net::parse_ipv4(text);
  } catch (const std::invalid_argument& e) {
    t.fail(key, e.what());
  }
}

void check_group(const TableReader& t, std::string_view key, const std::string& text) {
  try {
    (void)net::parse_multicast_group(text);
  } catch (const std::invalid_argument& e) {
    t.fail(key, e.what());
  }
}

constexpr std::int64_t kPriceLimit = std::int64_t{1} << 61;  // the engine's price bound

ServerConfig read_server(TableReader t) {
  ServerConfig s;
  s.order_entry = t.required_string("order_entry");
  check_address(t, "order_entry", s.order_entry, net::PortZero::kAllowed);  // port 0: any free port (tests)
  s.max_sessions = t.u32("max_sessions", s.max_sessions, 1, 4096);
  s.logon_timeout_ms = t.u32("logon_timeout_ms", s.logon_timeout_ms, 1, 3'600'000);
  s.partial_message_timeout_ms = t.u32("partial_message_timeout_ms", s.partial_message_timeout_ms, 1, 3'600'000);
  s.min_heartbeat_ms = t.u32("min_heartbeat_ms", s.min_heartbeat_ms, 1, 3'600'000);
  s.max_heartbeat_ms = t.u32("max_heartbeat_ms", s.max_heartbeat_ms, 1, 3'600'000);
  if (s.min_heartbeat_ms > s.max_heartbeat_ms)
    t.fail("min_heartbeat_ms", "must be <= max_heartbeat_ms (" + std::to_string(s.max_heartbeat_ms) + ")");
  s.heartbeat_ms = t.u32("heartbeat_ms", s.heartbeat_ms, s.min_heartbeat_ms, s.max_heartbeat_ms);
  // Allocated for every session slot at start-up: max_sessions x this.
  s.output_buffer_bytes = t.u32("output_buffer_bytes", s.output_buffer_bytes, 4096, 64 << 20);
  s.read_budget_bytes = t.u32("read_budget_bytes", s.read_budget_bytes, 256, 1 << 30);
  s.shm_path = t.string("shm_path", s.shm_path);
  if (s.shm_path.size() > 107) t.fail("shm_path", "longer than 107 bytes (a UNIX socket path)");
  s.shm_slots = t.u32("shm_slots", std::min(s.shm_slots, s.max_sessions), 1, s.max_sessions);
  s.shm_ring_bytes = t.u32("shm_ring_bytes", s.shm_ring_bytes, 4096, 64 << 20);
  if ((s.shm_ring_bytes & (s.shm_ring_bytes - 1)) != 0) t.fail("shm_ring_bytes", "must be a power of two");
  t.finish();
  return s;
}

MarketDataConfig read_market_data(TableReader t) {
  MarketDataConfig m;
  m.interface = t.required_string("interface");
  m.incremental = t.required_string("incremental");
  m.snapshot = t.required_string("snapshot");
  check_interface(t, "interface", m.interface);
  check_group(t, "incremental", m.incremental);
  check_group(t, "snapshot", m.snapshot);
  if (m.incremental == m.snapshot) t.fail("snapshot", "must differ from market_data.incremental");
  m.ttl = t.u32("ttl", m.ttl, 0, 255);
  m.mtu = t.u32("mtu", m.mtu, 128, 65000);
  m.heartbeat_ms = t.u32("heartbeat_ms", m.heartbeat_ms, 1, 3'600'000);
  m.snapshot_interval_ms = t.u32("snapshot_interval_ms", m.snapshot_interval_ms, 1, 3'600'000);
  m.shm_path = t.string("shm_path", m.shm_path);
  if (m.shm_path.size() > 107) t.fail("shm_path", "longer than 107 bytes (a UNIX socket path)");
  m.shm_ring_packets = t.u32("shm_ring_packets", m.shm_ring_packets, 16, 65536);
  if (!std::has_single_bit(m.shm_ring_packets))
    t.fail("shm_ring_packets", "must be a power of two, got " + std::to_string(m.shm_ring_packets));
  if (!m.shm_path.empty() && m.mtu > kMaxShmMdPacketBytes)
    t.fail("mtu", "must be at most " + std::to_string(kMaxShmMdPacketBytes) +
                      " with market_data.shm_path set (every packet must fit a slot of the shared-memory ring), got " +
                      std::to_string(m.mtu));
  // The fast configuration is the default: with the ring there, the
  // critical thread never waits for sendto (docs/EXCHANGE.md "UDP from the ring").
  const std::string udp_sender = t.string("udp_sender", m.shm_path.empty() ? "publisher" : "aux");
  if (udp_sender != "publisher" && udp_sender != "aux")
    t.fail("udp_sender", "must be \"publisher\" or \"aux\", got \"" + udp_sender + "\"");
  m.udp_from_ring = udp_sender == "aux";
  if (m.udp_from_ring && m.shm_path.empty())
    t.fail("udp_sender", "\"aux\" forwards the shared-memory ring's packets: it needs market_data.shm_path");
  t.finish();
  return m;
}

market::InstrumentConfig read_instrument(TableReader t, std::set<std::string>& symbols) {
  market::InstrumentConfig in;
  in.symbol = t.required_string("symbol");
  if (!symbols.insert(in.symbol).second) t.fail("symbol", "duplicate symbol \"" + in.symbol + "\"");
  in.tick_size = t.required_integer("tick_size", 1, kPriceLimit);
  in.min_price = t.required_integer("min_price", -kPriceLimit, kPriceLimit);
  in.max_price = t.required_integer("max_price", -kPriceLimit, kPriceLimit);
  in.collar = t.integer("collar", in.collar, 0, kPriceLimit);
  in.max_order_qty = t.required_integer("max_order_qty", 1, kPriceLimit);
  in.max_orders = t.u32("max_orders", in.max_orders, 1, 1 << 26);
  in.max_levels = t.u32("max_levels", in.max_levels, 1, 1 << 24);
  t.finish();
  return in;
}

}  // namespace

VenueConfig read_venue(TableReader& root) {
  VenueConfig v;
  // Required: whatever decides where orders and market data go, and each
  // instrument's economics; a default there would be a silent guess. Tuning
  // keys are optional (docs/EXCHANGE.md "Config" lists every key).
  v.server = read_server(root.required_table("server", "[server] gives order_entry, the order-entry listen address"));
  v.market_data = read_market_data(
      root.required_table("market_data", "[market_data] gives the interface and the incremental and snapshot groups"));
  if (!v.market_data.shm_path.empty() && v.market_data.shm_path == v.server.shm_path)
    root.fail("market_data.shm_path", "must differ from server.shm_path (\"" + v.server.shm_path +
                                          "\"): order entry and market data listen on sockets of their own");
  std::set<std::string> symbols;
  for (auto& t : root.tables("instruments")) v.instruments.instruments.push_back(read_instrument(t, symbols));
  if (v.instruments.instruments.empty()) root.fail("instruments", "at least one [[instruments]] table is required");
  return v;
}

void validate_instruments(const VenueConfig& venue, const std::string& source) {
  try {
    venue.instruments.validate();
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source + ": instruments: " + e.what());
  }
}

VenueConfig load_venue_config(const std::string& path) {
  const toml::table root_table = config::parse_toml(config::read_config_file(path), path);
  TableReader root(root_table, path, "");
  VenueConfig v = read_venue(root);
  // The exchange's own sections: its business, checked when it starts. Who
  // may log on ([accounts], [[clients]]) is among them: a client's key is
  // checked by the venue when it logs on (access/client_table.hpp).
  (void)root.table("accounts");
  (void)root.tables("clients");
  (void)root.table("journal");
  (void)root.table("threads");
  root.finish();
  validate_instruments(v, path);
  return v;
}

}  // namespace nanotick::venue
