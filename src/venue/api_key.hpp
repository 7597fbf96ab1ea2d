// API keys as a client holds them (docs/EXCHANGE.md "Config"): the form a
// key must have to be sent in a Logon's credential field, and the demo's keys,
// whose plaintext is public in this repository. A client checks its own key's
// form and warns when it is a demo one; whether the key is right is the
// venue's to say (it answers BadCredentials): the hashes and their check are
// the exchange's (access/credential.hpp), so no client links libsodium.
// Start-up code only; thread-safe (no shared state).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace nanotick::venue {

// Throws std::invalid_argument unless `key` is 16..32 printable ASCII
// characters without spaces (what a Logon can carry and a config can hold).
void validate_api_key(std::string_view key);

struct DemoKey {
  std::string_view name;  // the demo client's name in config/exchange.toml
  std::string_view key;   // its API key, as config/trader-*.toml and config/keys/ hold it
};

// The demo's API keys (the same clients as access/demo_credentials.hpp's
// stored hashes; demo_credentials_test checks each key matches its hash).
std::span<const DemoKey> demo_keys() noexcept;

// The demo client whose API key `key` is, else "".
std::string_view demo_key_name(std::string_view key) noexcept;

// The warning a process logs when it loads a demo credential or key: `where`
// names what loaded it ("config/exchange.toml: clients[4] (id 5)"), `name`
// the demo client.
std::string demo_credential_warning(const std::string& where, std::string_view name);

}  // namespace nanotick::venue
