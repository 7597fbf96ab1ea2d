#include "exchange/exchange_config.hpp"

#include <set>
#include <stdexcept>

#include "config/toml_reader.hpp"
#include "engine/types.hpp"

namespace nanotick::exchange {

namespace {

using config::ConfigError;
using config::TableReader;

constexpr std::int64_t kU32 = 0xffff'ffffLL;
constexpr std::int64_t kPriceLimit = std::int64_t{1} << 61;  // the engine's price bound

std::uint32_t u32(TableReader& t, std::string_view key, std::uint32_t fallback, std::int64_t min, std::int64_t max = kU32) {
  return static_cast<std::uint32_t>(t.integer(key, fallback, min, max));
}

ServerConfig read_server(TableReader t) {
  ServerConfig s;
  s.order_entry = t.required_string("order_entry");
  s.max_sessions = u32(t, "max_sessions", s.max_sessions, 1, 4096);
  s.logon_timeout_ms = u32(t, "logon_timeout_ms", s.logon_timeout_ms, 1, 3'600'000);
  s.min_heartbeat_ms = u32(t, "min_heartbeat_ms", s.min_heartbeat_ms, 1, 3'600'000);
  s.max_heartbeat_ms = u32(t, "max_heartbeat_ms", s.max_heartbeat_ms, 1, 3'600'000);
  if (s.min_heartbeat_ms > s.max_heartbeat_ms)
    t.fail("min_heartbeat_ms", "must be <= max_heartbeat_ms (" + std::to_string(s.max_heartbeat_ms) + ")");
  s.heartbeat_ms = u32(t, "heartbeat_ms", s.heartbeat_ms, s.min_heartbeat_ms, s.max_heartbeat_ms);
  // Allocated for every session slot at start-up: max_sessions x this.
  s.output_buffer_bytes = u32(t, "output_buffer_bytes", s.output_buffer_bytes, 4096, 64 << 20);
  s.read_budget_bytes = u32(t, "read_budget_bytes", s.read_budget_bytes, 256, 1 << 30);
  t.finish();
  return s;
}

MarketDataConfig read_market_data(TableReader t) {
  MarketDataConfig m;
  m.interface = t.required_string("interface");
  m.incremental = t.required_string("incremental");
  m.snapshot = t.required_string("snapshot");
  if (m.incremental == m.snapshot) t.fail("snapshot", "must differ from market_data.incremental");
  m.ttl = u32(t, "ttl", m.ttl, 0, 255);
  m.mtu = u32(t, "mtu", m.mtu, 128, 65000);
  m.heartbeat_ms = u32(t, "heartbeat_ms", m.heartbeat_ms, 1, 3'600'000);
  m.snapshot_interval_ms = u32(t, "snapshot_interval_ms", m.snapshot_interval_ms, 1, 3'600'000);
  t.finish();
  return m;
}

JournalConfig read_journal(TableReader t) {
  JournalConfig j;
  j.dir = t.required_string("dir");
  const std::string fsync = t.choice("fsync", "batch", {"every", "batch", "none"});
  j.fsync = fsync == "every" ? FsyncPolicy::kEvery : fsync == "none" ? FsyncPolicy::kNone : FsyncPolicy::kBatch;
  j.batch_window_us = u32(t, "batch_window_us", j.batch_window_us, 1, 10'000'000);
  j.segment_bytes = static_cast<std::uint64_t>(
      t.integer("segment_bytes", static_cast<std::int64_t>(j.segment_bytes), 1 << 16, std::int64_t{1} << 40));
  if (j.segment_bytes % 64 != 0) t.fail("segment_bytes", "must be a multiple of 64 (the record size)");
  j.snapshot_every = static_cast<std::uint64_t>(
      t.integer("snapshot_every", static_cast<std::int64_t>(j.snapshot_every), 0, std::int64_t{1} << 40));
  t.finish();
  return j;
}

ThreadConfig read_threads(TableReader t) {
  ThreadConfig c;
  const std::string mode = t.choice("mode", "compact", {"compact", "dedicated"});
  c.mode = mode == "dedicated" ? ThreadMode::kDedicated : ThreadMode::kCompact;
  const std::string idle = t.choice("idle", "backoff", {"spin", "yield", "backoff", "block"});
  c.idle = core::parse_idle_kind(idle);
  for (const std::int64_t cpu : t.integer_array("cpus", 0, 4095)) c.cpus.push_back(static_cast<int>(cpu));
  t.finish();
  return c;
}

engine::InstrumentConfig read_instrument(TableReader t, std::set<std::string>& symbols) {
  engine::InstrumentConfig in;
  in.symbol = t.required_string("symbol");
  if (!symbols.insert(in.symbol).second) t.fail("symbol", "duplicate symbol \"" + in.symbol + "\"");
  in.tick_size = t.required_integer("tick_size", 1, kPriceLimit);
  in.min_price = t.required_integer("min_price", -kPriceLimit, kPriceLimit);
  in.max_price = t.required_integer("max_price", -kPriceLimit, kPriceLimit);
  in.collar = t.integer("collar", in.collar, 0, kPriceLimit);
  in.max_order_qty = t.required_integer("max_order_qty", 1, kPriceLimit);
  in.max_orders = u32(t, "max_orders", in.max_orders, 1, 1 << 26);
  in.max_levels = u32(t, "max_levels", in.max_levels, 1, 1 << 24);
  t.finish();
  return in;
}

ClientConfig read_client(TableReader t, std::set<std::uint32_t>& ids) {
  ClientConfig c;
  c.id = static_cast<std::uint32_t>(t.required_integer("id", 1, engine::kMaxClientId));
  if (!ids.insert(c.id).second) t.fail("id", "duplicate client id " + std::to_string(c.id));
  c.name = t.string("name", "client-" + std::to_string(c.id));
  const std::string credential = t.required_string("credential");
  try {
    c.credential = CredentialHash::parse(credential);
  } catch (const std::invalid_argument& e) {
    t.fail("credential", e.what());
  }
  c.rate_limit_per_s = u32(t, "rate_limit_per_s", c.rate_limit_per_s, 1, 100'000'000);
  c.rate_burst = u32(t, "rate_burst", c.rate_burst, 1, 100'000'000);
  c.cancel_on_disconnect = t.boolean("cancel_on_disconnect", c.cancel_on_disconnect);
  t.finish();
  return c;
}

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace

std::uint64_t ExchangeConfig::engine_fingerprint() const noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& in : engine.instruments) {
    h = fnv1a(h, in.symbol.data(), in.symbol.size());
    h = fnv1a(h, "\0", 1);
    for (const std::int64_t v : {in.tick_size, in.min_price, in.max_price, in.collar, in.max_order_qty,
                                 std::int64_t{in.max_orders}, std::int64_t{in.max_levels}})
      h = fnv1a(h, &v, sizeof v);
  }
  return h;
}

