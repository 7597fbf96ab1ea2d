// A process's threads as named config: the layout (ThreadMode: compact = the
// critical roles composed on one runner, dedicated = one runner each) and,
// per runner, the CPU it is pinned to and its idle strategy. Read from the
// `[threads]` table and its `[threads.<role>]` sub-tables
// (config/thread_layout_reader.hpp); each process wires its agents onto
// these runners in one place (the exchange: exchange_server.cpp; the trader:
// trader.hpp) and names its roles there.
//
// Plain data, built at start-up: thread-safe to read.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/idle_strategy.hpp"
#include "core/thread_mode.hpp"

namespace nanotick::core {

struct RunnerConfig {
  std::string role;             // "critical", "gateway", "engine", "receiver", ...
  int cpu = -1;                 // pin the runner's thread here; -1: not pinned
  IdleKind idle = IdleKind::backoff;
};

struct ThreadLayout {
  ThreadMode mode = ThreadMode::kCompact;
  IdleKind idle = IdleKind::backoff;  // [threads] idle: the default of the critical runners
  std::vector<int> cpus;              // [threads] cpus: pinning by runner position (older configs)
  std::vector<RunnerConfig> runners;  // every runner of the mode, in order, resolved

  // The runner `role` of this layout. Throws std::logic_error for a role the
  // layout has none of (a wiring bug, not a config error: the reader made one
  // entry per role of the mode).
  const RunnerConfig& runner(std::string_view role) const {
    for (const RunnerConfig& r : runners)
      if (r.role == role) return r;
    throw std::logic_error("thread layout: no runner '" + std::string(role) + "' in " + std::string(to_string(mode)) +
                           " mode");
  }
};

}  // namespace nanotick::core
