// How a process places its critical agents on threads: all of them on one
// runner (compact: the default on a small machine, one spinning or backing-off
// thread) or one runner each (dedicated: a core per agent). Shared by the
// exchange and the trading client, whose configs both choose it.
#pragma once

#include <cstdint>
#include <string_view>

namespace nanotick::core {

enum class ThreadMode : std::uint8_t { kCompact, kDedicated };

constexpr std::string_view to_string(ThreadMode m) noexcept {
  return m == ThreadMode::kDedicated ? "dedicated" : "compact";
}

}  // namespace nanotick::core
