// API keys as a client holds them: the form a Logon can carry, and the demo's
// public keys recognised by their plaintext (no hashing: a client does not
// link the venue's credentials; tests/unit/access/demo_credentials_test.cpp
// checks each key is the one its stored hash was made from).
#include "venue/api_key.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "config/toml_reader.hpp"

namespace nv = nanotick::venue;
namespace fs = std::filesystem;

namespace {

const fs::path kConfigDir = fs::path(__FILE__).parent_path() / "../../../config";

TEST(ApiKey, Rules) {
  EXPECT_THROW(nv::validate_api_key("short"), std::invalid_argument);
  EXPECT_THROW(nv::validate_api_key(std::string(33, 'a')), std::invalid_argument);
  EXPECT_THROW(nv::validate_api_key("has a space in it!!"), std::invalid_argument);
  EXPECT_THROW(nv::validate_api_key(std::string("tab\tinside-the-key")), std::invalid_argument);
  EXPECT_NO_THROW(nv::validate_api_key(std::string(16, 'k')));
  EXPECT_NO_THROW(nv::validate_api_key(std::string(32, '~')));
  for (const nv::DemoKey& d : nv::demo_keys()) EXPECT_NO_THROW(nv::validate_api_key(d.key)) << d.name;
}

TEST(ApiKey, EveryCommittedDemoKeyIsRecognised) {
  for (const char* trader : {"trader-mm1.toml", "trader-mm2.toml", "trader-taker.toml", "trader-random.toml"}) {
    const toml::table t =
        nanotick::config::parse_toml(nanotick::config::read_config_file((kConfigDir / trader).string()), trader);
    const std::string key = t["session"]["api_key"].value_or(std::string());
    ASSERT_FALSE(key.empty()) << trader;
    const std::string name = std::string(trader).substr(7, std::string(trader).size() - 12);  // trader-NAME.toml
    EXPECT_EQ(nv::demo_key_name(key), name) << trader;
  }
  std::ifstream in(kConfigDir / "keys/test.key");
  std::string key;
  std::getline(in, key);
  EXPECT_EQ(nv::demo_key_name(key), "test");
  EXPECT_EQ(nv::demo_key_name("demo-ops-5c1e0a9b7d3f2e61"), "ops");  // the admin's, in the config's comment
}

TEST(ApiKey, AnyOtherKeyIsNotADemoOne) {
  EXPECT_EQ(nv::demo_key_name("0123456789abcdef0123456789abcdef"), "");
  EXPECT_EQ(nv::demo_key_name("demo-ops-5c1e0a9b7d3f2e6"), "");   // a prefix is not the key
  EXPECT_EQ(nv::demo_key_name("demo-ops-5c1e0a9b7d3f2e61x"), "");  // nor a longer one
  EXPECT_EQ(nv::demo_key_name(std::string(40, 'x')), "");
}

TEST(ApiKey, TheDemoWarningNamesWhereTheClientAndTheFix) {
  const std::string w = nv::demo_credential_warning("config/exchange.toml: clients[5] (id 90)", "ops");
  EXPECT_NE(w.find("config/exchange.toml: clients[5] (id 90)"), std::string::npos) << w;
  EXPECT_NE(w.find("\"ops\""), std::string::npos) << w;
  EXPECT_NE(w.find("public"), std::string::npos) << w;
  EXPECT_NE(w.find("./nanotick credential"), std::string::npos) << w;
}

}  // namespace
