// The demo's credentials (issue 30): every credential of the shipped
// config/exchange.toml is on the list of stored hashes, and every demo API
// key a client recognises (venue/api_key.hpp) is the key its client's hash
// was made from; a fresh key or hash is not a demo one.
#include "access/demo_credentials.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "access/client_table.hpp"
#include "access/credential.hpp"
#include "venue/api_key.hpp"

namespace na = nanotick::access;
namespace nv = nanotick::venue;
namespace fs = std::filesystem;

namespace {

const fs::path kConfigDir = fs::path(__FILE__).parent_path() / "../../../config";

// As a Logon carries a key: zero-padded to the credential field.
std::array<char, 32> field(std::string_view key) {
  std::array<char, 32> f{};
  std::memcpy(f.data(), key.data(), std::min(key.size(), f.size()));
  return f;
}

TEST(DemoCredentials, EveryCredentialOfTheShippedConfigIsListedUnderItsClientsName) {
  const na::ClientTable t = na::load_client_table((kConfigDir / "exchange.toml").string());
  std::set<std::string> seen;
  for (const na::ClientConfig& c : t.clients) {
    EXPECT_EQ(na::demo_credential_name(c.credential), c.name) << "client " << c.id;
    seen.insert(c.name);
  }
  EXPECT_EQ(seen.size(), na::demo_credentials().size()) << "a listed credential the shipped config no longer has";
}

TEST(DemoCredentials, EachDemoKeyIsTheKeyOfItsClientsStoredHash) {
  ASSERT_EQ(nv::demo_keys().size(), na::demo_credentials().size());
  for (const nv::DemoKey& k : nv::demo_keys()) {
    bool found = false;
    for (const na::DemoCredential& d : na::demo_credentials()) {
      if (d.name != k.name) continue;
      found = true;
      EXPECT_TRUE(na::CredentialHash::parse(d.stored).matches(field(k.key))) << k.name;
    }
    EXPECT_TRUE(found) << k.name << " has a demo key but no stored demo credential";
  }
}

TEST(DemoCredentials, AFreshHashIsNotADemoOne) {
  EXPECT_EQ(na::demo_credential_name(na::CredentialHash::make(na::generate_api_key())), "");
  // The demo key hashed with another salt is another stored credential: recognised by its hash only.
  EXPECT_EQ(na::demo_credential_name(na::CredentialHash::make("demo-ops-5c1e0a9b7d3f2e61")), "");
}

}  // namespace
