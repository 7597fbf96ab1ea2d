// Trader config loading: the shipped demo configs load against the shipped
// exchange config; every required key and table is named when missing; a
// minimal file takes the documented defaults, the venue's side (instruments,
// addresses, credential) coming from the exchange config; every kind of bad
// input is a ConfigError naming the file and the key.
#include "trading/trader_config.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "config/toml_reader.hpp"
#include "support/toml_text.hpp"

namespace nt = nanotick::trading;
namespace fs = std::filesystem;

namespace {

const fs::path kConfigDir = fs::path(__FILE__).parent_path() / "../../../config";
constexpr const char* kKey = "test-key-0123456789abcdef";

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// Each test gets its own directory holding an exchange config with three
// instruments and one client (id 9, key kKey); trader texts are parsed as if
// they were a file in that directory.
class TraderConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "nanotick-trader-config-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    write_exchange("order_entry = \"127.0.0.1:9300\"");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void write_exchange(const std::string& server_lines) {
    write_file(dir_ / "exchange.toml", "[server]\n" + server_lines + R"(
min_heartbeat_ms = 100
max_heartbeat_ms = 10000
[market_data]
interface = "127.0.0.1"
incremental = "239.255.50.1:9401"
snapshot = "239.255.50.2:9402"
mtu = 1200
[journal]
dir = "journal"
[[instruments]]
symbol = "AAA"
tick_size = 1
min_price = 1
max_price = 100000
max_order_qty = 1000
[[instruments]]
symbol = "BBB"
tick_size = 5
min_price = 5
max_price = 100000
max_order_qty = 500
[[instruments]]
symbol = "CCC"
tick_size = 1
min_price = 1
max_price = 1000000
max_order_qty = 1000000
[[clients]]
id = 9
name = "tester"
credential = "sha256:00000000000000000000000000000000:0000000000000000000000000000000000000000000000000000000000000000"
)");  // well formed, of no key: the trader does not read the client table (the venue checks the key)
  }

  std::string source() const { return (dir_ / "trader-test.toml").string(); }

  nt::TraderConfig parse(const std::string& text) const { return nt::parse_trader_config(text, source()); }

  // The message of the ConfigError that parsing `text` throws ("" if none).
  std::string error_of(const std::string& text) const {
    try {
      (void)parse(text);
    } catch (const nanotick::config::ConfigError& e) {
      return e.what();
    }
    return "";
  }

  void expect_error(const std::string& text, const std::string& key, const std::string& words) const {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(source() + ": " + key + ": "), std::string::npos)
        << "want key '" << key << "', error: '" << e << "'";
    EXPECT_NE(e.find(words), std::string::npos) << "want '" << words << "', error: '" << e << "'";
  }

  fs::path dir_;
};

// `text` with the risk limits every trader must give that it does not give
// itself: the global [risk] and each instrument's (the values are the
// parts' own defaults, InstrumentRiskLimits and GlobalRiskLimits).
std::string completed(const std::string& text) {
  const std::string t =
      nanotick::testing::with_defaults(text, "[risk]", {"max_open_notional = 1000000000", "max_loss = 10000000"});
  return nanotick::testing::with_defaults(t, "[[instruments]]",
                                          {"max_order_qty = 100", "max_position = 1000",
                                           "max_open_notional = 100000000", "max_loss = 1000000", "price_band = 100"});
}

// A valid trader: `strategy`, [session] for client 9, then `rest` (more
// tables, [[instruments]]), completed with the required risk limits.
std::string trader(const std::string& strategy, const std::string& rest, const std::string& trader_extra = "",
                   const std::string& session_extra = "") {
  return completed("[trader]\nexchange_config = \"exchange.toml\"\nstrategy = \"" + strategy + "\"\n" + trader_extra +
                   "\n[session]\nclient_id = 9\napi_key = \"" + kKey + "\"\n" + session_extra + "\n" + rest);
}

// `text` with the first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string mm(const std::string& instrument_extra, const std::string& symbol = "AAA") {
  return trader("market_maker", "[[instruments]]\nsymbol = \"" + symbol + "\"\n" + instrument_extra);
}

