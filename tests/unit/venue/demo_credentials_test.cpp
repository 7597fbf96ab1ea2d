// The demo's credentials (issue 30): every credential of the shipped
// config/exchange.toml is on the list, and every API key committed beside it
// (the traders' configs, config/keys/test.key) is recognised as one of them;
// a fresh key or hash is not.
#include "venue/demo_credentials.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "config/toml_reader.hpp"
#include "venue/credential.hpp"
#include "venue/venue_config.hpp"

namespace nv = nanotick::venue;
namespace fs = std::filesystem;

namespace {

const fs::path kConfigDir = fs::path(__FILE__).parent_path() / "../../../config";

TEST(DemoCredentials, EveryCredentialOfTheShippedConfigIsListedUnderItsClientsName) {
  const nv::VenueConfig v = nv::load_venue_config((kConfigDir / "exchange.toml").string());
  std::set<std::string> seen;
  for (const nv::ClientConfig& c : v.clients) {
    EXPECT_EQ(nv::demo_credential_name(c.credential), c.name) << "client " << c.id;
    seen.insert(c.name);
  }
  EXPECT_EQ(seen.size(), nv::demo_credentials().size()) << "a listed credential the shipped config no longer has";
}

TEST(DemoCredentials, EveryCommittedKeyIsRecognised) {
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

TEST(DemoCredentials, AFreshKeyOrHashIsNotADemoOne) {
  const std::string key = nv::generate_api_key();
  EXPECT_EQ(nv::demo_key_name(key), "");
  EXPECT_EQ(nv::demo_credential_name(nv::CredentialHash::make(key)), "");
  // The demo key hashed with another salt is another stored credential: recognised by its hash only.
  EXPECT_EQ(nv::demo_credential_name(nv::CredentialHash::make("demo-ops-5c1e0a9b7d3f2e61")), "");
  EXPECT_EQ(nv::demo_key_name("demo-ops-5c1e0a9b7d3f2e6"), "");  // a prefix is not the key
  EXPECT_EQ(nv::demo_key_name(std::string(40, 'x')), "");        // longer than a Logon carries
}

TEST(DemoCredentials, TheWarningNamesWhereTheClientAndTheFix) {
  const std::string w = nv::demo_credential_warning("config/exchange.toml: clients[5] (id 90)", "ops");
  EXPECT_NE(w.find("config/exchange.toml: clients[5] (id 90)"), std::string::npos) << w;
  EXPECT_NE(w.find("\"ops\""), std::string::npos) << w;
  EXPECT_NE(w.find("public"), std::string::npos) << w;
  EXPECT_NE(w.find("./nanotick credential"), std::string::npos) << w;
}

}  // namespace
