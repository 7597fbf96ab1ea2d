// The exchange's start-up recovery as a phase of its own (docs/EXCHANGE.md
// "Snapshots and recovery"): plan_recovery (recovery_plan.hpp) decides with
// nothing on disk changed -- the ledger judged, the newest good engine
// snapshot loaded into the engine, the journal after it replayed with the
// outputs muted -- then the plan is carried out: the journal's torn tail
// cut, the trade ledger opened (or made) and the trades the replay re-made
// that it lacked written. What comes back is what the server wires its
// agents with; it logs the `log` lines.
//
// The engine's type depends on the server's thread layout, so recovery
// reaches it through RecoveryEngine's functions. Start-up code: allocates,
// throws (LedgerError, JournalError: a refusal; std::runtime_error).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exchange/exchange_config.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "exchange/sequencing/recovery_plan.hpp"

namespace nanotick::exchange {

// What recovery does to the server's engine.
struct RecoveryEngine {
  std::function<void(const LoadedSnapshot&)> import_snapshot;
  std::function<void(const engine::Request&)> replay;  // one journal record, outputs muted
  std::function<void(TradeTap*)> set_trade_tap;        // the tap sees the replay's fills
  std::function<std::uint64_t()> state_hash;           // for the log line
  std::function<std::uint64_t()> last_md_seq;
};

struct RecoveredVenue {
  RecoveryPlan plan;                     // carried out: plan.journal.tail is where the journal continues
  std::unique_ptr<TradeTap> trade_tap;   // the engine thread's end of the ledger, its replay over
  std::unique_ptr<TradeLedger> ledger;   // open, every trade the replay re-made in it
  std::vector<std::string> log;          // what recovery found and did, for the operator
};

// `ledger_ring`: what trade_tap pushes into and ledger drains.
RecoveredVenue recover_venue(const ExchangeConfig& config, LedgerRing& ledger_ring, const RecoveryEngine& engine);

}  // namespace nanotick::exchange
