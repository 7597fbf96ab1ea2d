// The order-entry client's reconnect delays (docs/TRADER.md).
#pragma once

#include <cstdint>

namespace nanotick::client {

// Exponential back-off: initial, 2 x initial, ... capped at max; reset() after
// a successful logon. Not thread-safe (the order-entry client's).
class ReconnectBackoff {
 public:
  ReconnectBackoff(std::uint32_t initial_ms, std::uint32_t max_ms) noexcept
      : initial_ms_(initial_ms), max_ms_(max_ms), next_ms_(initial_ms) {}
  // The delay before the next attempt; doubles the one after.
  std::uint32_t next_delay_ms() noexcept {
    const std::uint32_t d = next_ms_;
    next_ms_ = next_ms_ >= max_ms_ / 2 ? max_ms_ : next_ms_ * 2;
    return d;
  }
  void reset() noexcept { next_ms_ = initial_ms_; }

 private:
  std::uint32_t initial_ms_;
  std::uint32_t max_ms_;
  std::uint32_t next_ms_;
};

}  // namespace nanotick::client
