#include "fix/fix_gateway_config.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <utility>

#include "access/client_table.hpp"
#include "access/credential.hpp"
#include "config/thread_layout_reader.hpp"
#include "config/toml_reader.hpp"
#include "venue/api_key.hpp"
#include "venue/key_file.hpp"

namespace nanotick::fix {

namespace {

std::string resolve(const std::string& source, const std::string& given) {
  const std::filesystem::path p(given);
  return p.is_absolute() ? given : (std::filesystem::path(source).parent_path() / p).string();
}

// The venue's key file reader: a regular file its owner alone may read
// (docs/EXCHANGE.md "Key files"), at most 1 MiB, its first line the key.
std::string read_key(config::TableReader& t, const std::string& source) {
  const std::string path = resolve(source, t.required_string("key_file"));
  std::string key;
  try {
    key = venue::read_key_file(path);
  } catch (const venue::KeyFileError& e) {
    t.fail("key_file", e.what());
  }
  try {
    venue::validate_api_key(key);
  } catch (const std::exception& e) {
    t.fail("key_file", path + ": " + e.what());
  }
  return key;
}

}  // namespace

const config::ThreadRoles& fix_gateway_thread_roles() {
  // One runner in either mode. Spin or backoff only: the gateway's deepest
  // wait is QuickFIX's select() inside its own duty cycle (fix_gateway_agent.hpp),
  // which a yielding or blocking runner would add nothing to.
  static const config::ThreadRoles roles{
      .compact = {"gateway"}, .dedicated = {"gateway"}, .critical = {"gateway"}, .idle_kinds = {"spin", "backoff"}};
  return roles;
}

bool is_loopback(net::Ipv4Address ip) noexcept { return (ip.value >> 24) == 127; }

bool valid_comp_id(const std::string& id) noexcept {
  if (id.empty() || id.size() > 32) return false;
  for (const char c : id)
    if (c <= ' ' || c > '~' || c == '|') return false;
  return true;
}

FixGatewayConfig load_fix_gateway_config(const std::string& path) {
  return parse_fix_gateway_config(config::read_config_file(path), path);
}

FixGatewayConfig parse_fix_gateway_config(std::string_view text, const std::string& path) {
  FixGatewayConfig c;
  c.source = path;
  const toml::table root_table = config::parse_toml(text, path);
  config::TableReader root(root_table, path, "");
  auto gateway = root.table("gateway");
  if (!gateway) root.fail("gateway", "the [gateway] table is required (exchange_config, listen, store_dir)");
  config::TableReader& g = *gateway;
  c.exchange_config = resolve(path, g.required_string("exchange_config"));
  // The venue's clients too (access/client_table.hpp): each session's client
  // and key are checked against them here.
  access::ClientTable venue_clients;
  try {
    c.venue = venue::load_venue_config(c.exchange_config);
    venue_clients = access::load_client_table(c.exchange_config);
  } catch (const std::exception& e) {
    g.fail("exchange_config", e.what());
  }
  const std::string listen = g.required_string("listen");
  try {
    c.listen = net::parse_socket_address(listen);
  } catch (const std::exception& e) {
    g.fail("listen", e.what());
  }
  c.allow_remote = g.boolean("allow_remote", false);
  // Anyone who reaches the port can try passwords: by default only this host can.
  if (!is_loopback(c.listen.ip) && !c.allow_remote)
    g.fail("listen",
           "\"" + listen + "\" is not a loopback address (127.0.0.0/8): write 127.0.0.1:PORT, or set " +
               "allow_remote = true in [gateway] to accept FIX clients from other hosts (docs/FIX.md \"Listening\")");
  c.store_dir = resolve(path, g.required_string("store_dir"));
  c.data_dictionary = resolve(path, g.string("data_dictionary", "../build/fix/FIX44.xml"));
  // An older config's way to find missed fills. Refused by name, not as an
  // unknown key, so that whoever upgrades learns what replaced it.
  constexpr std::string_view kAbsent("\0", 1);
  if (g.string("trade_ledger", kAbsent) != kAbsent)
    g.fail("trade_ledger",
           "is no longer read: the gateway now asks the venue at logon for the fills it missed (ReportsRequest, "
           "docs/PROTOCOL.md \"Missed reports\"; docs/FIX.md \"Restarts\"), so it needs no file of the exchange's; "
           "remove the key");
  g.finish();
  // The gateway's one runner ([threads], as the exchange and the trader have):
  // its CPU and idle strategy (docs/FIX.md "Shape").
  const toml::table no_threads;
  auto threads = root.table("threads");
  c.threads = config::read_thread_layout(threads ? *threads : config::TableReader(no_threads, path, "threads"),
                                         fix_gateway_thread_roles());

  const std::vector<config::TableReader> sessions = root.tables("sessions");
  if (sessions.empty()) root.fail("sessions", "at least one [[sessions]] table is required");
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::uint32_t> clients;
  for (config::TableReader t : sessions) {
    FixSessionConfig s;
    s.sender_comp_id = t.required_string("sender_comp_id");
    s.target_comp_id = t.required_string("target_comp_id");
    for (const auto& [key, id] : {std::pair{"sender_comp_id", s.sender_comp_id}, {"target_comp_id", s.target_comp_id}})
      if (!valid_comp_id(id))
        t.fail(key, "\"" + id + "\" is not a CompID: 1..32 printable ASCII characters, no space, '|' or SOH");
    if (!pairs.emplace(s.sender_comp_id, s.target_comp_id).second)
      t.fail("sender_comp_id", "the pair " + s.sender_comp_id + " -> " + s.target_comp_id + " is configured twice");
    s.client_id = static_cast<std::uint32_t>(t.required_integer("client_id", 1, 65535));
    const access::ClientConfig* client = venue_clients.find_client(s.client_id);
    if (client == nullptr) t.fail("client_id", "no client " + std::to_string(s.client_id) + " in " + c.exchange_config);
    if (client->admin) t.fail("client_id", "client " + std::to_string(s.client_id) + " is an admin: FIX trades only");
    if (!client->cancel_on_disconnect)
      t.fail("client_id", "client " + std::to_string(s.client_id) +
                              " has cancel_on_disconnect = false: the gateway needs it true, so that the orders "
                              "open when its venue session ends are known to be cancelled (docs/FIX.md)");
    if (!clients.insert(s.client_id).second)
      t.fail("client_id", "client " + std::to_string(s.client_id) + " has two FIX sessions (the venue allows it one)");
    const std::string password_hash = t.required_string("password_hash");
    try {
      s.password = access::CredentialHash::parse(password_hash);
    } catch (const std::exception& e) {
      t.fail("password_hash", "\"" + password_hash + "\": " + e.what() +
                                  "; the hash of the FIX client's Password (554), from ./nanotick credential");
    }
    if (s.password.matches(std::span<const char>(kDemoFixPassword.data(), kDemoFixPassword.size())))
      c.warnings.push_back(path + ": sessions[" + std::to_string(c.sessions.size()) + "] (" + s.sender_comp_id +
                           "): password_hash is the demo's, whose password is public in the nanotick repository "
                           "(config/keys/fix-client1.key): anyone who reaches the port can log on as this session. "
                           "For anything but the demo make your own with ./nanotick credential");
    s.api_key = read_key(t, path);
    if (!client->credential.matches(s.api_key))
      t.fail("key_file", "the key is not client " + std::to_string(s.client_id) + "'s in " + c.exchange_config);
    t.finish();
    c.sessions.push_back(std::move(s));
  }
  root.finish();
  return c;
}

}  // namespace nanotick::fix
