// Per-session message rate limit (PROTOCOL.md §1.5 rule 9): a token bucket
// of `burst` messages refilled at `rate_per_s`, in integer nano-tokens so no
// floating point or division runs per message. Not thread-safe: the gateway's.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/time_units.hpp"

namespace nanotick::exchange {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(std::uint32_t rate_per_s, std::uint32_t burst, std::uint64_t now_ns) noexcept
      : rate_(rate_per_s), cap_(std::uint64_t{burst} * kUnit), tokens_(cap_), last_ns_(now_ns) {}

  // Takes one token if there is one.
  bool try_take(std::uint64_t now_ns) noexcept {
    if (now_ns > last_ns_) {
      // Capped so elapsed * rate cannot overflow (rate <= 1e8/s, 10 s -> 1e18).
      const std::uint64_t elapsed = std::min<std::uint64_t>(now_ns - last_ns_, 10'000'000'000ull);
      tokens_ = std::min(cap_, tokens_ + elapsed * rate_);
      last_ns_ = now_ns;
    }
    if (tokens_ < kUnit) return false;
    tokens_ -= kUnit;
    return true;
  }

 private:
  static constexpr std::uint64_t kUnit = core::kNsPerSec;  // one message, in rate-ns units (a rate per second times ns)
  std::uint64_t rate_ = 0;
  std::uint64_t cap_ = 0;
  std::uint64_t tokens_ = 0;
  std::uint64_t last_ns_ = 0;
};

}  // namespace nanotick::exchange
