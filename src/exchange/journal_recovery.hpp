// Reads the journal back at start-up (docs/EXCHANGE.md "Snapshots and
// recovery"): checks every segment header and record (length, type, CRC-32C,
// sequence continuity), hands the good records after a given seq to the
// caller, and cuts the journal at the first bad one: the rest of that segment
// is zeroed and later segments are renamed *.corrupt (kept for inspection,
// never replayed). Start-up code: allocates, throws. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exchange/journal_format.hpp"
#include "exchange/journal_writer.hpp"

namespace nanotick::exchange {

// The journal cannot be used at all (wrong instrument table, unreadable
// file, records missing before the snapshot): the server must not start.
class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JournalRecovery {
  JournalTail tail;                 // where appending continues
  std::uint64_t records_scanned = 0;
  std::uint64_t records_replayed = 0;   // handed to the callback (seq > after_seq)
  std::uint64_t segments = 0;
  // Non-empty when the journal was cut: what was found and where.
  std::string truncation;
  std::uint64_t truncated_bytes = 0;    // bytes zeroed in the cut segment
  std::vector<std::string> quarantined; // later segments renamed *.corrupt
};

// Scans `dir` (a missing or empty directory is an empty journal). Records
// with seq <= after_seq are checked but not replayed (an engine snapshot
// already holds them); each later good record goes to on_record in order.
// `fingerprint` must match every segment's (else JournalError).
JournalRecovery recover_journal(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                const std::function<void(const JournalRecord&)>& on_record);

}  // namespace nanotick::exchange
