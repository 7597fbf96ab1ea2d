// What the exchange does with its journal directory at start-up, decided
// before anything in it changes (docs/EXCHANGE.md "Snapshots and recovery"):
// 1. the trade ledger is read and judged (trade_ledger.hpp: clean, a torn
//    tail to cut, or damage that refuses the start);
// 2. the newest engine snapshot that reads back whole is loaded;
// 3. the journal after it is read, its records handed on for replay, and
//    judged (journal_recovery.hpp).
// Every refusal is an exception thrown here (LedgerError, JournalError),
// with nothing on disk changed; only then does start-up carry the plan out
// (apply_journal_recovery, TradeLedger's constructor). `nanotick journal
// verify` runs this same function without the hooks, so its verdict is
// what start-up will do, by construction.
// Start-up and tool code: allocates, throws. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/snapshots/engine_snapshot.hpp"

namespace nanotick::exchange {

// Called in this order while the plan is made; each may be empty.
struct RecoveryHooks {
  std::function<void(const LedgerPlan&)> on_ledger;
  std::function<void(const LoadedSnapshot&)> on_snapshot;
  std::function<void(const JournalRecord&)> on_record;  // the records after the snapshot, in order
};

struct RecoveryPlan {
  LedgerPlan ledger;
  std::uint64_t snapshot_seq = 0;       // journal seq of the snapshot loaded (0 = none)
  std::uint64_t snapshot_report_seq = 0;  // its last execution report seq
  std::string snapshot_path;
  std::vector<std::string> snapshot_problems;  // snapshots skipped, and why
  JournalRecovery journal;              // planned, not applied
};

// The ledger's file in a journal directory.
std::string trade_ledger_path(const std::string& journal_dir);

// Reads `dir` and decides; changes nothing. Throws LedgerError or
// JournalError for every refusal.
RecoveryPlan plan_recovery(const std::string& dir, std::uint64_t fingerprint, const RecoveryHooks& hooks = {});

// The log lines about the ledger once the plan is carried out: a torn tail
// cut, trades the replay put back (`replayed`, in trade_seq order), and
// what it cannot hold -- a missing file made anew names the range of
// execution reports whose trades it lacks (those before the snapshot the
// replay starts from), or says that none are lost.
std::vector<std::string> describe_ledger_recovery(const RecoveryPlan& plan, const std::vector<TradeRecord>& replayed);

}  // namespace nanotick::exchange
