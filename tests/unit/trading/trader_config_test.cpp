// Trader config loading: the shipped demo configs load against the shipped
// exchange config; a minimal file takes the documented defaults, the venue's
// side (instruments, addresses, session rules) coming from the exchange
// config, never its client table; every value is read; paths and addresses
// are resolved; the shared-memory transport. Bad input:
// trader_config_errors_test.cpp.
#include "trading/trader_config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "unit/trading/trader_config_fixture.hpp"

namespace {

using namespace trader_config_fixture;

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
