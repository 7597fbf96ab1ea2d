// The FIX gateway's config (docs/FIX.md "Sessions and credentials"): a good
// file loads with its paths resolved against its directory; every bad key is
// refused naming the file and the key -- unknown client, an admin, a client
// with two sessions, a CompID pair twice, a CompID that is not one, a key
// file missing, malformed or holding another client's key, a password hash
// missing or malformed, a bad address, an address beyond loopback without
// allow_remote, unknown keys, the trade_ledger key of older configs; the
// gateway's runner from [threads].
#include "fix/fix_gateway_config.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <unistd.h>

#include "access/credential.hpp"
#include "config/toml_reader.hpp"

namespace nanotick::fix {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey1 = "fix-test-key-0001-abcdef";
constexpr const char* kKey2 = "fix-test-key-0002-abcdef";
constexpr const char* kPassword = "fix-password-0001-abcdef";

class FixGatewayConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nanotick-fix-config-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "secrets");
    write("secrets/one.key", std::string(kKey1) + "\n");
    write("secrets/two.key", kKey2);
    write("secrets/bad.key", "short");
    write("secrets/shared.key", kKey1);  // a key file others may read: refused
    fs::permissions(dir_ / "secrets/shared.key", fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
    // Credentials made with the venue's own hashing (nanotick-credential's).
    write("exchange.toml", std::string(R"([server]
order_entry = "127.0.0.1:9100"
[market_data]
interface = "127.0.0.1"
incremental = "239.255.42.1:9201"
snapshot = "239.255.42.2:9202"
[journal]
dir = "journal"
[[instruments]]
symbol = "NTK1"
tick_size = 1
min_price = 1
max_price = 1000000
max_order_qty = 1000
max_orders = 1024
max_levels = 256
[[clients]]
id = 1
name = "one"
credential = ")") + access::CredentialHash::make(kKey1).to_string() +
                               R"("
[[clients]]
id = 2
name = "two"
credential = ")" + access::CredentialHash::make(kKey2).to_string() +
                               R"("
[[clients]]
id = 3
name = "keeps-orders"
cancel_on_disconnect = false
credential = ")" + access::CredentialHash::make(kKey2).to_string() +
                               R"("
[[clients]]
id = 9
name = "ops"
role = "admin"
credential = ")" + access::CredentialHash::make(kKey1).to_string() +
                               "\"\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ / rel) << text;
    if (rel.starts_with("secrets/")) fs::permissions(dir_ / rel, fs::perms::owner_read | fs::perms::owner_write);
  }

  std::string gateway(const std::string& sessions, const std::string& extra = "") {
    write("fix.toml",
          "[gateway]\nexchange_config = \"exchange.toml\"\nlisten = \"127.0.0.1:9878\"\n"
          "store_dir = \"run/fix\"\n" +
              extra + sessions);
    return (dir_ / "fix.toml").string();
  }
  static std::string session(const std::string& sender, std::uint32_t client, const std::string& key_file,
                             const std::string& target = "NANOTICK") {
    return "[[sessions]]\nsender_comp_id = \"" + sender + "\"\ntarget_comp_id = \"" + target +
           "\"\nclient_id = " + std::to_string(client) + "\nkey_file = \"" + key_file + "\"\npassword_hash = \"" +
           access::CredentialHash::make(kPassword).to_string() + "\"\n";
  }
  std::string refusal(const std::string& path) {
    try {
      (void)load_fix_gateway_config(path);
    } catch (const config::ConfigError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(FixGatewayConfigTest, ShouldLoadSessionsWithTheirKeysAndResolvePathsAgainstTheFile) {
  const auto c = load_fix_gateway_config(
      gateway(session("CLIENT1", 1, "secrets/one.key") + session("CLIENT2", 2, "secrets/two.key")));
  ASSERT_EQ(c.sessions.size(), 2u);
  EXPECT_EQ(c.sessions[0].sender_comp_id, "CLIENT1");
  EXPECT_EQ(c.sessions[0].target_comp_id, "NANOTICK");
  EXPECT_EQ(c.sessions[0].client_id, 1u);
  EXPECT_EQ(c.sessions[0].api_key, kKey1);  // the line's end stripped
  EXPECT_EQ(c.sessions[1].api_key, kKey2);
  EXPECT_EQ(c.exchange_config, (dir_ / "exchange.toml").string());
  EXPECT_EQ(c.store_dir, (dir_ / "run/fix").string());
  EXPECT_EQ(c.listen.port, 9878);
  EXPECT_FALSE(c.allow_remote);
  EXPECT_FALSE(c.venue.instruments.instruments.empty());  // the venue read (its client table checked, not kept)
  // The password's hash, not the password: it matches the password and nothing else.
  EXPECT_TRUE(c.sessions[0].password.matches(std::span<const char>(kPassword, std::strlen(kPassword))));
  EXPECT_FALSE(c.sessions[0].password.matches(std::span<const char>(kKey1, std::strlen(kKey1))));
  EXPECT_TRUE(c.warnings.empty());
}

TEST_F(FixGatewayConfigTest, ShouldListenBeyondLoopbackOnlyWhenAllowRemoteSaysSo) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  const auto with = [&](const std::string& listen, const std::string& extra) {
    write("listen.toml", "[gateway]\nexchange_config = \"exchange.toml\"\nlisten = \"" + listen +
                             "\"\nstore_dir = \"x\"\n" + extra + one);
    return (dir_ / "listen.toml").string();
  };
  for (const std::string listen : {"0.0.0.0:9878", "10.1.2.3:9878", "192.168.0.1:9878"}) {
    const std::string why = refusal(with(listen, ""));
    for (const std::string& word : {std::string("listen.toml"), std::string("gateway.listen"), "\"" + listen + "\"",
                                    std::string("allow_remote = true"), std::string("127.0.0.1:PORT")})
      EXPECT_NE(why.find(word), std::string::npos) << "expected '" << word << "' in: " << why;
    const auto c = load_fix_gateway_config(with(listen, "allow_remote = true\n"));
    EXPECT_TRUE(c.allow_remote);
    EXPECT_EQ(c.listen.to_string(), listen);
  }
  EXPECT_EQ(load_fix_gateway_config(with("127.0.0.2:9878", "")).listen.to_string(), "127.0.0.2:9878");
  EXPECT_NE(refusal(with("0.0.0.0:9878", "allow_remote = \"yes\"\n")).find("gateway.allow_remote"), std::string::npos);
}

TEST_F(FixGatewayConfigTest, ShouldRefuseASessionWithoutItsPasswordHash) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  const std::string bare = one.substr(0, one.find("password_hash"));
  std::string why = refusal(gateway(bare));
  EXPECT_NE(why.find("sessions[0].password_hash"), std::string::npos) << why;
  EXPECT_NE(why.find("fix.toml"), std::string::npos) << why;
  // The plaintext where the hash belongs: refused, saying how to make the hash.
  why = refusal(gateway(bare + "password_hash = \"" + kPassword + "\"\n"));
  for (const std::string word : {"fix.toml", "sessions[0].password_hash", kPassword, "./nanotick credential"})
    EXPECT_NE(why.find(word), std::string::npos) << "expected '" << word << "' in: " << why;
  why = refusal(gateway(bare + "password_hash = \"sha256:00:11\"\n"));
  EXPECT_NE(why.find("sessions[0].password_hash"), std::string::npos) << why;
}

TEST_F(FixGatewayConfigTest, ShouldRefuseEachBadSessionNamingTheKey) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  const struct {
    std::string sessions;
    std::string words;
  } cases[] = {
      {session("CLIENT7", 7, "secrets/one.key"), "sessions[0].client_id: no client 7"},
      {session("OPS", 9, "secrets/one.key"), "client 9 is an admin"},
      {one + session("OTHER", 1, "secrets/one.key"), "client 1 has two FIX sessions"},
      {one + session("CLIENT1", 2, "secrets/two.key"), "CLIENT1 -> NANOTICK is configured twice"},
      {session("HAS SPACE", 1, "secrets/one.key"), "sender_comp_id: \"HAS SPACE\" is not a CompID"},
      {session("A|B", 1, "secrets/one.key"), "is not a CompID"},
      {session("X", 1, "secrets/one.key", std::string(33, 'T')), "target_comp_id"},
      {session("CLIENT1", 1, "secrets/missing.key"), "key_file: "},
      {session("CLIENT1", 1, "secrets/shared.key"), "chmod 600"},
      {session("CLIENT1", 1, "secrets/bad.key"), "key_file"},
      {session("CLIENT1", 1, "secrets/two.key"), "the key is not client 1's"},
      {session("CLIENT1", 0, "secrets/one.key"), "client_id"},
      {one + "surprise = 1\n", "surprise"},
      {"", "at least one [[sessions]]"},
  };
  for (const auto& c : cases) {
    const std::string why = refusal(gateway(c.sessions));
    EXPECT_NE(why.find(c.words), std::string::npos) << "expected '" << c.words << "' in: " << why;
    EXPECT_NE(why.find("fix.toml"), std::string::npos) << why;
  }
}

