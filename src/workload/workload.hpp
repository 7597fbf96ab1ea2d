// A workload: the engine configuration plus the sequenced requests to feed it.
// What `nanotick gen` writes, `nanotick replay` and the benchmarks read.
// Plain values; thread-safety: none needed (no shared state).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/engine_config.hpp"
#include "engine/request.hpp"

namespace nanotick::workload {

// The generated shapes (docs/WORKLOADS.md). kCustom: built by hand (tests, tools).
enum class WorkloadKind : std::uint8_t {
  kCustom = 0,
  kCancelHeavy = 1,  // 1,000,000 new orders and 300,000 cancels (at scale 1)
  kMixed = 2,        // random-walk mid, power-law depth, ~15% IOC, modifies, cancels
  kDeep = 3,         // static mid, tens of thousands of resting orders
  kCrash = 4,        // wide swings across tens of thousands of ticks
};

// "custom", "cancel-heavy", "mixed", "deep", "crash".
std::string_view to_string(WorkloadKind kind) noexcept;
// Inverse of to_string for the four generated kinds; throws std::invalid_argument
// naming the bad value and listing the valid ones.
WorkloadKind parse_workload_kind(std::string_view name);
// The kinds generate() accepts, in a fixed order.
inline constexpr WorkloadKind kGeneratedKinds[] = {WorkloadKind::kCancelHeavy, WorkloadKind::kMixed,
                                                   WorkloadKind::kDeep, WorkloadKind::kCrash};

struct Workload {
  WorkloadKind kind = WorkloadKind::kCustom;
  std::uint64_t seed = 0;  // generator seed (0 for custom)
  double scale = 1.0;      // generator scale (1 for custom)
  engine::EngineConfig config;
  std::vector<engine::Request> requests;

  bool operator==(const Workload& other) const noexcept;
};

}  // namespace nanotick::workload
