// The demo's credentials as the exchange config stores them: the hashes of
// the API keys whose plaintext is public in this repository (venue/api_key.hpp
// lists the keys; config/exchange.toml's comments, config/trader-*.toml,
// config/keys/test.key hold them). Anyone who has read the repository can log
// on as a client whose credential is one of these, so the exchange warns when
// it loads one (docs/EXCHANGE.md "Demo credentials"; the warning's text is
// venue::demo_credential_warning, which clients log too). Start-up code only;
// thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "access/credential.hpp"

namespace nanotick::access {

struct DemoCredential {
  std::string_view name;    // the demo client's name in config/exchange.toml
  std::string_view stored;  // its credential there: "sha256:<salt>:<digest>"
};

std::span<const DemoCredential> demo_credentials() noexcept;

// The demo client whose stored credential `hash` is (the same salt and
// digest), else "".
std::string_view demo_credential_name(const CredentialHash& hash);

}  // namespace nanotick::access
