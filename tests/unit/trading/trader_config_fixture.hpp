// The fixture the trader config tests share (trader_config_test.cpp: what
// is read and from where; trader_config_errors_test.cpp: every kind of bad
// input): a directory per test holding an exchange config, and trader texts
// built from the parts every trader must give.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "config/toml_reader.hpp"
#include "support/toml_text.hpp"
#include "trading/trader_config.hpp"

namespace nt = nanotick::trading;
namespace fs = std::filesystem;

namespace trader_config_fixture {

inline const fs::path kConfigDir = fs::path(__FILE__).parent_path() / "../../../config";
inline constexpr const char* kKey = "test-key-0123456789abcdef";

inline void write_file(const fs::path& path, const std::string& text) {
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
inline std::string completed(const std::string& text) {
  const std::string t =
      nanotick::testing::with_defaults(text, "[risk]", {"max_open_notional = 1000000000", "max_loss = 10000000"});
  return nanotick::testing::with_defaults(t, "[[instruments]]",
                                          {"max_order_qty = 100", "max_position = 1000",
                                           "max_open_notional = 100000000", "max_loss = 1000000", "price_band = 100"});
}

// A valid trader: `strategy`, [session] for client 9, then `rest` (more
// tables, [[instruments]]), completed with the required risk limits.
inline std::string trader(const std::string& strategy, const std::string& rest, const std::string& trader_extra = "",
                          const std::string& session_extra = "") {
  return completed("[trader]\nexchange_config = \"exchange.toml\"\nstrategy = \"" + strategy + "\"\n" + trader_extra +
                   "\n[session]\nclient_id = 9\napi_key = \"" + kKey + "\"\n" + session_extra + "\n" + rest);
}

// `text` with the first `from` replaced by `to` (which must be there).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

inline std::string mm(const std::string& instrument_extra, const std::string& symbol = "AAA") {
  return trader("market_maker", "[[instruments]]\nsymbol = \"" + symbol + "\"\n" + instrument_extra);
}

}  // namespace trader_config_fixture
