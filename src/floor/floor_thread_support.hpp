// What both floors' agents share: starting an agent on its own runner, and
// remembering the first reason a thread stopped early.
#pragma once

#include <atomic>
#include <optional>

#include "core/agent_runner.hpp"
#include "core/idle_strategy.hpp"

namespace nanotick::floors {

// Starts `agent` on a runner of its own: thread `name`, pinned to `cpu` (-1:
// not pinned), idling as `kind` says. Throws std::system_error naming the CPU
// when the thread cannot be pinned there.
template <core::Agent A>
void start_agent(std::optional<core::ConfiguredAgentRunner<A>>& runner, A& agent, const char* name, int cpu,
                 core::IdleKind kind) {
  runner.emplace(core::make_agent_runner(agent, core::RunnerConfig{.role = name, .cpu = cpu, .idle = kind}, name));
  runner->start();
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
