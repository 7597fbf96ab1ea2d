// Deterministic, seeded workload generators (docs/WORKLOADS.md describes each
// shape). Same options -> same workload, byte for byte. Pure functions of their
// arguments: thread-safe.
#pragma once

#include <cstdint>

#include "workload/workload.hpp"

namespace nanotick::workload {

struct GenOptions {
  WorkloadKind kind = WorkloadKind::kMixed;
  std::uint64_t seed = 1;
  double scale = 1.0;  // multiplies every count; (0, 100]; small values for tests
};

// What the generator's own model of the book saw while generating (the model
// follows docs/MATCHING.md for the requests it emits). For tests and docs.
struct GenStats {
  std::uint64_t new_orders = 0;        // every kNew (including deliberate duplicates)
  std::uint64_t limit_orders = 0;
  std::uint64_t ioc_orders = 0;
  std::uint64_t market_orders = 0;
  std::uint64_t cancels = 0;           // every kCancel
  std::uint64_t modifies = 0;          // every kModify
  std::uint64_t late_cancels = 0;      // cancels of an order already done (duplicate or late)
  std::uint64_t late_modifies = 0;     // modifies of an order already done (stale, or racing a fill)
  std::uint64_t duplicate_cancels = 0;  // regimes: a second cancel after the order's own (in late_cancels)
  std::uint64_t stale_modifies = 0;     // regimes: a modify after the order's cancel (in late_modifies)
  std::uint64_t unknown_cancels = 0;   // cancels of an id never used
  std::uint64_t duplicate_news = 0;    // kNew reusing a live client order id (rejected)
  std::uint64_t rested = 0;            // orders that rested in the book at some point
  std::uint64_t rested_cancelled = 0;  // ... that ended by a cancel (user or modify to <= filled)
  std::uint64_t rested_modified = 0;   // ... that were modified at least once
  std::uint64_t rested_filled = 0;     // ... that ended fully filled
  std::uint64_t trades = 0;
  std::uint64_t peak_live_orders = 0;  // max over instruments and time
  std::uint64_t peak_levels = 0;       // max over instruments, sides and time
  engine::Price min_trade_price = 0;  // lowest and highest trade price (0 if no trade)
  engine::Price max_trade_price = 0;
  // Means over the requests of the book after each one: live orders and
  // levels (bid + ask), summed over the instruments.
  double avg_live_orders = 0;
  double avg_levels = 0;
  // Regimes only (0 otherwise): the mid path's lowest and highest tick, the
  // median planned lifetime (arrival to cancel) and the last request's time,
  // in synthetic nanoseconds.
  std::int64_t min_mid = 0;
  std::int64_t max_mid = 0;
  std::uint64_t median_lifetime_ns = 0;
  std::uint64_t synthetic_ns = 0;
};

// Throws std::invalid_argument on kCustom, or a scale outside (0, 100].
// `stats`, when given, receives the generator's counts.
Workload generate(const GenOptions& options, GenStats* stats = nullptr);

}  // namespace nanotick::workload
