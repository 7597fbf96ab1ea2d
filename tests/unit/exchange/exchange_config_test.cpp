// Exchange config loading: the shipped default loads; every required key and
// table is named when missing, every optional one takes its documented
// default (docs/EXCHANGE.md "Config"); every bad value is an error naming the
// key and the problem; unknown keys are refused.
#include "exchange/exchange_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "config/toml_reader.hpp"
#include "support/toml_text.hpp"

namespace nx = nanotick::exchange;
using nanotick::testing::with_defaults;
using nanotick::testing::without_line;
using nanotick::testing::without_tables;

namespace {

const std::string kCredential =
    "sha256:00000000000000000000000000000000:60e14a70be9097fe0745a080cd16d3b1a1597f887f60fcde7f5fee4e44433f2e";

// `text` with every required key it does not give itself: the order-entry
// address, the market data interface and groups, the journal dir, and each
// instrument's tick, band and order size limit.
std::string completed(const std::string& text) {
  std::string t = with_defaults(text, "[server]", {"order_entry = \"127.0.0.1:9100\""});
  t = with_defaults(
      t, "[market_data]",
      {"interface = \"127.0.0.1\"", "incremental = \"239.255.42.1:9201\"", "snapshot = \"239.255.42.2:9202\""});
  t = with_defaults(t, "[journal]", {"dir = \"run/journal\""});
  return with_defaults(t, "[[instruments]]",
                       {"tick_size = 1", "min_price = 1", "max_price = 1000000", "max_order_qty = 1000000"});
}

// The smallest valid config, with `extra` first (its tables get the required
// keys they lack; a [[clients]] in it is clients[0]).
std::string minimal(const std::string& extra = "") {
  return completed(extra + "[[instruments]]\nsymbol = \"A\"\n[[clients]]\nid = 7\ncredential = \"" + kCredential +
                   "\"\n");
}

// The message of the ConfigError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    (void)nx::parse_exchange_config(text, "test.toml");
  } catch (const nanotick::config::ConfigError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& text, const std::string& key, const std::string& words) {
  const std::string e = error_of(text);
  EXPECT_NE(e.find("test.toml: " + key + ": "), std::string::npos) << "error: '" << e << "'";
  EXPECT_NE(e.find(words), std::string::npos) << "error: '" << e << "'";
}

TEST(ExchangeConfig, ShippedDefaultLoads) {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../config/exchange.toml";
  const nx::ExchangeConfig c = nx::load_exchange_config(path.string());
  EXPECT_GE(c.engine.instruments.size(), 1u);
  EXPECT_GE(c.clients.size(), 4u);
  EXPECT_EQ(c.threads.mode, nx::ThreadMode::kCompact);
  EXPECT_EQ(c.market_data.ttl, 0u);
  EXPECT_NE(c.find_client(1), nullptr);
}