TEST(TraderConfigShipped, EveryDefaultConfigLoadsAgainstTheShippedExchange) {
  struct Expected {
    const char* file;
    nt::StrategyKind kind;
    std::uint32_t client_id;
  };
  for (const Expected& x : {Expected{"trader-mm1.toml", nt::StrategyKind::kMarketMaker, 1},
                            Expected{"trader-mm2.toml", nt::StrategyKind::kMarketMaker, 2},
                            Expected{"trader-taker.toml", nt::StrategyKind::kLiquidityTaker, 3},
                            Expected{"trader-random.toml", nt::StrategyKind::kRandom, 4}}) {
    SCOPED_TRACE(x.file);
    const nt::TraderConfig c = nt::load_trader_config((kConfigDir / x.file).string());
    EXPECT_EQ(c.strategy, x.kind);
    EXPECT_EQ(c.session.client_id, x.client_id);
    EXPECT_EQ(c.session.exchange.to_string(), "127.0.0.1:9100");
    EXPECT_EQ(c.market_data.incremental, "239.255.42.1:9201");
    EXPECT_EQ(c.market_data.max_datagram_bytes, 1400u);
    const std::size_t n = c.instruments.instruments.size();
    ASSERT_GE(n, 2u);
    EXPECT_EQ(c.features.size(), n);
    EXPECT_EQ(c.risk.size(), n);
    ASSERT_EQ(c.strategy_params.size(), n);
    EXPECT_EQ(c.traded_instruments(), n) << "the demo trades every instrument";
    double random_rate = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& in = c.instruments.instruments[i];
      const nt::StrategyParams& s = c.strategy_params[i];
      EXPECT_GE(s.reference_price, in.min_price);
      EXPECT_LE(s.reference_price, in.max_price);
      EXPECT_EQ(s.reference_price % in.tick_size, 0);
      EXPECT_EQ(s.market_maker.enabled, x.kind == nt::StrategyKind::kMarketMaker);
      EXPECT_EQ(s.liquidity_taker.enabled, x.kind == nt::StrategyKind::kLiquidityTaker);
      EXPECT_EQ(s.random.enabled, x.kind == nt::StrategyKind::kRandom);
      if (s.random.enabled) random_rate += s.random.orders_per_second;
    }
    if (x.kind == nt::StrategyKind::kRandom) {
      EXPECT_LE(random_rate, 500.0) << "a modest load for the demo";
    }
    EXPECT_GE(c.max_orders, c.global_risk.max_open_orders);
  }
}

TEST_F(TraderConfigTest, MinimalFileTakesTheDocumentedDefaultsAndTheExchangesSide) {
  const nt::TraderConfig c = parse(mm(""));
  EXPECT_EQ(c.name, "trader-test");
  EXPECT_EQ(c.source, source());
  EXPECT_EQ(fs::path(c.exchange_config), dir_ / "exchange.toml");
  EXPECT_EQ(c.strategy, nt::StrategyKind::kMarketMaker);
  EXPECT_EQ(c.threads.mode, nanotick::core::ThreadMode::kCompact);
  EXPECT_EQ(c.threads.idle, nanotick::core::IdleKind::backoff);
  EXPECT_TRUE(c.threads.cpus.empty());
  EXPECT_EQ(c.seed, 1u);
  EXPECT_EQ(c.status_interval_ms, 1000u);
  EXPECT_EQ(c.max_orders, 4096u);
  EXPECT_EQ(c.session.exchange.to_string(), "127.0.0.1:9300");
  EXPECT_EQ(c.session.client_id, 9u);
  EXPECT_EQ(c.session.api_key, kKey);
  EXPECT_EQ(c.session.heartbeat_ms, 1000u);
  EXPECT_EQ(c.market_data.interface, "127.0.0.1");
  EXPECT_EQ(c.market_data.incremental, "239.255.50.1:9401");
  EXPECT_EQ(c.market_data.snapshot, "239.255.50.2:9402");
  EXPECT_EQ(c.market_data.reorder_packets, 8u);
  EXPECT_EQ(c.market_data.reorder_us, 200u);
  EXPECT_EQ(c.market_data.buffer_messages, 65536u);
  EXPECT_EQ(c.market_data.max_datagram_bytes, 1200u);
  ASSERT_EQ(c.instruments.instruments.size(), 3u);
  EXPECT_EQ(c.instruments.instruments[1].symbol, "BBB");
  EXPECT_EQ(c.traded_instruments(), 1u);
  EXPECT_TRUE(c.strategy_params[0].market_maker.enabled);
  EXPECT_FALSE(c.strategy_params[1].market_maker.enabled) << "unlisted: a book, no strategy";
  EXPECT_FALSE(c.strategy_params[2].market_maker.enabled);
  EXPECT_EQ(c.strategy_params[0].reference_price, 0);
  EXPECT_EQ(c.strategy_params[0].market_maker.quote_qty, nt::MarketMakerParams{}.quote_qty);
  EXPECT_EQ(c.strategy_params[0].market_maker.half_spread_ticks, nt::MarketMakerParams{}.half_spread_ticks);
  EXPECT_EQ(c.risk[0].max_open_orders, nt::InstrumentRiskLimits{}.max_open_orders);
  EXPECT_EQ(c.global_risk.max_open_orders, nt::GlobalRiskLimits{}.max_open_orders);
  EXPECT_EQ(c.global_risk.orders_per_second, nt::GlobalRiskLimits{}.orders_per_second);
  EXPECT_EQ(c.global_risk.burst, nt::GlobalRiskLimits{}.burst);
  EXPECT_EQ(c.session.connect_timeout_ms, nanotick::client::OrderEntryClientConfig{}.connect_timeout_ms);
  EXPECT_EQ(c.session.logon_timeout_ms, nanotick::client::OrderEntryClientConfig{}.logon_timeout_ms);
  EXPECT_EQ(c.session.reconnect_initial_ms, nanotick::client::OrderEntryClientConfig{}.reconnect_initial_ms);
  EXPECT_EQ(c.session.reconnect_max_ms, nanotick::client::OrderEntryClientConfig{}.reconnect_max_ms);
  EXPECT_TRUE(c.features[0].fair_price);
  EXPECT_EQ(c.features[0].fair_price_kind, nt::FairPriceKind::kMicroprice);
  EXPECT_FALSE(c.features[0].imbalance);
  EXPECT_FALSE(c.features[0].volatility);
  EXPECT_FALSE(c.features[0].trade_flow);
}

