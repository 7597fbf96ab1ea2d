// The demo's credentials: API keys whose plaintext is public in this
// repository (config/exchange.toml's comments, config/trader-*.toml,
// config/keys/test.key), recognised by their stored hashes, listed here and
// nowhere else. Anyone who has read the repository can log on as a client
// whose credential is one of these, so a process that loads one warns
// (docs/EXCHANGE.md "Demo credentials"). Start-up code only; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "venue/credential.hpp"

namespace nanotick::venue {

struct DemoCredential {
  std::string_view name;    // the demo client's name in config/exchange.toml
  std::string_view stored;  // its credential there: "sha256:<salt>:<digest>"
};

std::span<const DemoCredential> demo_credentials() noexcept;

// The demo client whose stored credential `hash` is (the same salt and
// digest), else "".
std::string_view demo_credential_name(const CredentialHash& hash);

// The demo client whose API key `key` is, else "".
std::string_view demo_key_name(std::string_view key);

// The warning a process logs when it loads one: `where` names what loaded it
// ("config/exchange.toml: clients[4] (id 5)"), `name` the demo client.
std::string demo_credential_warning(const std::string& where, std::string_view name);

}  // namespace nanotick::venue
