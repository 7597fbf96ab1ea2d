// The FIX gateway's config (docs/FIX.md "Sessions and credentials"): the
// venue it fronts, where it listens (loopback unless allow_remote says
// otherwise), where QuickFIX keeps its session stores, and the FIX sessions it
// accepts, each with the hash of the password its Logon must carry and mapped
// to one nanotick client whose API key it logs on with. Start-up code: throws
// config::ConfigError naming the file and the key; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "access/credential.hpp"
#include "config/thread_layout_reader.hpp"
#include "core/thread_layout.hpp"
#include "net/socket_address.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::fix {

struct FixSessionConfig {
  std::string sender_comp_id;  // the FIX client's SenderCompID (our TargetCompID)
  std::string target_comp_id;  // the gateway's CompID as the client addresses it
  std::uint32_t client_id = 0;  // the nanotick client this session trades as
  std::string api_key;          // that client's key, read from key_file (checked against the venue's credential)
  // The hash of the Password (554) the FIX client's Logon must carry
  // (password_hash, made by ./nanotick credential: the venue's own salted
  // SHA-256). The plaintext is the client's only.
  access::CredentialHash password;
};

struct FixGatewayConfig {
  std::string source;             // the file read
  std::string exchange_config;    // the venue's config, resolved against the file's directory
  venue::VenueConfig venue;       // loaded from it: clients, instruments, order-entry address
  net::SocketAddress listen;      // where FIX clients connect: a loopback address unless allow_remote
  bool allow_remote = false;      // listen may be a non-loopback address (0.0.0.0: every interface)
  std::string store_dir;          // QuickFIX's file stores and the gateway's order map (resolved)
  std::string data_dictionary;    // FIX44.xml (resolved; ./nanotick setup fetches it to build/fix/)
  core::ThreadLayout threads;     // [threads]: the gateway runner's CPU and idle strategy (role "gateway")
  std::vector<FixSessionConfig> sessions;
  // What the gateway logs at start as "warning: ...": a session whose
  // password is the demo's (public in config/keys/fix-client1.key).
  std::vector<std::string> warnings;
};

// The demo session's FIX password (config/keys/fix-client1.key): public, so
// a config whose password_hash is its hash is warned about.
inline constexpr std::string_view kDemoFixPassword = "demo-fix-c213b4b04462f48f4b63";

// CompIDs: 1..32 characters, printable ASCII, no space, no '|' and no SOH.
bool valid_comp_id(const std::string& id) noexcept;

// 127.0.0.0/8.
bool is_loopback(net::Ipv4Address ip) noexcept;

// The gateway's runner roles for its [threads] table (one, "gateway").
const config::ThreadRoles& fix_gateway_thread_roles();

FixGatewayConfig load_fix_gateway_config(const std::string& path);
// The same from the file's text; `path` names it in errors and is what the
// relative paths in it (exchange_config, key_file, store_dir) resolve against.
FixGatewayConfig parse_fix_gateway_config(std::string_view text, const std::string& path);

}  // namespace nanotick::fix