TEST_F(TraderConfigTest, EveryValueIsRead) {
  const nt::TraderConfig c = parse(trader("market_maker", R"(
[threads]
mode = "dedicated"
idle = "spin"
cpus = [1, 0, 1]
[market_data]
interface = "127.0.0.2"
incremental = "239.1.1.1:7000"
snapshot = "239.1.1.2:7001"
reorder_packets = 0
reorder_us = 50
buffer_messages = 1024
[risk]
max_open_orders = 10
max_open_notional = 123
max_loss = 0
orders_per_second = 7
burst = 3
[[instruments]]
symbol = "BBB"
reference_price = 1005
max_order_qty = 40
max_position = 80
max_open_orders = 2
max_open_notional = 99
max_loss = 11
price_band = 100
fair_price = "mid"
imbalance_levels = 3
volatility_alpha = 0.5
trade_flow_alpha = 1
quote_qty = 40
half_spread_ticks = 10
skew_ticks_per_unit = 0
requote_ticks = 3
)",
                                          "name = \"alpha\"\nseed = 0\nstatus_interval_ms = 0\nmax_orders = 10\n",
                                          R"(heartbeat_ms = 0
exchange = "127.0.0.3:1234"
connect_timeout_ms = 7
logon_timeout_ms = 8
reconnect_initial_ms = 9
reconnect_max_ms = 9
)"));
  EXPECT_EQ(c.name, "alpha");
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.status_interval_ms, 0u);
  EXPECT_EQ(c.max_orders, 10u);
  EXPECT_EQ(c.threads.mode, nanotick::core::ThreadMode::kDedicated);
  EXPECT_EQ(c.threads.idle, nanotick::core::IdleKind::spin);
  EXPECT_EQ(c.threads.cpus, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(c.threads.runner("engine").cpu, 1);
  EXPECT_EQ(c.threads.runner("receiver").cpu, 0);
  EXPECT_EQ(c.threads.runner("receiver").idle, nanotick::core::IdleKind::spin);
  EXPECT_EQ(c.session.heartbeat_ms, 0u);
  EXPECT_EQ(c.session.exchange.to_string(), "127.0.0.3:1234");
  EXPECT_EQ(c.session.connect_timeout_ms, 7u);
  EXPECT_EQ(c.session.logon_timeout_ms, 8u);
  EXPECT_EQ(c.session.reconnect_initial_ms, 9u);
  EXPECT_EQ(c.session.reconnect_max_ms, 9u);
  EXPECT_EQ(c.market_data.interface, "127.0.0.2");
  EXPECT_EQ(c.market_data.incremental, "239.1.1.1:7000");
  EXPECT_EQ(c.market_data.snapshot, "239.1.1.2:7001");
  EXPECT_EQ(c.market_data.reorder_packets, 0u);
  EXPECT_EQ(c.market_data.reorder_us, 50u);
  EXPECT_EQ(c.market_data.buffer_messages, 1024u);
  EXPECT_EQ(c.global_risk.max_open_orders, 10u);
  EXPECT_EQ(c.global_risk.max_open_notional, 123);
  EXPECT_EQ(c.global_risk.max_loss, 0);
  EXPECT_EQ(c.global_risk.orders_per_second, 7u);
  EXPECT_EQ(c.global_risk.burst, 3u);
  const nt::InstrumentRiskLimits& r = c.risk[1];
  EXPECT_EQ(r.max_order_qty, 40);
  EXPECT_EQ(r.max_position, 80);
  EXPECT_EQ(r.max_open_orders, 2u);
  EXPECT_EQ(r.max_open_notional, 99);
  EXPECT_EQ(r.max_loss, 11);
  EXPECT_EQ(r.price_band, 100);
  const nt::FeatureConfig& f = c.features[1];
  EXPECT_EQ(f.fair_price_kind, nt::FairPriceKind::kMid);
  EXPECT_TRUE(f.imbalance);
  EXPECT_EQ(f.imbalance_levels, 3u);
  EXPECT_TRUE(f.volatility);
  EXPECT_DOUBLE_EQ(f.volatility_alpha, 0.5);
  EXPECT_TRUE(f.trade_flow);
  EXPECT_DOUBLE_EQ(f.trade_flow_alpha, 1.0);
  const nt::StrategyParams& s = c.strategy_params[1];
  EXPECT_EQ(s.reference_price, 1005);
  EXPECT_EQ(s.market_maker.quote_qty, 40);
  EXPECT_EQ(s.market_maker.half_spread_ticks, 10);
  EXPECT_DOUBLE_EQ(s.market_maker.skew_ticks_per_unit, 0.0);
  EXPECT_EQ(s.market_maker.requote_ticks, 3);
  EXPECT_FALSE(c.strategy_params[0].market_maker.enabled);
}

