// Fuzz target: the trader's TOML config text. Anything wrong must be a
// ConfigError naming the key; any other exception escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/toml_reader.hpp"
#include "trading/trader_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)nanotick::trading::parse_trader_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                                 "fuzz.toml");
  } catch (const nanotick::config::ConfigError&) {
  }
  return 0;
}
