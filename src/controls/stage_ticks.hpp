// StageTicks: one request's time in each stage of the venue's pipeline
// (docs/CONTROLS.md "Where the time goes"), in clock ticks: pre-trade checks
// -> matching -> settlement -> trade ledger, the split the profiled Rust
// engine published. Filled by ControlledEngine::process_staged (pre-trade,
// matching, settlement) and by the exchange's trade ledger tap (ledger),
// only while the exchange records telemetry: each timed region costs one or
// two clock reads, which the plain process() never pays.
//
// The stages interleave inside the engine step (each report settles, and
// each trade goes to the ledger, as the engine emits it), so settlement and
// ledger are sums over the request's reports, and matching is the engine
// step less those sums.
//
// Plain data; not thread-safe (the engine's thread).
#pragma once

#include <cstdint>

namespace nanotick::controls {

struct StageTicks {
  std::uint64_t pre_trade = 0;   // halts/blocks and the account checks (new orders and modifies)
  std::uint64_t matching = 0;    // the engine's step (or its refusal), less settlement and ledger
  std::uint64_t settlement = 0;  // every report of the request settled into the accounts
  std::uint64_t ledger = 0;      // every trade of the request copied into the ledger's ring
};

}  // namespace nanotick::controls