TEST_F(TraderConfigTest, TakerAndRandomKeysAreReadAndTheTakerGetsTradeFlow) {
  const nt::TraderConfig t = parse(trader("liquidity_taker", R"([[instruments]]
symbol = "AAA"
clip_qty = 4
flow_threshold = 2.5
min_aggressive_ratio = 1
slippage_ticks = 2
min_interval_ms = 0
)"));
  const nt::LiquidityTakerParams& p = t.strategy_params[0].liquidity_taker;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.clip_qty, 4);
  EXPECT_DOUBLE_EQ(p.flow_threshold, 2.5);
  EXPECT_DOUBLE_EQ(p.min_aggressive_ratio, 1.0);
  EXPECT_EQ(p.slippage_ticks, 2);
  EXPECT_EQ(p.min_interval_ms, 0u);
  EXPECT_TRUE(t.features[0].trade_flow) << "the taker follows trade flow";
  EXPECT_TRUE(t.features[0].aggressive_ratio);

  const nt::TraderConfig r = parse(trader("random", R"([[instruments]]
symbol = "CCC"
orders_per_second = 25
weight_new = 1
weight_cancel = 0
weight_modify = 0
weight_ioc = 0
price_range_ticks = 0
max_qty = 3
random_max_open_orders = 7
)"));
  const nt::RandomParams& q = r.strategy_params[2].random;
  EXPECT_TRUE(q.enabled);
  EXPECT_DOUBLE_EQ(q.orders_per_second, 25.0);
  EXPECT_EQ(q.weight_new, 1u);
  EXPECT_EQ(q.weight_cancel + q.weight_modify + q.weight_ioc, 0u);
  EXPECT_EQ(q.price_range_ticks, 0);
  EXPECT_EQ(q.max_qty, 3);
  EXPECT_EQ(q.max_open_orders, 7u);
  EXPECT_FALSE(r.features[2].trade_flow);
}

TEST_F(TraderConfigTest, ExchangeConfigPathIsRelativeToTheTraderFile) {
  write_file(dir_ / "t.toml", mm(""));
  const nt::TraderConfig c = nt::load_trader_config((dir_ / "t.toml").string());
  EXPECT_EQ(fs::path(c.exchange_config), dir_ / "exchange.toml");
  EXPECT_EQ(c.name, "t");
  // An absolute path is taken as it is.
  const std::string text = completed("[trader]\nexchange_config = \"" + (dir_ / "exchange.toml").string() +
                                     "\"\nstrategy = \"random\"\n[session]\nclient_id = 9\napi_key = \"" + kKey +
                                     "\"\n[[instruments]]\nsymbol = \"AAA\"\n");
  EXPECT_EQ(nt::parse_trader_config(text, "elsewhere/t.toml").exchange_config, (dir_ / "exchange.toml").string());
}

TEST_F(TraderConfigTest, ExchangeAddressComesFromTheExchangeConfigWithLoopbackForAny) {
  write_exchange("order_entry = \"0.0.0.0:9555\"");
  EXPECT_EQ(parse(mm("")).session.exchange.to_string(), "127.0.0.1:9555");
  write_exchange("order_entry = \"127.0.0.1:0\"");
  expect_error(mm(""), "session.exchange", "port 0");
  // An address the exchange could not use is the exchange config's error, named there (issue 30).
  for (const char* bad : {"127.0.0.1", "127.0.0.1:70000", "localhost:9555"}) {
    write_exchange("order_entry = \"" + std::string(bad) + "\"");
    expect_error(mm(""), "trader.exchange_config", "exchange.toml: server.order_entry: \"" + std::string(bad) + "\"");
  }
  write_exchange("order_entry = \"127.0.0.1:9555\"");
  // An explicit address needs no usable default.
  EXPECT_EQ(parse(trader("market_maker", "[[instruments]]\nsymbol = \"AAA\"\n", "", "exchange = \"127.0.0.1:9556\"\n"))
                .session.exchange.to_string(),
            "127.0.0.1:9556");
}

TEST_F(TraderConfigTest, ExchangeConfigProblemsAreReportedUnderItsKey) {
  expect_error("[trader]\nexchange_config = \"missing.toml\"\nstrategy = \"random\"\n", "trader.exchange_config",
               "cannot open config file");
  write_file(dir_ / "broken.toml", "[server\n");
  expect_error("[trader]\nexchange_config = \"broken.toml\"\nstrategy = \"random\"\n", "trader.exchange_config",
               "TOML syntax error");
}

TEST_F(TraderConfigTest, RequiredTablesAndKeysAreNamedWhenMissing) {
  expect_error("", "trader", "missing (required)");
  expect_error("[trader]\nstrategy = \"random\"\n", "trader.exchange_config", "missing (required)");
  expect_error("[trader]\nexchange_config = \"exchange.toml\"\n", "trader.strategy", "missing (required)");
  expect_error("[trader]\nexchange_config = \"exchange.toml\"\nstrategy = \"random\"\n", "session",
               "missing (required)");
  expect_error(replaced(trader("random", ""), "client_id = 9", ""), "session.client_id", "missing (required)");
  expect_error(trader("random", ""), "instruments", "at least one [[instruments]]");
  expect_error(trader("random", "[[instruments]]\nreference_price = 5\n"), "instruments[0].symbol",
               "missing (required)");
}

// Every key the loader requires, and nothing else: two instruments (a key
// taken from the second is named with its index).
std::string required_only() {
  return std::string(R"([trader]
exchange_config = "exchange.toml"
strategy = "market_maker"

[session]
client_id = 9
api_key = ")") +
         kKey + R"("

[risk]
max_open_notional = 1000000000
max_loss = 10000000

[[instruments]]
symbol = "AAA"
max_order_qty = 100
max_position = 1000
max_open_notional = 100000000
max_loss = 1000000
price_band = 100

[[instruments]]
symbol = "BBB"
max_order_qty = 50
max_position = 500
max_open_notional = 50000000
max_loss = 500000
price_band = 250
)";
}

