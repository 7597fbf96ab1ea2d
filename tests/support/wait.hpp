// Waiting in tests for something another thread or process does: polls
// `pred` every millisecond and gives up after `limit`, so a failing test ends
// instead of hanging.
#pragma once

#include <chrono>
#include <thread>

namespace nanotick::testing {

template <typename Pred>
bool wait_for(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace nanotick::testing
