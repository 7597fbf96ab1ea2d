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
  // The venue's sections, read as the trading client reads them.
  venue::VenueConfig venue = venue::read_venue(root);
  // The exchange's own: where acknowledged orders are kept (required: a
  // default there would be a silent guess) and its threads.
  cfg.journal = read_journal(root.required_table("journal", "[journal] gives dir, where acknowledged orders are kept"));
  if (auto t = root.table("threads")) cfg.threads = config::read_thread_layout(*t, kThreadRoles);
  root.finish();
  venue::validate_instruments(venue, source);
  cfg.server = std::move(venue.server);
  cfg.market_data = std::move(venue.market_data);
  cfg.engine = std::move(venue.instruments);
  cfg.clients = std::move(venue.clients);
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

}  // namespace nanotick::exchange