TEST_F(TraderConfigTest, EveryRequiredKeyAndTableIsNamedWhenMissing) {
  const nt::TraderConfig c = parse(required_only());
  EXPECT_EQ(c.risk[1].price_band, 250);
  struct Missing {
    std::string line;  // taken out of required_only()
    std::string key;   // the key path the error must name
  };
  for (const Missing& m : std::initializer_list<Missing>{
           {"exchange_config = \"exchange.toml\"", "trader.exchange_config"},
           {"strategy = \"market_maker\"", "trader.strategy"},
           {"client_id = 9", "session.client_id"},
           {std::string("api_key = \"") + kKey + "\"", "session.api_key"},
           {"max_open_notional = 1000000000", "risk.max_open_notional"},
           {"max_loss = 10000000", "risk.max_loss"},
           {"symbol = \"BBB\"", "instruments[1].symbol"},
           {"max_order_qty = 50", "instruments[1].max_order_qty"},
           {"max_position = 500", "instruments[1].max_position"},
           {"max_open_notional = 50000000", "instruments[1].max_open_notional"},
           {"max_loss = 500000", "instruments[1].max_loss"},
           {"price_band = 250", "instruments[1].price_band"},
       }) {
    SCOPED_TRACE(m.key);
    const std::string text = nanotick::testing::without_line(required_only(), m.line);
    ASSERT_FALSE(text.empty()) << "no line '" << m.line << "'";
    expect_error(text, m.key, "missing (required)");
  }
  for (const std::string_view table : {"trader", "session", "risk"}) {
    SCOPED_TRACE(table);
    const std::string text = nanotick::testing::without_tables(required_only(), "[" + std::string(table) + "]");
    ASSERT_FALSE(text.empty());
    expect_error(text, std::string(table), "missing (required)");
  }
  expect_error(nanotick::testing::without_tables(required_only(), "[[instruments]]"), "instruments",
               "at least one [[instruments]]");
}

TEST_F(TraderConfigTest, UnknownKeysAreRefusedEverywhere) {
  expect_error(mm("") + "[sesion]\nclient_id = 1\n", "sesion", "unknown key");
  expect_error(trader("random", "[[instruments]]\nsymbol = \"AAA\"\n", "sed = 3\n"), "trader.sed", "unknown key");
  expect_error(trader("random", "[[instruments]]\nsymbol = \"AAA\"\n", "", "heartbeat = 3\n"), "session.heartbeat",
               "unknown key");
  expect_error(mm("[threads]\nmodes = \"compact\"\n"), "threads.modes", "unknown key");
  expect_error(mm("[market_data]\nmtu = 9000\n"), "market_data.mtu", "unknown key");
  expect_error(mm("[risk]\nmax_open_order = 3\n"), "risk.max_open_order", "unknown key");
  expect_error(mm("quote_size = 3\n"), "instruments[0].quote_size", "unknown key");
}

