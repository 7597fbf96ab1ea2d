// What both floors' threads share: running a loop with the idle strategy a
// config names (constructed on the calling thread, as agents construct
// theirs), and remembering the first reason a thread stopped early.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/idle_strategy.hpp"

namespace nanotick::floors {

// Throws std::invalid_argument when `kind` cannot wait on a socket: the
// blocking idle strategy sleeps until signalled, and nobody signals it.
inline void require_socket_idle(core::IdleKind kind, const char* who) {
  if (kind == core::IdleKind::block)
    throw std::invalid_argument(std::string(who) +
                                ": idle \"block\" cannot wait on sockets: use spin, yield or backoff");
}

// Runs loop(idle) with a fresh idle strategy of `kind` (block: nothing runs;
// require_socket_idle() refuses it up front).
template <typename Loop>
void run_with_idle(core::IdleKind kind, Loop&& loop) {
  core::visit_idle_kind(kind, [&](auto type) {
    using Idle = typename decltype(type)::type;
    if constexpr (!std::is_same_v<Idle, core::BlockingIdle>) {
      Idle idle;
      loop(idle);
    }
  });
}

// The first failure any thread reported (a static string), readable from
// any thread.
class FirstFailure {
 public:
  void set(const char* why) noexcept {
    const char* none = nullptr;
    why_.compare_exchange_strong(none, why, std::memory_order_acq_rel);
  }
  const char* get() const noexcept { return why_.load(std::memory_order_acquire); }

 private:
  std::atomic<const char*> why_{nullptr};
};

}  // namespace nanotick::floors
