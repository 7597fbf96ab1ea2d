// Reads the journal back at start-up (docs/EXCHANGE.md "Snapshots and
// recovery") in two steps, so that nothing on disk changes before the
// decision to start is taken:
// 1. plan_journal_recovery() scans it (journal_scan.hpp), hands the good
//    records after a given seq to the caller, and decides; every refusal is
//    a JournalError thrown here, having written nothing:
//    - corrupt (records that pass their CRC follow the break, or evidence
//      that records were written that are missing): those records may be
//      acknowledged orders. The operator looks with `nanotick journal
//      verify`/`dump` and decides with `nanotick journal repair`;
//    - the journal ends before the state to continue from (a snapshot holds
//      requests the journal lost), or starts after it;
//    - another instrument table.
//    Then the staging ring: records a killed run appended after the files'
//    end are replayed too (a ring that proves records missing is refused).
// 2. apply_journal_recovery() makes the cut the plan holds, if any: a torn
//    tail (nothing after the break passes its CRC, nothing proves records
//    were there) is cut: the rest of that segment is zeroed (a partial
//    record at the end of a short file is cut off) and later segments are
//    renamed *.corrupt-* (kept for inspection, never replayed).
// `nanotick journal verify` runs step 1 alone (recovery_plan.hpp), so it
// says exactly what start-up will do. The caller of step 2 must hold the
// directory's JournalDirLock. Start-up code: allocates, throws. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_scan.hpp"
#include "exchange/sequencing/journal_writer.hpp"

namespace nanotick::exchange {

struct JournalRecovery {
  JournalTail tail;                 // where the segment files continue (after the cut, if one is planned)
  std::uint64_t next_seq = 1;       // the next request's seq: after the files and the staging ring
  // Records a killed run left in the staging ring (journal_staging.hpp)
  // after the files' end: replayed with the rest, written to the files by
  // the JournalWriter that opens at `tail`.
  std::uint64_t records_staged = 0;
  std::string staging_path;         // the ring read ("" = none)
  std::string staging_ignored;      // a ring found but not this journal's, and why
  std::uint64_t records_scanned = 0;
  std::uint64_t records_replayed = 0;   // handed to the callback (seq > after_seq)
  std::uint64_t segments = 0;           // segments holding good records (or a good empty header)
  // The planned cut of a torn tail ("" = none): what was found and where.
  std::string truncation;
  std::string cut_path;                 // segment zeroed from cut_offset ("" = none)
  std::uint64_t cut_offset = 0;
  std::vector<std::string> to_quarantine;  // later segments to rename *.corrupt-*
  // Filled in by apply_journal_recovery().
  bool applied = false;
  std::uint64_t truncated_bytes = 0;    // bytes zeroed or cut off in the torn segment
  std::vector<std::string> quarantined; // the new names of the later segments
};

// Step 1: reads `dir` (a missing or empty directory is an empty journal)
// and decides; changes nothing. Records with seq <= after_seq are checked
// but not replayed (an engine snapshot already holds them); each later good
// record goes to on_record (may be empty) in order. `fingerprint` must match
// every segment's. Throws JournalError for every refusal.
JournalRecovery plan_journal_recovery(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                      const std::function<void(const JournalRecord&)>& on_record);

// Step 2: makes the planned cut (nothing if none was planned).
void apply_journal_recovery(JournalRecovery& plan);

// Both steps (tests and tools that do not need the decision in between).
JournalRecovery recover_journal(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                const std::function<void(const JournalRecord&)>& on_record);

// The text of the JournalError for a corrupt journal: what, where, and the
// operator's ways on.
std::string corrupt_journal_message(const JournalScan& scan);

// Zeroes the segment file's bytes from `offset` to the end of its whole
// records and cuts off a partial record at its end; then, if `made_bytes`
// is larger than the file, extends it with zeros to that size (a segment
// cut short, repaired); fdatasyncs. Returns the bytes zeroed or cut.
// Recovery uses it only where the scan found nothing that passes its CRC
// and no evidence of loss; `journal repair` after keeping a copy.
std::uint64_t cut_segment_after(const std::string& path, std::uint64_t offset, std::uint64_t made_bytes = 0);

// Renames `path` to `path`.corrupt-<unix time> (kept, never replayed) and
// returns the new name.
std::string quarantine_segment(const std::string& path);

}  // namespace nanotick::exchange
