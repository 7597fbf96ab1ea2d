// Client credentials as the venue checks them: API keys (random, >= 128 bits,
// printable ASCII, at most proto::kCredentialBytes long: venue/api_key.hpp)
// stored in the exchange config only as
// "sha256:<salt hex>:<digest hex>", digest = SHA-256(salt || key), compared in
// constant time (libsodium). Why a fast hash and not a slow KDF: see
// docs/EXCHANGE.md "Config". Thread-safe (libsodium is initialised once).
// Only what checks keys links this (the exchange, the FIX gateway's own
// acceptor, nanotick-credential): a client sends its key and the venue checks it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace nanotick::access {

class CredentialHash {
 public:
  static constexpr std::size_t kSaltBytes = 16;
  static constexpr std::size_t kDigestBytes = 32;

  // Parses the stored form; throws std::invalid_argument saying what is wrong.
  static CredentialHash parse(std::string_view stored);
  // Hashes `key` with a fresh random salt.
  static CredentialHash make(std::string_view key);

  // True when `presented` (the Logon's credential field: the key, zero-padded)
  // is the key this hash was made from. Constant time in the key's content.
  bool matches(std::span<const char> presented) const noexcept;

  std::string to_string() const;

 private:
  std::array<std::uint8_t, kSaltBytes> salt_{};
  std::array<std::uint8_t, kDigestBytes> digest_{};
};

// A new random API key: 32 lowercase hex characters (128 bits).
std::string generate_api_key();

}  // namespace nanotick::access