TEST_F(FixGatewayConfigTest, ShouldRefuseABadGatewayTable) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  write("nogateway.toml", one);
  EXPECT_NE(refusal((dir_ / "nogateway.toml").string()).find("[gateway] table is required"), std::string::npos);
  write("badlisten.toml",
        "[gateway]\nexchange_config = \"exchange.toml\"\nlisten = \"nowhere\"\nstore_dir = \"x\"\n" + one);
  EXPECT_NE(refusal((dir_ / "badlisten.toml").string()).find("gateway.listen"), std::string::npos);
  write("noexchange.toml",
        "[gateway]\nexchange_config = \"missing.toml\"\nlisten = \"127.0.0.1:1\"\n"
        "store_dir = \"x\"\n" +
            one);
  EXPECT_NE(refusal((dir_ / "noexchange.toml").string()).find("gateway.exchange_config"), std::string::npos);
  write("garbage.toml", std::string("\x00\xff[[[", 5));
  EXPECT_NE(refusal((dir_ / "garbage.toml").string()).find("garbage.toml"), std::string::npos);
  EXPECT_NE(refusal(gateway(one, "extra_key = 1\n")).find("gateway.extra_key"), std::string::npos);
}

TEST_F(FixGatewayConfigTest, ShouldRefuseAClientWhoseOrdersOutliveItsSession) {
  const std::string why = refusal(gateway(session("KEEPER", 3, "secrets/two.key")));
  EXPECT_NE(why.find("cancel_on_disconnect = false"), std::string::npos) << why;
  EXPECT_NE(why.find("sessions[0].client_id"), std::string::npos) << why;
}

