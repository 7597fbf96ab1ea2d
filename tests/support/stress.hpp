// Helpers shared by the concurrency stress tests: how many items to push
// through (NANOTICK_STRESS_ITEMS), and a cheap bijective mix to derive check
// words from sequence numbers. Stateless functions, safe from any thread.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <system_error>

namespace nanotick::test {

#if defined(NANOTICK_SANITIZED)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// The item count for a stress test: NANOTICK_STRESS_ITEMS when set, else
// `normal`, or `sanitized` in a sanitizer build (TSan, or ASan+UBSan: 10x+
// slower). A set value must be a whole number from 1 to `max`; anything else
// ("", "12abc", "-1", "0", too large) aborts the test binary with a message
// naming the variable, rather than running with a count nobody asked for.
inline std::uint64_t stress_items(std::uint64_t normal, std::uint64_t sanitized,
                                  std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) {
  const char* env = std::getenv("NANOTICK_STRESS_ITEMS");
  if (env == nullptr) {
    return kSanitizedBuild ? sanitized : normal;
  }
  const char* end = env + std::strlen(env);
  std::uint64_t value = 0;
  const auto [stop, ec] = std::from_chars(env, end, value);
  if (ec != std::errc() || stop != end || value == 0 || value > max) {
    std::fprintf(stderr,
                 "NANOTICK_STRESS_ITEMS='%s' is not a valid item count: expected a whole number "
                 "from 1 to %llu (or unset it for the test's default)\n",
                 env, static_cast<unsigned long long>(max));
    std::abort();
  }
  return value;
}

// splitmix64's finaliser (with its increment): a bijection on uint64_t.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace nanotick::test
