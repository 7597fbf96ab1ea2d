// Trader config loading, bad input: every required key and table is named
// when missing; unknown keys, wrong types, symbols the exchange does not
// have, another strategy's keys and out-of-range values are each a
// ConfigError naming the file, the key and the problem; instrument values are
// checked against the venue's and each other.
#include "trading/trader_config.hpp"

#include <gtest/gtest.h>

#include <string>

#include "unit/trading/trader_config_fixture.hpp"

namespace {

using namespace trader_config_fixture;

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

}  // namespace
