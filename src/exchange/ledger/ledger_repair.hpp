// The operator's explicit repair of a damaged trade ledger (`nanotick ledger
// repair`, docs/CONTROLS.md "Trade ledger"): start-up refuses a ledger
// damaged in the middle (trade_ledger.hpp); this cuts it at its first bad
// record after copying the whole file into a backup directory beside it
// (repair-<time>/trades.ledger). The exchange's next start puts back, from
// the journal, every trade after the cut that the journal still holds (those
// after the engine snapshot it starts from); the result names the trades
// removed so that the operator can reconcile the rest. The caller holds the
// journal directory's JournalDirLock. Tool code: allocates, throws
// LedgerError. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "exchange/ledger/trade_ledger.hpp"

namespace nanotick::exchange {

struct LedgerRepair {
  std::string backup_path;          // the copy ("" when there was nothing to repair)
  std::uint64_t kept_trades = 0;    // trade_seq 1..kept_trades stay
  std::uint64_t cut_bytes = 0;
  std::uint64_t removed_valid = 0;  // removed records that passed their CRC
  std::uint64_t removed_valid_min_seq = 0;
  std::uint64_t removed_valid_max_seq = 0;
};

// Plans (dry_run) or performs the repair of the ledger at `path`.
LedgerRepair repair_trade_ledger(const std::string& path, bool dry_run);

}  // namespace nanotick::exchange
