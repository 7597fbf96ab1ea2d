// Reads the journal back at start-up (docs/EXCHANGE.md "Snapshots and
// recovery"): scans it (journal_scan.hpp), hands the good records after a
// given seq to the caller, and then
// - clean: appending continues after the last record;
// - torn tail (nothing after the break passes its CRC): the journal is cut
//   there: the rest of that segment is zeroed (a partial record at the end
//   of a short file is cut off) and later segments are renamed *.corrupt-*
//   (kept for inspection, never replayed);
// - corrupt (records that pass their CRC follow the break): JournalError,
//   and nothing is changed: those records may be acknowledged orders. The
//   operator looks with `nanotick journal verify`/`dump` and decides with
//   `nanotick journal repair`.
// The caller must hold the directory's JournalDirLock. Start-up code:
// allocates, throws. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exchange/journal_format.hpp"
#include "exchange/journal_scan.hpp"
#include "exchange/journal_writer.hpp"

namespace nanotick::exchange {

struct JournalRecovery {
  JournalTail tail;                 // where appending continues
  std::uint64_t records_scanned = 0;
  std::uint64_t records_replayed = 0;   // handed to the callback (seq > after_seq)
  std::uint64_t segments = 0;           // segments holding good records (or a good empty header)
  // Non-empty when a torn tail was cut: what was found and where.
  std::string truncation;
  std::uint64_t truncated_bytes = 0;    // bytes zeroed or cut off in the torn segment
  std::vector<std::string> quarantined; // later segments renamed *.corrupt-*
};

// Scans `dir` (a missing or empty directory is an empty journal). Records
// with seq <= after_seq are checked but not replayed (an engine snapshot
// already holds them); each later good record goes to on_record in order.
// `fingerprint` must match every segment's (else JournalError).
JournalRecovery recover_journal(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                const std::function<void(const JournalRecord&)>& on_record);

// The text of the JournalError for a corrupt journal: what, where, and the
// operator's ways on.
std::string corrupt_journal_message(const JournalScan& scan);

// Zeroes the segment file's bytes from `offset` to the end of its whole
// records and cuts off a partial record at its end; fdatasyncs. Returns the
// bytes zeroed or cut. Recovery uses it only where the scan found nothing
// that passes its CRC; `journal repair` after keeping a copy.
std::uint64_t cut_segment_after(const std::string& path, std::uint64_t offset);

// Renames `path` to `path`.corrupt-<unix time> (kept, never replayed) and
// returns the new name.
std::string quarantine_segment(const std::string& path);

}  // namespace nanotick::exchange