TEST_F(TraderConfigTest, WrongTypesNameTheKey) {
  expect_error(trader("random", "[[instruments]]\nsymbol = \"AAA\"\n", "seed = \"1\"\n"), "trader.seed",
               "must be an integer, got a string");
  expect_error(mm("quote_qty = 1.5\n"), "instruments[0].quote_qty", "must be an integer, got a float");
  expect_error(mm("skew_ticks_per_unit = \"0.1\"\n"), "instruments[0].skew_ticks_per_unit",
               "must be a number, got a string");
  expect_error(mm("volatility_alpha = true\n"), "instruments[0].volatility_alpha", "must be a number");
  expect_error(replaced(mm(""), "symbol = \"AAA\"", "symbol = 3"), "instruments[0].symbol", "must be a string");
  expect_error("instruments = 3\n" + trader("random", ""), "instruments", "must be an array of tables");
  expect_error(mm("[threads]\ncpus = 1\n"), "threads.cpus", "must be an array of integers");
  EXPECT_NE(error_of("[trader\n").find("TOML syntax error"), std::string::npos);
}

TEST_F(TraderConfigTest, SymbolsMustNameExchangeInstrumentsOnce) {
  expect_error(mm("", "ZZZ"), "instruments[0].symbol", "no instrument \"ZZZ\"");
  EXPECT_NE(error_of(mm("", "ZZZ")).find("AAA, BBB, CCC"), std::string::npos) << "the message lists the choices";
  expect_error(mm("[[instruments]]\nsymbol = \"AAA\"\n"), "instruments[1].symbol", "duplicate symbol \"AAA\"");
}

TEST_F(TraderConfigTest, AnotherStrategysKeyIsAnError) {
  expect_error(mm("clip_qty = 5\n"), "instruments[0].clip_qty", "is a liquidity_taker key");
  expect_error(mm("orders_per_second = 5\n"), "instruments[0].orders_per_second", "is a random key");
  expect_error(trader("random", "[[instruments]]\nsymbol = \"AAA\"\nquote_qty = 5\n"), "instruments[0].quote_qty",
               "is a market_maker key");
  expect_error(trader("liquidity_taker", "[[instruments]]\nsymbol = \"AAA\"\nrandom_max_open_orders = 5\n"),
               "instruments[0].random_max_open_orders", "is a random key");
  expect_error(trader("momentum", ""), "trader.strategy", "must be one of");
}

TEST_F(TraderConfigTest, OutOfRangeValuesNameTheKeyAndTheRange) {
  const std::string aaa = "[[instruments]]\nsymbol = \"AAA\"\n";
  // [trader], [threads], [session], [market_data]
  expect_error(trader("random", aaa, "seed = -1\n"), "trader.seed", "must be in [0,");
  expect_error(trader("random", aaa, "max_orders = 0\n"), "trader.max_orders", "must be in [1,");
  expect_error(trader("random", aaa, "max_orders = 100\n"), "trader.max_orders", "risk.max_open_orders (256)");
  expect_error(trader("random", aaa, "status_interval_ms = 4000000\n"), "trader.status_interval_ms", "must be in");
  expect_error(mm("[threads]\nmode = \"spread\"\n"), "threads.mode", "must be one of");
  expect_error(mm("[threads]\nidle = \"nap\"\n"), "threads.idle", "must be one of");
  expect_error(mm("[threads]\ncpus = [0, -1]\n"), "threads.cpus[1]", "must be in [0, 4095]");
  expect_error(replaced(trader("random", aaa), "client_id = 9", "client_id = 0"), "session.client_id",
               "must be in [1, 65535]");
  expect_error(trader("random", aaa, "", "heartbeat_ms = 50\n"), "session.heartbeat_ms", "BadHeartbeat");
  expect_error(trader("random", aaa, "", "heartbeat_ms = 20000\n"), "session.heartbeat_ms", "[100, 10000]");
  expect_error(trader("random", aaa, "", "connect_timeout_ms = 0\n"), "session.connect_timeout_ms", "must be in [1,");
  expect_error(trader("random", aaa, "", "reconnect_initial_ms = 500\nreconnect_max_ms = 100\n"),
               "session.reconnect_max_ms", "must be in [500,");
  expect_error(trader("random", aaa, "", "exchange = \"localhost:9100\"\n"), "session.exchange", "localhost");
  expect_error(trader("random", aaa, "", "exchange = \"127.0.0.1:0\"\n"), "session.exchange", "port 0");
  expect_error(mm("[market_data]\ninterface = \"eth0\"\n"), "market_data.interface", "eth0");
  expect_error(mm("[market_data]\nincremental = \"127.0.0.1:9000\"\n"), "market_data.incremental", "multicast");
  expect_error(mm("[market_data]\nsnapshot = \"239.255.50.1:9401\"\n"), "market_data.snapshot", "must differ");
  expect_error(mm("[market_data]\nreorder_us = -1\n"), "market_data.reorder_us", "must be in [0,");
  expect_error(mm("[market_data]\nbuffer_messages = 2\n"), "market_data.buffer_messages", "must be in [16,");
  // [risk]: the risk manager's ranges
  expect_error(mm("[risk]\nmax_open_orders = 0\n"), "risk.max_open_orders", "must be in [1, 16777216]");
  expect_error(mm("[risk]\nmax_open_notional = 0\n"), "risk.max_open_notional", "must be in [1,");
  expect_error(mm("[risk]\nmax_loss = -1\n"), "risk.max_loss", "must be in [0,");
  expect_error(mm("[risk]\norders_per_second = 100000001\n"), "risk.orders_per_second", "must be in [1, 100000000]");
  expect_error(mm("[risk]\nburst = 0\n"), "risk.burst", "must be in [1, 1000000]");
}

