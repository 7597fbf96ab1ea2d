// Client credentials: stored as salted SHA-256, matched in constant time,
// every malformed stored form refused with a specific message (the API
// key's own form: tests/unit/venue/api_key_test.cpp).
#include "access/credential.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nv = nanotick::access;

namespace {

std::array<char, 32> field(const std::string& key) {
  std::array<char, 32> f{};
  std::memcpy(f.data(), key.data(), std::min(key.size(), f.size()));
  return f;
}

TEST(Credential, MadeHashMatchesItsKeyOnly) {
  const std::string key = nv::generate_api_key();
  EXPECT_EQ(key.size(), 32u);
  const auto h = nv::CredentialHash::make(key);
  EXPECT_TRUE(h.matches(field(key)));
  std::string other = key;
  other[5] = other[5] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(h.matches(field(other)));
  EXPECT_FALSE(h.matches(field(key.substr(0, 31))));  // a prefix is not the key
  EXPECT_FALSE(h.matches(field("")));
}

TEST(Credential, BytesAfterTheTerminatorMustBeZero) {
  const std::string key = "demo-key-0123456789";
  const auto h = nv::CredentialHash::make(key);
  auto f = field(key);
  EXPECT_TRUE(h.matches(f));
  f[30] = 'x';
  EXPECT_FALSE(h.matches(f));
}

TEST(Credential, SaltMakesEqualKeysHashDifferently) {
  const auto a = nv::CredentialHash::make("same-key-for-both-1");
  const auto b = nv::CredentialHash::make("same-key-for-both-1");
  EXPECT_NE(a.to_string(), b.to_string());
  EXPECT_TRUE(a.matches(field("same-key-for-both-1")));
  EXPECT_TRUE(b.matches(field("same-key-for-both-1")));
}

TEST(Credential, StoredFormRoundTrips) {
  const auto h = nv::CredentialHash::make("round-trip-key-000");
  const auto back = nv::CredentialHash::parse(h.to_string());
  EXPECT_EQ(back.to_string(), h.to_string());
  EXPECT_TRUE(back.matches(field("round-trip-key-000")));
}

TEST(Credential, KnownVector) {
  // salt = 16 zero bytes, key "abcdefghijklmnop": the digest is SHA-256(salt || key),
  // computed independently with Python's hashlib.
  const auto h = nv::CredentialHash::parse(
      "sha256:00000000000000000000000000000000:"
      "60e14a70be9097fe0745a080cd16d3b1a1597f887f60fcde7f5fee4e44433f2e");
  EXPECT_TRUE(h.matches(field("abcdefghijklmnop")));
  EXPECT_FALSE(h.matches(field("abcdefghijklmnoq")));
}

TEST(Credential, BadStoredFormsAreRefusedWithAReason) {
  const char* bad[] = {
      "",
      "md5:00:00",
      "sha256:",
      "sha256:00000000000000000000000000000000",              // no digest
      "sha256:0000:0000000000000000000000000000000000000000000000000000000000000000",  // short salt
      "sha256:00000000000000000000000000000000:00",           // short digest
      "sha256:zz000000000000000000000000000000:0000000000000000000000000000000000000000000000000000000000000000",
  };
  for (const char* s : bad) {
    try {
      (void)nv::CredentialHash::parse(s);
      ADD_FAILURE() << "accepted: " << s;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("credential"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
