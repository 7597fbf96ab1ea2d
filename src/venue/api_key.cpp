#include "venue/api_key.hpp"

#include <array>
#include <stdexcept>

#include "proto/order_entry.hpp"

namespace nanotick::venue {

namespace {

// One line per demo client, as config/exchange.toml's comments give the keys.
constexpr std::array<DemoKey, 6> kDemoKeys{{
    {"mm1", "demo-mm1-8f8b6a269496be68"},
    {"mm2", "demo-mm2-f9a7f37633f49d84"},
    {"taker", "demo-taker-0d0f46037a20da9a"},
    {"random", "demo-random-346659511160e36b"},
    {"test", "demo-test-597aa5c0b324c331"},
    {"ops", "demo-ops-5c1e0a9b7d3f2e61"},
}};

}  // namespace

void validate_api_key(std::string_view key) {
  if (key.size() < 16 || key.size() > proto::kCredentialBytes)
    throw std::invalid_argument("API key must be 16 to " + std::to_string(proto::kCredentialBytes) +
                                " characters, got " + std::to_string(key.size()));
  for (const char c : key)
    if (c <= ' ' || c > '~') throw std::invalid_argument("API key must be printable ASCII without spaces");
}

std::span<const DemoKey> demo_keys() noexcept { return kDemoKeys; }

std::string_view demo_key_name(std::string_view key) noexcept {
  for (const DemoKey& d : kDemoKeys)
    if (key == d.key) return d.name;
  return {};
}

std::string demo_credential_warning(const std::string& where, std::string_view name) {
  return "warning: " + where + ": this is the demo's credential of \"" + std::string(name) +
         "\", whose API key is public in the nanotick repository: anyone can log on with it. For anything but the "
         "demo make a real one with ./nanotick credential";
}

}  // namespace nanotick::venue