// The gateway asks the venue for the fills it missed (ReportsRequest): a
// config still naming the exchange's trade ledger is refused, saying so.
TEST_F(FixGatewayConfigTest, ShouldRefuseTheTradeLedgerKeyNamingWhatReplacedIt) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  for (const std::string value : {"\"run/journal/trades.ledger\"", "\"\""}) {
    const std::string why = refusal(gateway(one, "trade_ledger = " + value + "\n"));
    for (const std::string word :
         {"fix.toml", "gateway.trade_ledger", "asks the venue", "ReportsRequest", "remove the key"})
      EXPECT_NE(why.find(word), std::string::npos) << "expected '" << word << "' in: " << why;
  }
}

// One runner, "gateway", configured as the exchange's and the trader's are.
TEST_F(FixGatewayConfigTest, ShouldReadTheGatewayRunnerFromThreads) {
  const std::string one = session("CLIENT1", 1, "secrets/one.key");
  const auto plain = load_fix_gateway_config(gateway(one));
  EXPECT_EQ(plain.threads.runner("gateway").idle, core::IdleKind::backoff);
  EXPECT_EQ(plain.threads.runner("gateway").cpu, -1);
  const auto spin = load_fix_gateway_config(gateway(one + "[threads]\nidle = \"spin\"\ncpus = [3]\n"));
  EXPECT_EQ(spin.threads.runner("gateway").idle, core::IdleKind::spin);
  EXPECT_EQ(spin.threads.runner("gateway").cpu, 3);
  const auto own = load_fix_gateway_config(gateway(one + "[threads.gateway]\ncpu = 1\nidle = \"spin\"\n"));
  EXPECT_EQ(own.threads.runner("gateway").cpu, 1);
  EXPECT_EQ(own.threads.runner("gateway").idle, core::IdleKind::spin);
  // Its deepest wait is QuickFIX's select(): yield and block are not offered.
  for (const std::string bad :
       {"[threads]\nidle = \"block\"\n", "[threads]\nidle = \"yield\"\n", "[threads.engine]\ncpu = 1\n"}) {
    const std::string why = refusal(gateway(one + bad));
    EXPECT_NE(why.find("threads"), std::string::npos) << why;
  }
}

TEST(FixCompId, ShouldAcceptPrintableIdsUpTo32Characters) {
  EXPECT_TRUE(valid_comp_id("NANOTICK"));
  EXPECT_TRUE(valid_comp_id(std::string(32, 'A')));
  for (const std::string& bad : {std::string(), std::string(33, 'A'), std::string("A B"), std::string("A|B"),
                                 std::string("A\x01"
                                             "B",
                                             3),
                                 std::string("caf\xc3\xa9")})
    EXPECT_FALSE(valid_comp_id(bad)) << bad;
}

}  // namespace
}  // namespace nanotick::fix

namespace nanotick::fix {
namespace {

TEST(ShippedFixGatewayConfig, ShouldLoadAgainstTheShippedExchangeConfig) {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../config/fix-gateway.toml";
  const FixGatewayConfig c = load_fix_gateway_config(path.string());
  ASSERT_EQ(c.sessions.size(), 1u);
  EXPECT_EQ(c.sessions[0].sender_comp_id, "CLIENT1");
  EXPECT_EQ(c.sessions[0].client_id, 5u);
  EXPECT_EQ(c.listen.to_string(), "127.0.0.1:9878");
  EXPECT_FALSE(c.allow_remote);
  // Its password is the demo's, public in config/keys/fix-client1.key: it works, and it is warned about.
  std::ifstream in(path.parent_path() / "keys/fix-client1.key");
  std::string demo;
  std::getline(in, demo);
  EXPECT_EQ(demo, kDemoFixPassword);
  EXPECT_TRUE(c.sessions[0].password.matches(std::span<const char>(demo.data(), demo.size())));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("password_hash is the demo's"), std::string::npos) << c.warnings[0];
}

}  // namespace
}  // namespace nanotick::fix
