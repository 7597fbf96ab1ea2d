#include "access/demo_credentials.hpp"

#include <array>
#include <string>

namespace nanotick::access {

namespace {

// clang-format off
// One line per demo client, as config/exchange.toml stores it (the keys are
// in its comments and venue/api_key.cpp); demo_credentials_test checks the
// three agree.
constexpr std::array<DemoCredential, 6> kDemoCredentials{{
    {"mm1",    "sha256:8ad5c130be7ed70358d5241fef701775:229c98a448b46187b057620388cdd9ee2f4ef2c2075f18ee3221117651b4d923"},
    {"mm2",    "sha256:8e8df73b17783d04437ecff161eb9d64:0f179e481742ddd78b3812fdd54aebc52667a7e74364674cacd023ea20517dc8"},
    {"taker",  "sha256:81310d1f43d0dac695fd565856c1075f:fad21757c7d10fda0d12c7a985ed0cac2357d4f36082e73faab2bdda0690355b"},
    {"random", "sha256:fbe6a50f2634a130893979f24a318989:81498de389f0d86cf7c4c9f2606657a66d2293792667ffca0b80ff171d9f8999"},
    {"test",   "sha256:5c0f420b94fe2d748b858b24aea85ea6:c483aadbac0879cd4f319535ea562ccf1b9147853712d92da7931da0f1d5da91"},
    {"ops",    "sha256:ed1374de80c6253f68b5194eaf823393:51d5b9ac49e7a67ca5126f37e3672fb9ebf2fae388b1463b4e82fae6b7d97963"},
}};
// clang-format on

}  // namespace

std::span<const DemoCredential> demo_credentials() noexcept { return kDemoCredentials; }

std::string_view demo_credential_name(const CredentialHash& hash) {
  const std::string stored = hash.to_string();
  for (const DemoCredential& d : kDemoCredentials)
    if (stored == d.stored) return d.name;
  return {};
}

}  // namespace nanotick::access