TEST_F(TraderConfigTest, InstrumentValuesAreCheckedAgainstTheVenueAndEachOther) {
  const std::string i0 = "instruments[0].";
  // reference price: inside the band, on the tick
  expect_error(mm("reference_price = 100001\n"), i0 + "reference_price", "band [1, 100000]");
  expect_error(mm("reference_price = 1002\n", "BBB"), i0 + "reference_price", "multiple of BBB's tick_size 5");
  expect_error(mm("reference_price = -5\n"), i0 + "reference_price", "must be in [0,");
  // risk: the venue's own limits and the risk manager's ranges
  expect_error(mm("max_order_qty = 501\nquote_qty = 1\n", "BBB"), i0 + "max_order_qty", "must be in [1, 500]");
  expect_error(mm("max_position = -1\n"), i0 + "max_position", "must be in [0,");
  expect_error(mm("max_open_orders = 0\n"), i0 + "max_open_orders", "must be in [1,");
  expect_error(mm("max_open_notional = 0\n"), i0 + "max_open_notional", "must be in [1,");
  expect_error(mm("max_loss = -1\n"), i0 + "max_loss", "must be in [0,");
  expect_error(mm("price_band = -1\n"), i0 + "price_band", "must be in [0,");
  // features
  expect_error(mm("fair_price = \"last\"\n"), i0 + "fair_price", "must be one of \"microprice\", \"mid\"");
  expect_error(mm("imbalance_levels = 0\n"), i0 + "imbalance_levels", "must be in [1, 65536]");
  expect_error(mm("volatility_alpha = 0\n"), i0 + "volatility_alpha", "must be in (0, 1]");
  expect_error(mm("trade_flow_alpha = 1.5\n"), i0 + "trade_flow_alpha", "must be in (0, 1], got 1.5");
  expect_error(mm("volatility_alpha = nan\n"), i0 + "volatility_alpha", "must be in (0, 1]");
  // market maker
  expect_error(mm("quote_qty = 0\n"), i0 + "quote_qty", "must be in [1,");
  expect_error(mm("half_spread_ticks = 0\n"), i0 + "half_spread_ticks", "must be in [1,");
  expect_error(mm("skew_ticks_per_unit = -0.5\n"), i0 + "skew_ticks_per_unit", "must be in [0, 1e+06]");
  expect_error(mm("requote_ticks = 0\n"), i0 + "requote_ticks", "must be in [1,");
  expect_error(mm("max_order_qty = 5\nquote_qty = 6\n"), i0 + "quote_qty", "must be <= max_order_qty (5)");
  expect_error(mm("max_position = 5\nquote_qty = 6\n"), i0 + "quote_qty", "must be <= max_position (5)");
  expect_error(mm("price_band = 45\nhalf_spread_ticks = 5\n", "BBB"), i0 + "half_spread_ticks",
               "10 ticks x tick_size 5 is beyond price_band (45)");
  expect_error(mm("max_open_orders = 1\n"), i0 + "max_open_orders", "must be >= 2 for a market maker");
  // liquidity taker
  const auto taker = [](const std::string& extra) {
    return trader("liquidity_taker", "[[instruments]]\nsymbol = \"AAA\"\n" + extra);
  };
  expect_error(taker("clip_qty = 0\n"), i0 + "clip_qty", "must be in [1,");
  expect_error(taker("max_order_qty = 3\nclip_qty = 4\n"), i0 + "clip_qty", "must be <= max_order_qty (3)");
  expect_error(taker("flow_threshold = 0\n"), i0 + "flow_threshold", "must be in (0,");
  expect_error(taker("min_aggressive_ratio = 1.01\n"), i0 + "min_aggressive_ratio", "must be in [0, 1]");
  expect_error(taker("slippage_ticks = -1\n"), i0 + "slippage_ticks", "must be in [0,");
  expect_error(taker("price_band = 3\nslippage_ticks = 4\n"), i0 + "slippage_ticks", "beyond price_band (3)");
  expect_error(taker("min_interval_ms = -1\n"), i0 + "min_interval_ms", "must be in [0,");
  // random
  const auto random = [](const std::string& extra) {
    return trader("random", "[[instruments]]\nsymbol = \"AAA\"\n" + extra);
  };
  expect_error(random("orders_per_second = 0\n"), i0 + "orders_per_second", "must be in (0, 1e+06]");
  expect_error(random("orders_per_second = 2e6\n"), i0 + "orders_per_second", "got 2e+06");
  expect_error(random("weight_cancel = -1\n"), i0 + "weight_cancel", "must be in [0,");
  expect_error(random("weight_new = 0\nweight_cancel = 0\nweight_modify = 0\nweight_ioc = 0\n"), i0 + "weight_new",
               "at least one must be > 0");
  expect_error(random("price_range_ticks = 101\n"), i0 + "price_range_ticks", "beyond price_band (100)");
  expect_error(random("max_qty = 0\n"), i0 + "max_qty", "must be in [1,");
  expect_error(random("max_qty = 101\n"), i0 + "max_qty", "must be <= max_order_qty (100)");
  expect_error(random("random_max_open_orders = 0\n"), i0 + "random_max_open_orders", "must be in [1,");
  expect_error(random("random_max_open_orders = 65\n"), i0 + "random_max_open_orders",
               "must be <= max_open_orders (64)");
}

