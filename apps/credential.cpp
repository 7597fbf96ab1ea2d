// nanotick-credential: makes a client API key and the hash the exchange
// config stores for it (docs/EXCHANGE.md "Config"). The key goes to the
// client (its trader config), the hash into [[clients]].credential.
// Scripts (tools/, the Python tests) call this binary rather than hashing
// themselves, so the stored form is written in one place (venue/credential):
//   --key K --stored   prints only the stored form of K, one line
//   --key K --check S  exit 0 when K is the key of stored form S, 1 when not
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "access/credential.hpp"
#include "venue/api_key.hpp"

int main(int argc, char** argv) {
  using namespace nanotick::access;
  using nanotick::venue::validate_api_key;
  CLI::App app{"Make a client API key and its stored hash", "nanotick-credential"};
  std::string key;
  std::string check;
  bool stored_only = false;
  app.add_option("--key,-k", key, "hash this key instead of generating one (16-32 printable ASCII chars)");
  app.add_flag("--stored", stored_only, "print only the stored form (sha256:<salt>:<digest>), for scripts");
  auto* check_opt =
      app.add_option("--check", check, "exit 0 when --key is the key of this stored form, 1 when not (2: malformed)");
  check_opt->needs(app.get_option("--key"))->excludes("--stored");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!check.empty()) {
      validate_api_key(key);
      return CredentialHash::parse(check).matches(std::span<const char>(key.data(), key.size())) ? 0 : 1;
    }
    if (key.empty()) key = generate_api_key();
    const CredentialHash hash = CredentialHash::make(key);
    if (stored_only) {
      std::printf("%s\n", hash.to_string().c_str());
      return 0;
    }
    std::printf("api_key    = \"%s\"   # the client's trader config\n", key.c_str());
    std::printf("credential = \"%s\"   # the exchange config, [[clients]]\n", hash.to_string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-credential: error: %s\n", e.what());
    return 2;
  }
}
