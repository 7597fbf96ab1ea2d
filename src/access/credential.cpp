#include "access/credential.hpp"

#include <sodium.h>

#include <cstring>
#include <stdexcept>

#include "venue/api_key.hpp"

namespace nanotick::access {

namespace {

void ensure_sodium() {
  static const int ok = sodium_init();
  if (ok < 0) throw std::runtime_error("libsodium failed to initialise");
}

template <std::size_t N>
void from_hex(std::string_view hex, std::array<std::uint8_t, N>& out, const char* what) {
  std::size_t len = 0;
  if (hex.size() != 2 * N || sodium_hex2bin(out.data(), N, hex.data(), hex.size(), nullptr, &len, nullptr) != 0 ||
      len != N)
    throw std::invalid_argument(std::string("credential ") + what + " must be " + std::to_string(2 * N) +
                                " hex characters");
}

template <std::size_t N>
std::string to_hex(const std::array<std::uint8_t, N>& in) {
  char buf[2 * N + 1];
  sodium_bin2hex(buf, sizeof buf, in.data(), N);
  return std::string(buf, 2 * N);
}

std::array<std::uint8_t, CredentialHash::kDigestBytes> digest(std::span<const std::uint8_t> salt,
                                                              std::span<const char> key) {
  crypto_hash_sha256_state st;
  crypto_hash_sha256_init(&st);
  crypto_hash_sha256_update(&st, salt.data(), salt.size());
  crypto_hash_sha256_update(&st, reinterpret_cast<const unsigned char*>(key.data()), key.size());
  std::array<std::uint8_t, CredentialHash::kDigestBytes> out{};
  crypto_hash_sha256_final(&st, out.data());
  return out;
}

}  // namespace

CredentialHash CredentialHash::parse(std::string_view stored) {
  constexpr std::string_view kPrefix = "sha256:";
  if (stored.substr(0, kPrefix.size()) != kPrefix)
    throw std::invalid_argument(
        "credential must look like sha256:<salt hex>:<digest hex> (make one with "
        "'./nanotick credential')");
  const std::string_view rest = stored.substr(kPrefix.size());
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument("credential must look like sha256:<salt hex>:<digest hex>");
  ensure_sodium();
  CredentialHash h;
  from_hex(rest.substr(0, colon), h.salt_, "salt");
  from_hex(rest.substr(colon + 1), h.digest_, "digest");
  return h;
}

CredentialHash CredentialHash::make(std::string_view key) {
  venue::validate_api_key(key);
  ensure_sodium();
  CredentialHash h;
  randombytes_buf(h.salt_.data(), h.salt_.size());
  h.digest_ = digest(h.salt_, std::span(key.data(), key.size()));
  return h;
}

bool CredentialHash::matches(std::span<const char> presented) const noexcept {
  // The key is the bytes before the first zero; the rest of the field must be zeros.
  std::size_t len = 0;
  while (len < presented.size() && presented[len] != '\0') ++len;
  for (std::size_t i = len; i < presented.size(); ++i)
    if (presented[i] != '\0') return false;
  const auto d = digest(salt_, presented.first(len));
  return sodium_memcmp(d.data(), digest_.data(), d.size()) == 0;
}

std::string CredentialHash::to_string() const { return "sha256:" + to_hex(salt_) + ":" + to_hex(digest_); }

std::string generate_api_key() {
  ensure_sodium();
  std::array<std::uint8_t, 16> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  return to_hex(bytes);
}

}  // namespace nanotick::access
