// Reads a process's `[threads]` table into a core::ThreadLayout. The process
// names its runners per mode (ThreadRoles); the table gives
//
//   [threads]
//   mode = "compact" | "dedicated"    which runners exist (default compact)
//   idle = "backoff"                  default idle strategy of the critical runners
//   cpus = [0, 1]                     pinning by runner position (older form)
//   [threads.<role>]                  one runner: cpu = N (-1: none), idle = "spin"...
//
// Precedence per runner: its own table, then cpus[position], then the
// defaults (critical runners: [threads] idle; the others: `background_idle`).
// A role table of the other mode's runners, or a runner pinned both by its
// table and by `cpus`, is an error naming both keys. Start-up only: throws
// ConfigError.
#pragma once

#include <string_view>
#include <vector>

#include "config/toml_reader.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread_layout.hpp"

namespace nanotick::config {

struct ThreadRoles {
  std::vector<std::string_view> compact;    // runners of the compact layout, in `cpus` order
  std::vector<std::string_view> dedicated;  // runners of the dedicated layout, in `cpus` order
  std::vector<std::string_view> critical;   // roles whose default idle is [threads] idle
  std::vector<std::string_view> idle_kinds;  // the idle strategies this process accepts
  core::IdleKind background_idle = core::IdleKind::backoff;
};

core::ThreadLayout read_thread_layout(TableReader t, const ThreadRoles& roles);

}  // namespace nanotick::config