const ClientConfig* ExchangeConfig::find_client(std::uint32_t id) const noexcept {
  for (const auto& c : clients)
    if (c.id == id) return &c;
  return nullptr;
}

ExchangeConfig parse_exchange_config(std::string_view toml_text, const std::string& source) {
  const toml::table root_table = config::parse_toml(toml_text, source);
  TableReader root(root_table, source, "");
  ExchangeConfig cfg;
  // Required: whatever decides where orders and market data go and where
  // acknowledged orders are kept, and each instrument's economics; a default
  // there would be a silent guess. Tuning keys are optional (docs/EXCHANGE.md
  // "Config" lists every key, required or with its default).
  cfg.server = read_server(root.required_table("server", "[server] gives order_entry, the order-entry listen address"));
  cfg.market_data = read_market_data(root.required_table(
      "market_data", "[market_data] gives the interface and the incremental and snapshot groups"));
  cfg.journal = read_journal(root.required_table("journal", "[journal] gives dir, where acknowledged orders are kept"));
  if (auto t = root.table("threads")) cfg.threads = read_threads(*t);
  std::set<std::string> symbols;
  for (auto& t : root.tables("instruments")) cfg.engine.instruments.push_back(read_instrument(t, symbols));
  if (cfg.engine.instruments.empty()) root.fail("instruments", "at least one [[instruments]] table is required");
  std::set<std::uint32_t> ids;
  for (auto& t : root.tables("clients")) cfg.clients.push_back(read_client(t, ids));
  if (cfg.clients.empty()) root.fail("clients", "at least one [[clients]] table is required");
  root.finish();
  try {
    cfg.engine.validate();
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source + ": instruments: " + e.what());
  }
  return cfg;
}

ExchangeConfig load_exchange_config(const std::string& path) {
  return parse_exchange_config(config::read_config_file(path), path);
}

std::string_view to_string(FsyncPolicy p) noexcept {
  switch (p) {
    case FsyncPolicy::kEvery: return "every";
    case FsyncPolicy::kBatch: return "batch";
    case FsyncPolicy::kNone: return "none";
  }
  return "unknown";
}

std::string_view to_string(ThreadMode m) noexcept {
  return m == ThreadMode::kDedicated ? "dedicated" : "compact";
}

}  // namespace nanotick::exchange
