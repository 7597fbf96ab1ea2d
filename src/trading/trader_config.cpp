#include "trading/trader_config.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>

#include "client/md_consumer.hpp"
#include "client/venue_address.hpp"
#include "config/thread_layout_reader.hpp"
#include "config/toml_reader.hpp"
#include "net/socket_address.hpp"
#include "trading/order_manager.hpp"
#include "venue/api_key.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::trading {

namespace {

using config::ConfigError;
using config::TableReader;

constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kPriceLimit = std::int64_t{1} << 61;  // the engine's price bound
constexpr std::int64_t kQtyLimit = std::int64_t{1} << 40;    // the engine's max_order_qty bound
constexpr std::int64_t kMaxTicks = 1'000'000;                // distances in ticks: far beyond any band
constexpr std::int64_t kMaxMs = 3'600'000;

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// TableReader reads integers, strings and booleans; the strategies' rates,
// thresholds and EWMA weights are real numbers. They are read here from the
// reader's own table and then erased from it, so finish() still refuses
// every key nobody read. An integer is accepted too (orders_per_second = 50).
std::optional<double> take_number(toml::table& table, const TableReader& t, std::string_view key, double min,
                                  double max, bool min_exclusive = false) {
  const toml::node* n = table.get(key);
  if (n == nullptr) return std::nullopt;
  double v = 0;
  if (const auto f = n->value_exact<double>()) {
    v = *f;
  } else if (const auto i = n->value_exact<std::int64_t>()) {
    v = static_cast<double>(*i);
  } else {
    t.fail(key, n->is_string() ? "must be a number, got a string" : "must be a number");
  }
  const bool below = min_exclusive ? !(v > min) : !(v >= min);  // NaN fails both tests
  if (below || !(v <= max)) {
    t.fail(key, std::string("must be in ") + (min_exclusive ? "(" : "[") + number_text(min) + ", " + number_text(max) +
                    "], got " + number_text(v));
  }
  table.erase(key);
  return v;
}

bool has(const toml::table& table, std::string_view key) { return table.get(key) != nullptr; }

// The keys of each strategy kind in an [[instruments]] table. A key of a
// kind the trader does not run is refused with its own message: it was
// meant for another config (or the strategy line is wrong), and silently
// ignoring it would run the wrong parameters.
struct KindKeys {
  StrategyKind kind;
  std::array<std::string_view, 8> keys;  // "" pads
};
constexpr std::array<KindKeys, 3> kStrategyKeys{{
    {StrategyKind::kMarketMaker, {"quote_qty", "half_spread_ticks", "skew_ticks_per_unit", "requote_ticks"}},
    {StrategyKind::kLiquidityTaker,
     {"clip_qty", "flow_threshold", "min_aggressive_ratio", "slippage_ticks", "min_interval_ms"}},
    {StrategyKind::kRandom,
     {"orders_per_second", "weight_new", "weight_cancel", "weight_modify", "weight_ioc", "price_range_ticks", "max_qty",
      "random_max_open_orders"}},
}};

std::string ticks_text(std::int64_t ticks, std::int64_t tick_size) {
  return std::to_string(ticks) + " ticks x tick_size " + std::to_string(tick_size);
}

// `ticks` x tick_size must fit in the price band, or the risk manager blocks
// every order the strategy makes at that distance.
void require_in_band(const TableReader& t, std::string_view key, std::int64_t ticks, std::int64_t tick_size,
                     std::int64_t band, std::string_view why) {
  if (static_cast<Int128>(ticks) * tick_size > band)
    t.fail(key,
           ticks_text(ticks, tick_size) + " is beyond price_band (" + std::to_string(band) + "): " + std::string(why));
}

void require_qty(const TableReader& t, std::string_view key, Qty qty, const InstrumentRiskLimits& r) {
  if (qty > r.max_order_qty)
    t.fail(key, "must be <= max_order_qty (" + std::to_string(r.max_order_qty) + "), got " + std::to_string(qty) +
                    ": every such order would be blocked");
  if (qty > r.max_position)
    t.fail(key, "must be <= max_position (" + std::to_string(r.max_position) + "), got " + std::to_string(qty) +
                    ": no such order fits the position limit");
}

// The limits that bound the money at risk are required: in the instrument's
// price and quantity units no default could fit every instrument.
InstrumentRiskLimits read_risk(TableReader& t, const market::InstrumentConfig& in) {
  InstrumentRiskLimits r;
  r.max_order_qty = t.required_integer("max_order_qty", 1, in.max_order_qty);
  r.max_position = t.required_integer("max_position", 0, kQtyLimit * 1024);
  r.max_open_orders = t.u32("max_open_orders", r.max_open_orders, 1, GlobalRiskLimits::kMaxOpenOrdersCap);
  r.max_open_notional = t.required_integer("max_open_notional", 1, kI64Max);
  r.max_loss = t.required_integer("max_loss", 0, kI64Max);
  r.price_band = t.required_integer("price_band", 0, kPriceLimit);
  return r;
}

FeatureConfig read_features(toml::table& table, TableReader& t, StrategyKind kind) {
  FeatureConfig f;  // touch, mid, spread, fair price, aggressive ratio: always on (cheap; risk needs the fair price)
  const std::string fair = t.choice("fair_price", "microprice", {"microprice", "mid"});
  f.fair_price_kind = fair == "mid" ? FairPriceKind::kMid : FairPriceKind::kMicroprice;
  // An optional feature is on when its key is given; the taker's trade flow always.
  const std::int64_t levels = t.integer("imbalance_levels", 0, 1, FeatureConfig::kMaxImbalanceLevels);
  f.imbalance = levels > 0;
  if (f.imbalance) f.imbalance_levels = static_cast<std::uint32_t>(levels);
  if (const auto a = take_number(table, t, "volatility_alpha", 0.0, 1.0, true)) {
    f.volatility = true;
    f.volatility_alpha = *a;
  }
  const auto flow_alpha = take_number(table, t, "trade_flow_alpha", 0.0, 1.0, true);
  f.trade_flow = kind == StrategyKind::kLiquidityTaker || flow_alpha.has_value();
  if (flow_alpha) f.trade_flow_alpha = *flow_alpha;
  f.aggressive_ratio = true;
  return f;
}

void read_market_maker(TableReader& t, toml::table& table, MarketMakerParams& m, const market::InstrumentConfig& in,
                       const InstrumentRiskLimits& r) {
  m.enabled = true;
  m.quote_qty = t.integer("quote_qty", m.quote_qty, 1, kQtyLimit);
  m.half_spread_ticks = t.integer("half_spread_ticks", m.half_spread_ticks, 1, kMaxTicks);
  if (const auto v = take_number(table, t, "skew_ticks_per_unit", 0.0, 1e6)) m.skew_ticks_per_unit = *v;
  m.requote_ticks = t.integer("requote_ticks", m.requote_ticks, 1, kMaxTicks);
  require_qty(t, "quote_qty", m.quote_qty, r);
  // A quote lies up to 2 x half_spread_ticks from the fair price: the half
  // spread, the skew (capped one tick inside the half spread) and a tick of
  // rounding.
  require_in_band(
      t, "half_spread_ticks", 2 * m.half_spread_ticks, in.tick_size, r.price_band,
      "skewed quotes (up to 2 x half_spread_ticks from fair) would be blocked (widen price_band or narrow the spread)");
  if (r.max_open_orders < 2) t.fail("max_open_orders", "must be >= 2 for a market maker (one bid and one ask)");
}

void read_liquidity_taker(TableReader& t, toml::table& table, LiquidityTakerParams& p,
                          const market::InstrumentConfig& in, const InstrumentRiskLimits& r) {
  p.enabled = true;
  p.clip_qty = t.integer("clip_qty", p.clip_qty, 1, kQtyLimit);
  if (const auto v = take_number(table, t, "flow_threshold", 0.0, 1e15, true)) p.flow_threshold = *v;
  if (const auto v = take_number(table, t, "min_aggressive_ratio", 0.0, 1.0)) p.min_aggressive_ratio = *v;
  p.slippage_ticks = t.integer("slippage_ticks", p.slippage_ticks, 0, kMaxTicks);
  p.min_interval_ms = t.u32("min_interval_ms", p.min_interval_ms, 0, kMaxMs);
  require_qty(t, "clip_qty", p.clip_qty, r);
  require_in_band(t, "slippage_ticks", p.slippage_ticks, in.tick_size, r.price_band,
                  "every order would be blocked (the touch plus slippage lies beyond the band)");
}

void read_random(TableReader& t, toml::table& table, RandomParams& p, const market::InstrumentConfig& in,
                 const InstrumentRiskLimits& r) {
  p.enabled = true;
  if (const auto v = take_number(table, t, "orders_per_second", 0.0, 1e6, true)) p.orders_per_second = *v;
  p.weight_new = t.u32("weight_new", p.weight_new, 0, 1'000'000);
  p.weight_cancel = t.u32("weight_cancel", p.weight_cancel, 0, 1'000'000);
  p.weight_modify = t.u32("weight_modify", p.weight_modify, 0, 1'000'000);
  p.weight_ioc = t.u32("weight_ioc", p.weight_ioc, 0, 1'000'000);
  if (p.weight_new + p.weight_cancel + p.weight_modify + p.weight_ioc == 0)
    t.fail("weight_new", "weight_new, weight_cancel, weight_modify and weight_ioc are all 0: at least one must be > 0");
  p.price_range_ticks = t.integer("price_range_ticks", p.price_range_ticks, 0, kMaxTicks);
  p.max_qty = t.integer("max_qty", p.max_qty, 1, kQtyLimit);
  p.max_open_orders = t.u32("random_max_open_orders", p.max_open_orders, 1, GlobalRiskLimits::kMaxOpenOrdersCap);
  require_qty(t, "max_qty", p.max_qty, r);
  require_in_band(t, "price_range_ticks", p.price_range_ticks + 1, in.tick_size,
                  r.price_band,  // limits rest 1..range+1 ticks away
                  "orders at the edge of the range would be blocked (widen price_band or narrow the range)");
  if (p.max_open_orders > r.max_open_orders)
    t.fail("random_max_open_orders", "must be <= max_open_orders (" + std::to_string(r.max_open_orders) + "), got " +
                                         std::to_string(p.max_open_orders) +
                                         ": the generator would run into the risk limit instead of its own");
}

// One [[instruments]] table: reads `table` (a copy: numbers are erased from
// it as they are read) into entry `index` of the config.
void read_instrument(toml::table& table, TableReader& t, const std::string& path, TraderConfig& c, std::size_t index) {
  const market::InstrumentConfig& in = c.instruments.instruments[index];
  for (const KindKeys& other : kStrategyKeys) {
    if (other.kind == c.strategy) continue;
    for (const std::string_view key : other.keys)
      if (!key.empty() && has(table, key))
        t.fail(key, "is a " + std::string(to_string(other.kind)) + " key, but this trader's strategy is " +
                        std::string(to_string(c.strategy)) + " (trader.strategy)");
  }
  StrategyParams& s = c.strategy_params[index];
  s.reference_price = t.integer("reference_price", 0, 0, kPriceLimit);
  if (s.reference_price != 0) {
    if (s.reference_price < in.min_price || s.reference_price > in.max_price)
      t.fail("reference_price", "must be inside " + in.symbol + "'s band [" + std::to_string(in.min_price) + ", " +
                                    std::to_string(in.max_price) + "], got " + std::to_string(s.reference_price));
    if (s.reference_price % in.tick_size != 0)
      t.fail("reference_price", "must be a multiple of " + in.symbol + "'s tick_size " + std::to_string(in.tick_size) +
                                    ", got " + std::to_string(s.reference_price));
  }
  InstrumentRiskLimits& r = c.risk[index] = read_risk(t, in);
  c.features[index] = read_features(table, t, c.strategy);
  switch (c.strategy) {
    case StrategyKind::kMarketMaker: read_market_maker(t, table, s.market_maker, in, r); break;
    case StrategyKind::kLiquidityTaker: read_liquidity_taker(t, table, s.liquidity_taker, in, r); break;
    case StrategyKind::kRandom: read_random(t, table, s.random, in, r); break;
  }
  t.finish();
  // The parts' own checks, as a backstop of the ranges above.
  try {
    c.features[index].validate();
  } catch (const std::invalid_argument& e) {
    throw ConfigError(c.source + ": " + path + ": " + e.what());
  }
  try {
    s.validate(path);  // "<path>: <field>: <problem>"
  } catch (const std::invalid_argument& e) {
    throw ConfigError(c.source + ": " + e.what());
  }
}

const config::ThreadRoles kThreadRoles{
    .compact = {"engine"},
    .dedicated = {"engine", "receiver"},
    .critical = {"engine", "receiver"},
    // "block" sleeps in epoll_wait on the trader's sockets (core::BlockingIdle::watch).
    .idle_kinds = {"spin", "yield", "backoff", "block"},
    .background_idle = core::IdleKind::backoff,
};

net::SocketAddress default_exchange_address(const TableReader& t, const venue::VenueConfig& ex) {
  try {
    return client::venue_order_entry_address(ex.server);
  } catch (const std::invalid_argument& e) {
    t.fail("exchange", std::string("the exchange config's ") + e.what() + ": give session.exchange");
  }
}

client::OrderEntryClientConfig read_session(TableReader t, const venue::VenueConfig& ex, const std::string& ex_path,
                                            ipc::Transport transport) {
  client::OrderEntryClientConfig s;
  s.transport = transport;
  // Whether the venue knows this client and its key is the venue's to say
  // (UnknownClient, BadCredentials: fatal at the first logon); the trader
  // does not read who else may log on there.
  s.client_id = static_cast<std::uint32_t>(t.required_integer("client_id", 1, market::kMaxClientId));
  s.api_key = t.required_string("api_key");
  try {
    venue::validate_api_key(s.api_key);
  } catch (const std::invalid_argument& e) {
    t.fail("api_key", e.what());
  }
  s.heartbeat_ms = t.u32("heartbeat_ms", s.heartbeat_ms, 0, kMaxMs);
  if (s.heartbeat_ms != 0 &&
      (s.heartbeat_ms < ex.server.min_heartbeat_ms || s.heartbeat_ms > ex.server.max_heartbeat_ms))
    t.fail("heartbeat_ms", "must be 0 (the exchange's default) or within the exchange's [" +
                               std::to_string(ex.server.min_heartbeat_ms) + ", " +
                               std::to_string(ex.server.max_heartbeat_ms) + "], got " + std::to_string(s.heartbeat_ms) +
                               " (the exchange would answer BadHeartbeat)");
  const std::string address = t.string("exchange", "");
  s.shm_path = t.string("shm_path", ex.server.shm_path);
  if (transport == ipc::Transport::kShm) {
    if (!address.empty()) t.fail("exchange", "is a TCP address: with trader.transport = \"shm\" give session.shm_path");
    if (s.shm_path.empty())
      t.fail("shm_path", "trader.transport = \"shm\" needs the exchange config's server.shm_path (" + ex_path +
                             " has none) or session.shm_path");
  } else if (address.empty()) {
    s.exchange = default_exchange_address(t, ex);
  } else {
    try {
      s.exchange = net::parse_socket_address(address);
    } catch (const std::invalid_argument& e) {
      t.fail("exchange", e.what());
    }
  }
  s.connect_timeout_ms = t.u32("connect_timeout_ms", s.connect_timeout_ms, 1, 60'000);
  s.logon_timeout_ms = t.u32("logon_timeout_ms", s.logon_timeout_ms, 1, 600'000);
  s.reconnect_initial_ms = t.u32("reconnect_initial_ms", s.reconnect_initial_ms, 1, 600'000);
  s.reconnect_max_ms = t.u32("reconnect_max_ms", s.reconnect_max_ms, s.reconnect_initial_ms, kMaxMs);
  t.finish();
  try {
    validate(s);
  } catch (const std::invalid_argument& e) {
    // "order gateway: <field>: <problem>" -> "<source>: session.<field>: <problem>"
    std::string what = e.what();
    constexpr std::string_view kPrefix = "order gateway: ";
    if (what.rfind(kPrefix, 0) == 0) what.erase(0, kPrefix.size());
    const std::size_t colon = what.find(": ");
    if (colon == std::string::npos) t.fail("", what);
    t.fail(what.substr(0, colon), what.substr(colon + 2));
  }
  return s;
}

std::string checked_group(const TableReader& t, std::string_view key, const std::string& text) {
  try {
    (void)net::parse_multicast_group(text);
  } catch (const std::invalid_argument& e) {
    t.fail(key, e.what());
  }
  return text;
}

TraderConfig::MarketData read_market_data(TableReader t, const venue::MarketDataConfig& ex, const std::string& ex_path,
                                          ipc::Transport transport) {
  TraderConfig::MarketData m;
  m.interface = t.string("interface", ex.interface);
  try {
    (void)net::parse_ipv4(m.interface);
  } catch (const std::invalid_argument& e) {
    t.fail("interface", e.what());
  }
  m.incremental = checked_group(t, "incremental", t.string("incremental", ex.incremental));
  m.snapshot = checked_group(t, "snapshot", t.string("snapshot", ex.snapshot));
  if (m.incremental == m.snapshot) t.fail("snapshot", "must differ from market_data.incremental");
  m.reorder_packets = t.u32("reorder_packets", m.reorder_packets, 0, client::MdConsumerConfig::kMaxReorderPackets);
  m.reorder_us = t.u32("reorder_us", m.reorder_us, 0, 1'000'000);
  m.buffer_messages = t.u32("buffer_messages", m.buffer_messages, 16, 1 << 24);
  m.max_datagram_bytes = ex.mtu;
  // The incremental channel's ring: only with the shared-memory transport,
  // where it is needed (the snapshot channel stays multicast).
  const std::string shm_path = t.string("shm_path", "");
  if (transport == ipc::Transport::kShm) {
    m.shm_path = shm_path.empty() ? ex.shm_path : shm_path;
    if (m.shm_path.empty())
      t.fail("shm_path", "trader.transport = \"shm\" needs the exchange config's market_data.shm_path (" + ex_path +
                             " has none) or market_data.shm_path: the incremental channel is read from that ring");
    if (m.shm_path.size() > 107) t.fail("shm_path", "longer than 107 bytes (a UNIX socket path)");
  } else if (!shm_path.empty()) {
    t.fail("shm_path",
           "is read only with trader.transport = \"shm\" (with \"tcp\" the incremental channel is "
           "the multicast group)");
  }
  t.finish();
  return m;
}

GlobalRiskLimits read_global_risk(TableReader t) {
  GlobalRiskLimits g;
  g.max_open_orders = t.u32("max_open_orders", g.max_open_orders, 1, GlobalRiskLimits::kMaxOpenOrdersCap);
  g.max_open_notional = t.required_integer("max_open_notional", 1, kI64Max);
  g.max_loss = t.required_integer("max_loss", 0, kI64Max);
  g.orders_per_second = t.u32("orders_per_second", g.orders_per_second, 1, 100'000'000);
  g.burst = t.u32("burst", g.burst, 1, 1'000'000);
  t.finish();
  return g;
}

StrategyKind parse_kind(const TableReader& t, const std::string& name) {
  for (const StrategyKind k : {StrategyKind::kMarketMaker, StrategyKind::kLiquidityTaker, StrategyKind::kRandom})
    if (name == to_string(k)) return k;
  t.fail("strategy", "must be one of \"market_maker\", \"liquidity_taker\", \"random\", got \"" + name + "\"");
}

// The exchange config, resolved against the trader file's directory; its
// errors are reported under the key that named it.
venue::VenueConfig read_exchange(const TableReader& t, const std::string& source, TraderConfig& c,
                                 const std::string& given) {
  const std::filesystem::path p(given);
  c.exchange_config = p.is_absolute() ? given : (std::filesystem::path(source).parent_path() / p).string();
  try {
    return venue::load_venue_config(c.exchange_config);
  } catch (const ConfigError& e) {
    t.fail("exchange_config", e.what());
  }
}

}  // namespace

std::size_t TraderConfig::traded_instruments() const noexcept {
  std::size_t n = 0;
  for (const StrategyParams& s : strategy_params)
    n += (s.market_maker.enabled || s.liquidity_taker.enabled || s.random.enabled) ? 1 : 0;
  return n;
}

std::string_view to_string(StrategyKind kind) noexcept {
  switch (kind) {
    case StrategyKind::kMarketMaker: return "market_maker";
    case StrategyKind::kLiquidityTaker: return "liquidity_taker";
    case StrategyKind::kRandom: return "random";
  }
  return "unknown";
}

TraderConfig parse_trader_config(std::string_view toml_text, const std::string& source) {
  const toml::table root_table = config::parse_toml(toml_text, source);
  TableReader root(root_table, source, "");
  TraderConfig c;
  c.source = source;

  TableReader trader = root.required_table("trader", "[trader] names the exchange config and the strategy");
  const std::string stem = std::filesystem::path(source).stem().string();
  c.name = trader.string("name", stem.empty() ? "trader" : stem);
  if (c.name.empty()) trader.fail("name", "must not be empty");
  const venue::VenueConfig ex = read_exchange(trader, source, c, trader.required_string("exchange_config"));
  c.strategy = parse_kind(trader, trader.required_string("strategy"));
  c.seed = static_cast<std::uint64_t>(trader.integer("seed", 1, 0, kI64Max));
  c.status_interval_ms = trader.u32("status_interval_ms", c.status_interval_ms, 0, kMaxMs);
  c.max_orders = static_cast<std::size_t>(trader.integer("max_orders", 4096, 1, std::int64_t{1} << 24));
  const std::string transport = trader.string("transport", "tcp");
  if (transport != "tcp" && transport != "shm")
    trader.fail("transport", "must be \"tcp\" or \"shm\", got \"" + transport + "\"");
  c.transport = transport == "shm" ? ipc::Transport::kShm : ipc::Transport::kTcp;
  trader.finish();

  if (auto t = root.table("threads")) c.threads = config::read_thread_layout(*t, kThreadRoles);
  c.session = read_session(root.required_table("session", "[session] needs client_id and api_key"), ex,
                           c.exchange_config, c.transport);
  const toml::table no_overrides;
  c.market_data = read_market_data(root.table("market_data").value_or(TableReader(no_overrides, source, "market_data")),
                                   ex.market_data, c.exchange_config, c.transport);
  c.global_risk =
      read_global_risk(root.required_table("risk", "[risk] needs the global max_open_notional and max_loss"));
  if (c.max_orders < c.global_risk.max_open_orders)
    trader.fail("max_orders", "must be >= risk.max_open_orders (" + std::to_string(c.global_risk.max_open_orders) +
                                  "): the order manager must hold every order the risk limits allow");

  c.instruments = ex.instruments;
  const std::size_t n = c.instruments.instruments.size();
  c.features.assign(n, FeatureConfig{});
  c.risk.assign(n, InstrumentRiskLimits{});
  c.strategy_params.assign(n, StrategyParams{});
  const std::size_t listed_count = root.tables("instruments").size();  // checks the array's type
  if (listed_count == 0)
    root.fail("instruments", "at least one [[instruments]] table is required: the instruments the strategy trades");
  const toml::array& listed = *root_table.get("instruments")->as_array();
  std::vector<bool> seen(n, false);
  for (std::size_t i = 0; i < listed_count; ++i) {
    toml::table table = *listed.get(i)->as_table();  // a copy: numbers are erased as they are read
    const std::string path = "instruments[" + std::to_string(i) + "]";
    TableReader t(table, source, path);
    const std::string symbol = t.required_string("symbol");
    std::size_t index = n;
    std::string symbols;
    for (std::size_t k = 0; k < n; ++k) {
      if (c.instruments.instruments[k].symbol == symbol) index = k;
      symbols += (k == 0 ? "" : ", ") + c.instruments.instruments[k].symbol;
    }
    if (index == n)
      t.fail("symbol", "no instrument \"" + symbol + "\" in " + c.exchange_config + " (it has " + symbols + ")");
    if (seen[index]) t.fail("symbol", "duplicate symbol \"" + symbol + "\" (list each instrument at most once)");
    seen[index] = true;
    read_instrument(table, t, path, c, index);
  }
  root.finish();

  try {
    validate(OrderManagerConfig{c.max_orders, static_cast<std::uint32_t>(n), 1});
  } catch (const std::invalid_argument& e) {
    throw ConfigError(source + ": trader.max_orders: " + e.what());
  }
  return c;
}

TraderConfig load_trader_config(const std::string& path) {
  return parse_trader_config(config::read_config_file(path), path);
}

core::ThreadLayout default_threads() {
  // What an absent [threads] table means: the compact layout's engine runner, unpinned.
  const toml::table empty;
  return config::read_thread_layout(config::TableReader(empty, "(defaults)", "threads"), kThreadRoles);
}

const config::ThreadRoles& thread_roles() noexcept { return kThreadRoles; }

}  // namespace nanotick::trading
