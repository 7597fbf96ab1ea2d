// A workload: the engine configuration plus the sequenced requests to feed it.
// What `nanotick gen` writes, `nanotick replay` and the benchmarks read.
// Plain values; thread-safety: none needed (no shared state).
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::workload {

// The generated shapes (docs/WORKLOADS.md). kCustom: built by hand (tests, tools).
enum class WorkloadKind : std::uint8_t {
  kCustom = 0,
  kCancelHeavy = 1,  // 1,000,000 new orders and 300,000 cancels (at scale 1)
  kMixed = 2,        // random-walk mid, power-law depth, ~15% IOC, modifies, cancels
  kDeep = 3,         // static mid, tens of thousands of resting orders
  kCrash = 4,        // wide swings across tens of thousands of ticks
  // The regime family (issue 13's methodology, src/workload/regimes.hpp): one
  // instrument, 1,000,000 new orders (at scale 1) priced around a GBM mid
  // path, IOCs, one-off modifies, exponential-lifetime cancels, duplicate
  // cancels and stale modifies.
  kRegimeStatic = 5,      // fixed mid
  kRegimeNormal = 6,      // vol 0.15, swing 2%
  kRegimeSwing25 = 7,     // vol 0.5, swing 25%
  kRegimeSwing40 = 8,     // vol 0.5, swing 40%
  kRegimeFlashCrash = 9,  // vol 0.5, swing 60%
  kLast = kRegimeFlashCrash,
};

// "custom", "cancel-heavy", "mixed", "deep", "crash", "regime-static",
// "regime-normal", "regime-swing-25", "regime-swing-40", "regime-flash-crash".
std::string_view to_string(WorkloadKind kind) noexcept;
// Inverse of to_string for the generated kinds; throws std::invalid_argument
// naming the bad value and listing the valid ones.
WorkloadKind parse_workload_kind(std::string_view name);
// The first four generated shapes (the ones engine_bench runs today).
inline constexpr WorkloadKind kClassicKinds[] = {WorkloadKind::kCancelHeavy, WorkloadKind::kMixed, WorkloadKind::kDeep,
                                                 WorkloadKind::kCrash};
// The regime family, mildest first.
inline constexpr WorkloadKind kRegimeKinds[] = {WorkloadKind::kRegimeStatic, WorkloadKind::kRegimeNormal,
                                                WorkloadKind::kRegimeSwing25, WorkloadKind::kRegimeSwing40,
                                                WorkloadKind::kRegimeFlashCrash};
// Every kind generate() accepts, in a fixed order (the classics, then the regimes).
inline constexpr WorkloadKind kGeneratedKinds[] = {
    WorkloadKind::kCancelHeavy,   WorkloadKind::kMixed,         WorkloadKind::kDeep,
    WorkloadKind::kCrash,         WorkloadKind::kRegimeStatic,  WorkloadKind::kRegimeNormal,
    WorkloadKind::kRegimeSwing25, WorkloadKind::kRegimeSwing40, WorkloadKind::kRegimeFlashCrash};
static_assert(std::size(kGeneratedKinds) == std::size(kClassicKinds) + std::size(kRegimeKinds));
static_assert(std::size(kGeneratedKinds) == static_cast<std::size_t>(WorkloadKind::kLast));

struct Workload {
  WorkloadKind kind = WorkloadKind::kCustom;
  std::uint64_t seed = 0;  // generator seed (0 for custom)
  double scale = 1.0;      // generator scale (1 for custom)
  engine::EngineConfig config;
  std::vector<engine::Request> requests;

  bool operator==(const Workload& other) const noexcept;
};

}  // namespace nanotick::workload
