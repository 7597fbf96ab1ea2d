// Fuzz target: the exchange's TOML config text. Anything wrong must be a
// ConfigError naming the key (what the exchange prints, exit 2); any other
// exception escaping is a finding (the error would not say what to fix).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/toml_reader.hpp"
#include "exchange/exchange_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)nanotick::exchange::parse_exchange_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                                    "fuzz.toml");
  } catch (const nanotick::config::ConfigError&) {
  }
  return 0;
}
