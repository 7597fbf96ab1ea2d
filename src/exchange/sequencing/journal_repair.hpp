// The operator's explicit repair of a damaged journal (`nanotick journal
// repair`, docs/EXCHANGE.md "When the journal is damaged"): cuts the journal
// at its first break, after copying everything it removes into a backup
// directory inside the journal directory:
// - the segment holding the break is copied whole, then zeroed from the end
//   of its good records (a partial record at its end is cut off, and a
//   segment cut short gets its size back); a segment whose header is the
//   break is moved whole;
// - every later segment is moved;
// - engine snapshots taken at or after the break's seq are moved (they hold
//   the effect of records the journal no longer has).
// The records removed are lost to the venue: the result names them (how many
// pass their CRC, their seqs) so the operator can reconcile with clients
// (`nanotick journal dump BACKUP_DIR`). The caller holds the directory's
// JournalDirLock. Tool code: allocates, throws JournalError. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exchange/sequencing/journal_scan.hpp"

namespace nanotick::exchange {

struct JournalRepair {
  std::string backup_dir;              // where the copies went ("" for a clean journal)
  std::uint64_t cut_seq = 0;           // the first seq no longer in the journal
  std::uint64_t removed_valid = 0;     // removed records that passed their CRC
  std::uint64_t removed_valid_min_seq = 0;
  std::uint64_t removed_valid_max_seq = 0;
  std::uint64_t bytes_zeroed = 0;      // in the segment cut in place
  std::vector<std::string> copied;     // files copied into backup_dir, then cut in place
  std::vector<std::string> moved;      // files moved into backup_dir
};

// A new directory name inside `dir` for the copies a repair keeps:
// repair-<UTC time>[-N].
std::string repair_backup_dir_name(const std::string& dir);

// Plans (dry_run) or performs the repair of what `scan` found. A clean scan
// plans nothing.
JournalRepair repair_journal(const JournalScan& scan, bool dry_run);

}  // namespace nanotick::exchange