TEST(ExchangeConfig, MinimalFileTakesTheDocumentedDefaults) {
  const nx::ExchangeConfig c = nx::parse_exchange_config(minimal(), "test.toml");
  EXPECT_EQ(c.server.order_entry, "127.0.0.1:9100");
  EXPECT_EQ(c.server.max_sessions, 64u);
  EXPECT_EQ(c.server.logon_timeout_ms, 5000u);
  EXPECT_EQ(c.server.heartbeat_ms, 1000u);
  EXPECT_EQ(c.server.min_heartbeat_ms, 100u);
  EXPECT_EQ(c.server.max_heartbeat_ms, 60000u);
  EXPECT_EQ(c.server.output_buffer_bytes, 1u << 20);
  EXPECT_EQ(c.server.read_budget_bytes, 1u << 16);
  EXPECT_EQ(c.market_data.ttl, 0u);
  EXPECT_EQ(c.market_data.mtu, 1400u);
  EXPECT_EQ(c.market_data.heartbeat_ms, 1000u);
  EXPECT_EQ(c.market_data.snapshot_interval_ms, 1000u);
  EXPECT_EQ(c.journal.fsync, nx::FsyncPolicy::kBatch);
  EXPECT_EQ(c.journal.batch_window_us, 1000u);
  EXPECT_EQ(c.journal.segment_bytes, 64ull << 20);
  EXPECT_EQ(c.journal.snapshot_every, 1'000'000u);
  EXPECT_EQ(c.threads.mode, nx::ThreadMode::kCompact);
  EXPECT_EQ(c.threads.idle, nanotick::core::IdleKind::backoff);
  EXPECT_TRUE(c.threads.cpus.empty());
  ASSERT_EQ(c.engine.instruments.size(), 1u);
  EXPECT_EQ(c.engine.instruments[0].symbol, "A");
  EXPECT_EQ(c.engine.instruments[0].collar, 0);
  EXPECT_EQ(c.engine.instruments[0].max_orders, 65536u);
  EXPECT_EQ(c.engine.instruments[0].max_levels, 4096u);
  ASSERT_EQ(c.clients.size(), 1u);
  EXPECT_EQ(c.clients[0].id, 7u);
  EXPECT_EQ(c.clients[0].name, "client-7");
  EXPECT_EQ(c.clients[0].rate_limit_per_s, 100'000u);
  EXPECT_EQ(c.clients[0].rate_burst, 1'000u);
  EXPECT_TRUE(c.clients[0].cancel_on_disconnect);
  EXPECT_EQ(c.find_client(8), nullptr);
}

// Every key the loader requires, and nothing else: two instruments (a key
// taken from the second is named with its index) and one client.
const std::string kRequiredOnly = R"([server]
order_entry = "127.0.0.1:9100"

[market_data]
interface = "127.0.0.1"
incremental = "239.255.42.1:9201"
snapshot = "239.255.42.2:9202"

[journal]
dir = "run/journal"

[[instruments]]
symbol = "A"
tick_size = 1
min_price = 1
max_price = 1000000
max_order_qty = 1000000

[[instruments]]
symbol = "B"
tick_size = 5
min_price = 5
max_price = 500000
max_order_qty = 1000

[[clients]]
id = 7
credential = ")" + kCredential + "\"\n";

TEST(ExchangeConfig, EveryRequiredKeyAndTableIsNamedWhenMissing) {
  const nx::ExchangeConfig c = nx::parse_exchange_config(kRequiredOnly, "test.toml");
  EXPECT_EQ(c.engine.instruments[1].tick_size, 5);
  struct Missing {
    std::string line;  // taken out of kRequiredOnly
    std::string key;   // the key path the error must name
  };
  for (const Missing& m : std::initializer_list<Missing>{
           {"order_entry = \"127.0.0.1:9100\"", "server.order_entry"},
           {"interface = \"127.0.0.1\"", "market_data.interface"},
           {"incremental = \"239.255.42.1:9201\"", "market_data.incremental"},
           {"snapshot = \"239.255.42.2:9202\"", "market_data.snapshot"},
           {"dir = \"run/journal\"", "journal.dir"},
           {"symbol = \"B\"", "instruments[1].symbol"},
           {"tick_size = 5", "instruments[1].tick_size"},
           {"min_price = 5", "instruments[1].min_price"},
           {"max_price = 500000", "instruments[1].max_price"},
           {"max_order_qty = 1000", "instruments[1].max_order_qty"},
           {"id = 7", "clients[0].id"},
           {"credential = \"" + kCredential + "\"", "clients[0].credential"},
       }) {
    SCOPED_TRACE(m.key);
    const std::string text = without_line(kRequiredOnly, m.line);
    ASSERT_FALSE(text.empty()) << "no line '" << m.line << "'";
    expect_error(text, m.key, "missing (required)");
  }
  for (const std::string_view table : {"server", "market_data", "journal"}) {
    SCOPED_TRACE(table);
    const std::string text = without_tables(kRequiredOnly, "[" + std::string(table) + "]");
    ASSERT_FALSE(text.empty());
    expect_error(text, std::string(table), "missing (required)");
  }
  expect_error(without_tables(kRequiredOnly, "[[instruments]]"), "instruments", "at least one [[instruments]]");
  expect_error(without_tables(kRequiredOnly, "[[clients]]"), "clients", "at least one [[clients]]");
  // An empty string is a missing address or directory, not a default.
  expect_error(minimal("[server]\norder_entry = \"\"\n"), "server.order_entry", "must not be empty");
  expect_error(minimal("[journal]\ndir = \"\"\n"), "journal.dir", "must not be empty");
}

TEST(ExchangeConfig, EveryValueIsRead) {
  const nx::ExchangeConfig c = nx::parse_exchange_config(minimal(R"(
[server]
order_entry = "127.0.0.1:9999"
max_sessions = 3
heartbeat_ms = 500
[market_data]
mtu = 512
ttl = 1
[journal]
dir = "/tmp/j"
fsync = "every"
snapshot_every = 0
[threads]
mode = "dedicated"
idle = "spin"
cpus = [0, 1]
)"),
                                                         "test.toml");
  EXPECT_EQ(c.server.order_entry, "127.0.0.1:9999");
  EXPECT_EQ(c.server.max_sessions, 3u);
  EXPECT_EQ(c.server.heartbeat_ms, 500u);
  EXPECT_EQ(c.market_data.mtu, 512u);
  EXPECT_EQ(c.market_data.ttl, 1u);
  EXPECT_EQ(c.journal.dir, "/tmp/j");
  EXPECT_EQ(c.journal.fsync, nx::FsyncPolicy::kEvery);
  EXPECT_EQ(c.journal.snapshot_every, 0u);
  EXPECT_EQ(c.threads.mode, nx::ThreadMode::kDedicated);
  EXPECT_EQ(c.threads.idle, nanotick::core::IdleKind::spin);
  EXPECT_EQ(c.threads.cpus, (std::vector<int>{0, 1}));
  // cpus pins by position (gateway, sequencer, ...); idle is the critical runners' default.
  EXPECT_EQ(c.threads.runner("gateway").cpu, 0);
  EXPECT_EQ(c.threads.runner("sequencer").cpu, 1);
  EXPECT_EQ(c.threads.runner("engine").cpu, -1);
  EXPECT_EQ(c.threads.runner("md").idle, nanotick::core::IdleKind::spin);
  EXPECT_EQ(c.threads.runner("aux").idle, nanotick::core::IdleKind::backoff);
}

TEST(ExchangeConfig, EachRunnerHasItsOwnTable) {
  const nx::ExchangeConfig c = nx::parse_exchange_config(minimal(R"([threads]
mode = "compact"
idle = "yield"
[threads.critical]
cpu = 1
idle = "spin"
[threads.snapshotter]
cpu = 0
)"),
                                                         "test.toml");
  ASSERT_EQ(c.threads.runners.size(), 3u);
  EXPECT_EQ(c.threads.runners[0].role, "critical");
  EXPECT_EQ(c.threads.runner("critical").cpu, 1);
  EXPECT_EQ(c.threads.runner("critical").idle, nanotick::core::IdleKind::spin);
  EXPECT_EQ(c.threads.runner("aux").cpu, -1);
  EXPECT_EQ(c.threads.runner("aux").idle, nanotick::core::IdleKind::backoff);
  EXPECT_EQ(c.threads.runner("snapshotter").cpu, 0);
  EXPECT_THROW((void)c.threads.runner("gateway"), std::logic_error);  // not a compact runner
  const nx::ExchangeConfig none = nx::parse_exchange_config(minimal(), "test.toml");
  EXPECT_EQ(none.threads.runner("critical").cpu, -1);
  EXPECT_EQ(none.threads.runner("critical").idle, nanotick::core::IdleKind::backoff);
  expect_error(minimal("[threads]\n[threads.gateway]\ncpu = 1\n"), "threads.gateway",
               "is a runner of the dedicated layout; mode is compact, whose runners are critical, aux, snapshotter");
  expect_error(minimal("[threads]\nmode = \"dedicated\"\n[threads.critical]\ncpu = 1\n"), "threads.critical",
               "is a runner of the compact layout");
  expect_error(minimal("[threads]\ncpus = [0]\n[threads.critical]\ncpu = 1\n"), "threads.critical.cpu",
               "pinned by threads.cpus[0] too");
  expect_error(minimal("[threads]\n[threads.critical]\ncpu = -2\n"), "threads.critical.cpu", "must be in [-1, 4095]");
  expect_error(minimal("[threads]\n[threads.aux]\nidle = \"nap\"\n"), "threads.aux.idle", "must be one of");
  expect_error(minimal("[threads]\n[threads.aux]\ncores = 2\n"), "threads.aux.cores", "unknown key");
}

TEST(ExchangeConfig, ErrorsNameTheKeyAndTheProblem) {
  expect_error(minimal("[server]\nmax_sessions = 0\n"), "server.max_sessions", "must be in [1, 4096], got 0");
  expect_error(minimal("[server]\nmax_sessions = \"many\"\n"), "server.max_sessions",
               "must be an integer, got a string");
  expect_error(minimal("[server]\nmax_sesions = 3\n"), "server.max_sesions", "unknown key");
  expect_error(minimal("[server]\nheartbeat_ms = 50\n"), "server.heartbeat_ms", "must be in [100, 60000]");
  expect_error(minimal("[server]\nmin_heartbeat_ms = 5000\nmax_heartbeat_ms = 100\n"), "server.min_heartbeat_ms",
               "must be <= max_heartbeat_ms");
  expect_error(minimal("[market_data]\nmtu = 100\n"), "market_data.mtu", "must be in [128, 65000], got 100");
  expect_error(minimal("[market_data]\nsnapshot = \"239.255.42.1:9201\"\n"), "market_data.snapshot", "must differ");
  expect_error(minimal("[journal]\nfsync = \"sometimes\"\n"), "journal.fsync",
               "must be one of \"every\", \"batch\", \"none\", got \"sometimes\"");
  expect_error(minimal("[journal]\nsegment_bytes = 65537\n"), "journal.segment_bytes", "multiple of 64");
  expect_error(minimal("[threads]\nidle = \"nap\"\n"), "threads.idle", "must be one of");
  expect_error(minimal("[threads]\ncpus = [0, -1]\n"), "threads.cpus[1]", "must be in [0, 4095], got -1");
  expect_error(minimal("[threads]\ncpus = 3\n"), "threads.cpus", "must be an array of integers");
  expect_error("server = 5\n" + without_tables(minimal(), "[server]"), "server", "must be a table, got an integer");
  expect_error(minimal("extra = 1\n"), "extra", "unknown key");
}

// [market_data] shm_path / shm_ring_packets (docs/EXCHANGE.md "Market data
// in shared memory"): off by default; the ring's packets must fit its slots.
// Addresses are checked by the loader, naming the file and the key: left to
// the sockets they failed at start-up without either (issue 30).
TEST(ExchangeConfig, EveryAddressIsCheckedWhereItsKeyIsKnown) {
  expect_error(minimal("[server]\norder_entry = \"127.0.0.1\"\n"), "server.order_entry", "found no ':'");
  expect_error(minimal("[server]\norder_entry = \"127.0.0.1:\"\n"), "server.order_entry", "port after ':' is missing");
  expect_error(minimal("[server]\norder_entry = \"127.0.0.1:70000\"\n"), "server.order_entry",
               "port 70000 is out of range");
  expect_error(minimal("[server]\norder_entry = \"localhost:9100\"\n"), "server.order_entry",
               "host names are not resolved");
  expect_error(minimal("[server]\norder_entry = \"127.0.0.1:91x\"\n"), "server.order_entry", "is not a number");
  expect_error(minimal("[market_data]\ninterface = \"eth0\"\n"), "market_data.interface",
               "\"eth0\" is not a dotted IPv4 address");
  expect_error(minimal("[market_data]\ninterface = \"127.0.0.1:1\"\n"), "market_data.interface", "not a dotted");
  expect_error(minimal("[market_data]\nincremental = \"10.0.0.1:9201\"\n"), "market_data.incremental",
               "is not a multicast group");
  expect_error(minimal("[market_data]\nincremental = \"239.255.42.1\"\n"), "market_data.incremental", "found no ':'");
  expect_error(minimal("[market_data]\nincremental = \"239.255.42.1:0\"\n"), "market_data.incremental",
               "port 0 is not allowed");
  expect_error(minimal("[market_data]\nsnapshot = \"127.0.0.1:9202\"\n"), "market_data.snapshot",
               "is not a multicast group");
  expect_error(minimal("[market_data]\nsnapshot = \"md.example:9202\"\n"), "market_data.snapshot", "not a dotted");
  // What stays allowed: port 0 for order entry (any free port) and the wildcard address.
  EXPECT_EQ(error_of(minimal("[server]\norder_entry = \"0.0.0.0:0\"\n")), "");
}

TEST(ExchangeConfig, MarketDataRingKeysAreChecked) {
  const nx::ExchangeConfig off = nx::parse_exchange_config(minimal(), "test.toml");
  EXPECT_EQ(off.market_data.shm_path, "");
  EXPECT_EQ(off.market_data.shm_ring_packets, 4096u);
  const nx::ExchangeConfig on = nx::parse_exchange_config(
      minimal("[market_data]\nshm_path = \"/tmp/md.sock\"\nshm_ring_packets = 16\n"), "test.toml");
  EXPECT_EQ(on.market_data.shm_path, "/tmp/md.sock");
  EXPECT_EQ(on.market_data.shm_ring_packets, 16u);
  expect_error(minimal("[market_data]\nshm_ring_packets = 1000\n"), "market_data.shm_ring_packets",
               "must be a power of two, got 1000");
  expect_error(minimal("[market_data]\nshm_ring_packets = 8\n"), "market_data.shm_ring_packets",
               "must be in [16, 65536], got 8");
  expect_error(minimal("[market_data]\nshm_path = \"/" + std::string(107, 'x') + "\"\n"), "market_data.shm_path",
               "longer than 107 bytes");
  // An mtu the ring's slots cannot hold: refused only when the ring is on.
  EXPECT_EQ(nx::parse_exchange_config(minimal("[market_data]\nmtu = 9000\n"), "test.toml").market_data.mtu, 9000u);
  expect_error(minimal("[market_data]\nmtu = 1473\nshm_path = \"/tmp/md.sock\"\n"), "market_data.mtu",
               "must be at most 1472 with market_data.shm_path set");
  EXPECT_EQ(nx::parse_exchange_config(minimal("[market_data]\nmtu = 1472\nshm_path = \"/tmp/md.sock\"\n"), "test.toml")
                .market_data.mtu,
            1472u);
  expect_error(minimal("[server]\nshm_path = \"/tmp/same.sock\"\n[market_data]\nshm_path = \"/tmp/same.sock\"\n"),
               "market_data.shm_path", "must differ from server.shm_path");
}

// [market_data] udp_sender: the publisher's thread without a ring, "aux" (forwarding
// from the ring) with one; "aux" needs the ring.
TEST(ExchangeConfig, UdpSenderKeyIsChecked) {
  EXPECT_FALSE(nx::parse_exchange_config(minimal(), "test.toml").market_data.udp_from_ring);
  // With the ring there, the auxiliary thread sends by default (the fast configuration).
  EXPECT_TRUE(nx::parse_exchange_config(minimal("[market_data]\nshm_path = \"/tmp/md.sock\"\n"), "test.toml")
                  .market_data.udp_from_ring);
  EXPECT_FALSE(nx::parse_exchange_config(
                   minimal("[market_data]\nshm_path = \"/tmp/md.sock\"\nudp_sender = \"publisher\"\n"), "test.toml")
                   .market_data.udp_from_ring);
  EXPECT_TRUE(nx::parse_exchange_config(minimal("[market_data]\nshm_path = \"/tmp/md.sock\"\nudp_sender = \"aux\"\n"),
                                        "test.toml")
                  .market_data.udp_from_ring);
  EXPECT_FALSE(nx::parse_exchange_config(minimal("[market_data]\nudp_sender = \"publisher\"\n"), "test.toml")
                   .market_data.udp_from_ring);
  expect_error(minimal("[market_data]\nudp_sender = \"aux\"\n"), "market_data.udp_sender",
               "needs market_data.shm_path");
  expect_error(minimal("[market_data]\nudp_sender = \"kernel\"\n"), "market_data.udp_sender",
               "must be \"publisher\" or \"aux\", got \"kernel\"");
  expect_error(minimal("[market_data]\nudp_sender = 1\n"), "market_data.udp_sender", "");
}

// minimal(extra) puts `extra` first: a [[clients]] in it is clients[0].
TEST(ExchangeConfig, InstrumentAndClientErrorsCarryTheirIndex) {
  const std::string one_client = "[[clients]]\nid = 7\ncredential = \"" + kCredential + "\"\n";
  expect_error(completed("[[instruments]]\nsymbol = \"A\"\n[[instruments]]\nsymbol = \"A\"\n" + one_client),
               "instruments[1].symbol", "duplicate symbol");
  expect_error(completed("[[instruments]]\nsymbol = \"A\"\ntick_size = 0\n" + one_client), "instruments[0].tick_size",
               "must be in [1,");
  expect_error(completed("[[instruments]]\ntick_size = 1\n" + one_client), "instruments[0].symbol",
               "missing (required)");
  expect_error(completed("[[instruments]]\nsymbol = \"A\"\nmax_pric = 5\n" + one_client), "instruments[0].max_pric",
               "unknown key");
  expect_error(completed(one_client), "instruments", "at least one [[instruments]]");
  expect_error(completed("[[instruments]]\nsymbol = \"A\"\n"), "clients", "at least one [[clients]]");
  expect_error(minimal("[[clients]]\nid = 7\ncredential = \"" + kCredential + "\"\n"), "clients[1].id",
               "duplicate client id 7");
  expect_error(minimal("[[clients]]\nid = 70000\ncredential = \"" + kCredential + "\"\n"), "clients[0].id",
               "must be in [1, 65535], got 70000");
  expect_error(minimal("[[clients]]\nid = 8\n"), "clients[0].credential", "missing (required)");
  expect_error(minimal("[[clients]]\nid = 8\ncredential = \"plaintext-password\"\n"), "clients[0].credential",
               "sha256:<salt hex>:<digest hex>");
  expect_error(minimal("[[clients]]\nid = 8\ncredential = \"" + kCredential + "\"\nrate_limit_per_s = 0\n"),
               "clients[0].rate_limit_per_s", "must be in [1,");
}

TEST(ExchangeConfig, EngineValidationNamesTheInstrument) {
  // A band not on the tick passes the per-key ranges and fails the engine's own check.
  const std::string e = error_of(minimal("[[instruments]]\nsymbol = \"B\"\ntick_size = 5\nmin_price = 3\n"));
  EXPECT_NE(e.find("test.toml: instruments: "), std::string::npos) << e;
  EXPECT_NE(e.find("B"), std::string::npos) << e;
}

TEST(ExchangeConfig, SyntaxErrorsGiveLineAndColumn) {
  const std::string e = error_of("[server\nmax_sessions = 3\n");
  EXPECT_NE(e.find("test.toml:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST(ExchangeConfig, MissingFileIsAClearError) {
  try {
    (void)nx::load_exchange_config("/nonexistent/exchange.toml");
    ADD_FAILURE() << "no error";
  } catch (const nanotick::config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/exchange.toml: cannot open config file"), std::string::npos);
  }
}

TEST(ExchangeConfig, FingerprintFollowsTheInstrumentTable) {
  const auto a = nx::parse_exchange_config(minimal(), "test.toml");
  const auto b = nx::parse_exchange_config(minimal("[server]\nmax_sessions = 3\n"), "test.toml");
  EXPECT_EQ(a.engine_fingerprint(), b.engine_fingerprint());  // sessions do not change the journal's meaning
  auto c = a;
  c.engine.instruments[0].tick_size = 2;
  EXPECT_NE(a.engine_fingerprint(), c.engine_fingerprint());
  auto d = a;
  d.engine.instruments[0].symbol = "AB";
  EXPECT_NE(a.engine_fingerprint(), d.engine_fingerprint());
}

}  // namespace