// Whether the venue knows the client and its key is the venue's to say at
// logon (UnknownClient, BadCredentials): the trader does not read who may log
// on there, nor link what checks a key. Only the key's form is its own to check.
TEST_F(TraderConfigTest, TheVenueNotTheTraderChecksTheClientAndItsKey) {
  const std::string aaa = "[[instruments]]\nsymbol = \"AAA\"\n";
  EXPECT_EQ(parse(replaced(trader("random", aaa), "client_id = 9", "client_id = 8")).session.client_id, 8u);
  EXPECT_EQ(parse(replaced(trader("random", aaa), kKey, "test-key-0123456789abcdeX")).session.api_key,
            "test-key-0123456789abcdeX");
  expect_error(replaced(trader("random", aaa), kKey, "short"), "session.api_key", "16");
  // The exchange config's client table is not read: not even a broken one stops the trader.
  const fs::path ex = dir_ / "exchange.toml";
  std::ifstream in(ex);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(ex, replaced(text, "credential = \"sha256:", "credential = \"not-a-hash:"));
  EXPECT_EQ(parse(trader("random", aaa)).session.client_id, 9u);
}

// [trader] transport = "shm": order entry and the incremental market data
// channel both over shared memory, each at its path in the exchange config
// (or the trader's own override); the snapshot channel stays multicast.
TEST_F(TraderConfigTest, SharedMemoryTransportNeedsTheMarketDataRingToo) {
  const std::string aaa = "[[instruments]]\nsymbol = \"AAA\"\n";
  const std::string shm = "transport = \"shm\"\n";
  write_exchange("order_entry = \"127.0.0.1:9300\"\nshm_path = \"/tmp/oe.sock\"");
  expect_error(trader("random", aaa, shm), "market_data.shm_path",
               "trader.transport = \"shm\" needs the exchange config's market_data.shm_path");
  // With the ring in the exchange config.
  const fs::path ex = dir_ / "exchange.toml";
  std::ifstream in(ex);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(ex, replaced(text, "mtu = 1200", "mtu = 1200\nshm_path = \"/tmp/md.sock\""));
  const nt::TraderConfig c = parse(trader("random", aaa, shm));
  EXPECT_EQ(c.transport, nanotick::ipc::Transport::kShm);
  EXPECT_EQ(c.session.shm_path, "/tmp/oe.sock");
  EXPECT_EQ(c.market_data.shm_path, "/tmp/md.sock");
  EXPECT_EQ(c.market_data.snapshot, "239.255.50.2:9402") << "the snapshot channel is multicast either way";
  const nt::TraderConfig own = parse(trader("random", aaa + "[market_data]\nshm_path = \"/tmp/mine.sock\"\n", shm));
  EXPECT_EQ(own.market_data.shm_path, "/tmp/mine.sock");
  // TCP reads the multicast groups: the ring's path is not used, and naming one is an error.
  const nt::TraderConfig tcp = parse(trader("random", aaa));
  EXPECT_EQ(tcp.transport, nanotick::ipc::Transport::kTcp);
  EXPECT_EQ(tcp.market_data.shm_path, "");
  expect_error(trader("random", aaa + "[market_data]\nshm_path = \"/tmp/mine.sock\"\n"), "market_data.shm_path",
               "is read only with trader.transport = \"shm\"");
  expect_error(trader("random", aaa + "[market_data]\nshm_path = \"/" + std::string(107, 'x') + "\"\n", shm),
               "market_data.shm_path", "longer than 107 bytes");
}

}  // namespace
