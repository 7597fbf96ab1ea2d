// Fuzz target: the FIX gateway's TOML config text (src/fix/fix_gateway_config.*),
// loaded beside a real venue config and key file (written once, at start,
// into a directory of its own). Anything wrong must be a ConfigError naming
// the key (what nanotick-fix-gateway prints, exit 2); any other exception
// escaping is a finding (the error would not say what to fix).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "access/credential.hpp"
#include "config/toml_reader.hpp"
#include "fix/fix_gateway_config.hpp"

namespace {

std::string g_source;  // <dir>/fix-gateway.toml: what relative paths resolve against

// The venue the seeds name (fuzz/corpus/fix_gateway_config/): exchange.toml
// with client 1 (key keys/one.key) and an admin, client 9.
void write_venue(const std::filesystem::path& dir) {
  constexpr const char* kKey = "fuzz-key-0001-abcdefgh";
  std::filesystem::create_directories(dir / "keys");
  std::ofstream(dir / "keys" / "one.key") << kKey << "\n";
  std::filesystem::permissions(dir / "keys" / "one.key",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::ofstream(dir / "exchange.toml") << "[server]\norder_entry = \"127.0.0.1:9100\"\n"
                                          "[market_data]\ninterface = \"127.0.0.1\"\n"
                                          "incremental = \"239.255.42.1:9201\"\nsnapshot = \"239.255.42.2:9202\"\n"
                                          "[journal]\ndir = \"journal\"\n"
                                          "[[instruments]]\nsymbol = \"NTK1\"\ntick_size = 1\nmin_price = 1\n"
                                          "max_price = 1000000\nmax_order_qty = 1000\nmax_orders = 1024\n"
                                          "max_levels = 256\n"
                                          "[[clients]]\nid = 1\nname = \"one\"\ncredential = \""
                                       << nanotick::access::CredentialHash::make(kKey).to_string()
                                       << "\"\n[[clients]]\nid = 9\nname = \"ops\"\nrole = \"admin\"\ncredential = \""
                                       << nanotick::access::CredentialHash::make(kKey).to_string() << "\"\n";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto dir = std::filesystem::temp_directory_path() / ("nanotick-fuzz-fix-config-" + std::to_string(::getpid()));
  write_venue(dir);
  g_source = (dir / "fix-gateway.toml").string();
  static const std::filesystem::path kDir = dir;
  std::atexit([] { std::filesystem::remove_all(kDir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)nanotick::fix::parse_fix_gateway_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                                  g_source);
  } catch (const nanotick::config::ConfigError&) {
  }
  return 0;
}
