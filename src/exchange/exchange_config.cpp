#include "exchange/exchange_config.hpp"

#include <utility>

#include "config/thread_layout_reader.hpp"
#include "config/toml_reader.hpp"
#include "engine/types.hpp"

namespace nanotick::exchange {

namespace {

using config::ConfigError;
using config::TableReader;

JournalConfig read_journal(TableReader t) {
  JournalConfig j;
  j.dir = t.required_string("dir");
  const std::string fsync = t.choice("fsync", "batch", {"every", "batch", "none"});
  j.fsync = fsync == "every" ? FsyncPolicy::kEvery : fsync == "none" ? FsyncPolicy::kNone : FsyncPolicy::kBatch;
  j.batch_window_us = t.u32("batch_window_us", j.batch_window_us, 1, 10'000'000);
  j.segment_bytes = static_cast<std::uint64_t>(
      t.integer("segment_bytes", static_cast<std::int64_t>(j.segment_bytes), 1 << 16, std::int64_t{1} << 40));
  if (j.segment_bytes % 64 != 0) t.fail("segment_bytes", "must be a multiple of 64 (the record size)");
  j.snapshot_every = static_cast<std::uint64_t>(
      t.integer("snapshot_every", static_cast<std::int64_t>(j.snapshot_every), 0, std::int64_t{1} << 40));
  t.finish();
  return j;
}

const config::ThreadRoles kThreadRoles{
    .compact = {"critical", "aux", "snapshotter"},
    .dedicated = {"gateway", "sequencer", "engine", "md", "aux", "snapshotter"},
    .critical = {"critical", "gateway", "sequencer", "engine", "md"},
    .idle_kinds = {"spin", "yield", "backoff", "block"},
    .background_idle = core::IdleKind::backoff,
};

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace

std::uint64_t ExchangeConfig::engine_fingerprint() const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& in : engine.instruments) {
    h = fnv1a(h, in.symbol.data(), in.symbol.size());
    h = fnv1a(h, "\0", 1);
    for (const std::int64_t v : {in.tick_size, in.min_price, in.max_price, in.collar, in.max_order_qty,
                                 std::int64_t{in.max_orders}, std::int64_t{in.max_levels}})
      h = fnv1a(h, &v, sizeof v);
  }
  // Without accounts the fingerprint is what it was before they existed, so
  // the journals of those venues still replay.
  const controls::ControlsConfig c = controls();
  if (c.clients.empty() && !c.accounts_required) return h;
  h = fnv1a(h, "accounts", 8);
  const std::int64_t required = c.accounts_required ? 1 : 0;
  h = fnv1a(h, &required, sizeof required);
  for (const controls::ClientLimits& a : c.clients) {
    for (const std::int64_t v :
         {std::int64_t{a.client}, a.cash, a.max_order_qty, a.max_notional, a.collar, a.short_limit,
          std::int64_t{a.max_open_orders}, static_cast<std::int64_t>(a.positions.size()),
          static_cast<std::int64_t>(a.instruments.size())})
      h = fnv1a(h, &v, sizeof v);
    for (const controls::OpeningPosition& p : a.positions) {
      const std::int64_t v[2] = {std::int64_t{p.instrument}, p.qty};
      h = fnv1a(h, v, sizeof v);
    }
    for (const std::uint32_t i : a.instruments) h = fnv1a(h, &i, sizeof i);
  }
  return h;
}

controls::ControlsConfig ExchangeConfig::controls() const {
  controls::ControlsConfig c;
  c.accounts_required = accounts_required;
  for (const ClientConfig& client : clients) {
    if (!client.account) continue;
    const access::ClientAccount& a = *client.account;
    controls::ClientLimits l;
    l.client = client.id;
    l.cash = a.cash;
    for (const auto& [instrument, qty] : a.positions) l.positions.push_back({instrument, qty});
    l.instruments.assign(a.instruments.begin(), a.instruments.end());
    l.max_order_qty = a.max_order_qty;
    l.max_notional = a.max_notional;
    l.collar = a.collar;
    l.short_limit = a.short_limit;
    l.max_open_orders = a.max_open_orders;
    c.clients.push_back(std::move(l));
  }
  return c;
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
  // The venue's sections, read as the trading client reads them.
  venue::VenueConfig venue = venue::read_venue(root);
  access::ClientTable clients = access::read_client_table(root, venue.instruments);
  // The exchange's own: where acknowledged orders are kept (required: a
  // default there would be a silent guess) and its threads.
  cfg.journal = read_journal(root.required_table("journal", "[journal] gives dir, where acknowledged orders are kept"));
  if (auto t = root.table("threads")) cfg.threads = config::read_thread_layout(*t, kThreadRoles);
  root.finish();
  venue::validate_instruments(venue, source);
  cfg.server = std::move(venue.server);
  cfg.market_data = std::move(venue.market_data);
  cfg.engine = std::move(venue.instruments);
  cfg.clients = std::move(clients.clients);
  cfg.accounts_required = clients.accounts_required;
  try {
    cfg.controls().validate(cfg.engine);
  } catch (const std::invalid_argument& e) {
    throw config::ConfigError(source + ": clients.account: " + e.what());
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

ThreadConfig default_threads() {
  // What an absent [threads] table means: the roles of the compact layout, unpinned.
  const toml::table empty;
  return config::read_thread_layout(TableReader(empty, "(defaults)", "threads"), kThreadRoles);
}

const config::ThreadRoles& thread_roles() noexcept { return kThreadRoles; }

}  // namespace nanotick::exchange
