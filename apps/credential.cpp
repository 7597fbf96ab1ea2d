// nanotick-credential: makes a client API key and the hash the exchange
// config stores for it (docs/EXCHANGE.md "Config"). The key goes to the
// client (its trader config), the hash into [[clients]].credential.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "venue/credential.hpp"

int main(int argc, char** argv) {
  using namespace nanotick::venue;
  CLI::App app{"Make a client API key and its stored hash", "nanotick-credential"};
  std::string key;
  app.add_option("--key,-k", key, "hash this key instead of generating one (16-32 printable ASCII chars)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (key.empty()) key = generate_api_key();
    const CredentialHash hash = CredentialHash::make(key);
    std::printf("api_key    = \"%s\"   # the client's trader config\n", key.c_str());
    std::printf("credential = \"%s\"   # the exchange config, [[clients]]\n", hash.to_string().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-credential: error: %s\n", e.what());
    return 2;
  }
}
