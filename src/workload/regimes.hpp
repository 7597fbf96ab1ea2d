// The regime family (docs/WORKLOADS.md, "The regimes"): the public methodology
// other matching engines are compared on, rebuilt as five seeded workloads of
// one instrument. A schedule, not a reaction to the book: every new order is
// planned up front (price from a geometric Brownian mid path, passive on its
// own side at a power-law distance; buys along the first half of the path,
// sells along the second; arrival order shuffled), then each gets its
// lifecycle in synthetic time (IOC, one modify, a cancel after an exponential
// lifetime, a duplicate cancel or a stale modify after it), and all messages
// are emitted in time order. The generator's book model follows along only to
// count what happens (and to tell a cancel of a live order from one of an
// order already filled). Pure functions of their arguments: thread-safe.
#pragma once

#include <cstdint>

#include "workload/generators.hpp"
#include "workload/workload.hpp"

namespace nanotick::workload {

// What makes one regime differ from another: the mid path.
struct RegimeParams {
  const char* symbol;
  double vol;    // annualised volatility of the mid's GBM (0: the mid never moves)
  double swing;  // the run's typical excursion, vol * sqrt(T): T = (swing / vol)^2 years
};

// Throws std::invalid_argument for a kind outside kRegimeKinds.
RegimeParams regime_params(WorkloadKind kind);

// The methodology's fixed figures and the generator's own free parameters.
namespace regime {
inline constexpr std::uint64_t kNewOrders = 1'000'000;  // at scale 1
inline constexpr std::int64_t kStartMid = 33'504;       // ticks (tick size 1)
inline constexpr std::int64_t kMaxQty = 100;            // new orders: uniform 1..100
inline constexpr double kDepthExponent = 2.23;          // P(distance >= d) = d^-2.23, d >= 1 tick
inline constexpr std::int64_t kMaxDepth = 4'096;        // distances redrawn beyond this
inline constexpr double kHumpShare = 0.05;              // the hump: 5% of orders at 8 +- 2 ticks
inline constexpr std::int64_t kHumpTicks = 8;
inline constexpr double kIocShare = 0.15;               // of new orders
inline constexpr double kModifyShare = 0.20;            // of the non-IOC orders
inline constexpr double kRepriceShare = 0.80;           // of modifies: also one tick up or down
inline constexpr std::int64_t kMaxIncrease = 50;        // modify: total + uniform 1..50
inline constexpr double kCancelShare = 0.95;            // of the non-IOC orders
inline constexpr double kDuplicateCancelShare = 0.02;   // of cancels
inline constexpr double kStaleModifyShare = 0.02;       // of modified-then-cancelled orders
inline constexpr std::size_t kPathGrid = 1'024;          // coarse steps of the mid's Brownian motion
// Free parameters (tuned so the static regime has the shape the methodology
// describes; docs/WORKLOADS.md gives the measurements).
inline constexpr double kArrivalsPerMs = 2'000.0;       // synthetic arrival rate (Poisson)
inline constexpr double kLifetimeMedianNs = 375'000.0;  // median lifetime 1 tick out ...
inline constexpr double kLifetimeDepthPower = 0.5;      // ... times distance^0.5 further out
inline constexpr double kLateDelayMeanNs = 10'000.0;    // duplicate cancel / stale modify after the cancel
}  // namespace regime

// Fills `wl` (kind already set) with the regime `opt.kind` at `opt.scale`.
void generate_regime(Workload& wl, GenStats& stats, const GenOptions& opt);

}  // namespace nanotick::workload
