// Reads a journal directory without changing it (docs/EXCHANGE.md "Journal"):
// every segment header and record slot is checked (length, type, CRC-32C,
// sequence continuity), and what is found is classified:
//
// - clean: one run of good records from the first segment's first seq;
// - torn tail: a break (bad or missing record, partial record at the end of
//   a segment written before segments recorded their size) after which
//   nothing passes its CRC and nothing proves records were written: a write
//   the process or the machine did not finish. Recovery cuts it (nothing
//   acknowledged can be in it: a record that passes its CRC is never thrown
//   away, and there is none);
// - corrupt: damage where acknowledged requests may be. Either a break
//   followed by at least one record that passes its CRC (a damaged record in
//   the middle, records of another writer), a segment header that is not
//   ours, or evidence that records were written that are not there:
//   * a segment file shorter than the size its header says it was made with
//     (the writer preallocates every segment whole, so only something else
//     cuts one: a disk or an operator);
//   * a file with a segment's name and no header (segments are made under a
//     temporary name and renamed once their header is durable);
//   * a segment that starts after the seq the previous one ends at (the
//     writer starts a segment only when the previous one is full).
//   Recovery refuses to start: `nanotick journal repair` is the operator's
//   explicit way on. (A snapshot newer than the journal's end is the other
//   evidence; recovery checks it, since only it knows the snapshot.)
//
// Used by recovery (journal_recovery.hpp) and the `nanotick journal` tool.
// Start-up and tool code: allocates, throws JournalError when a file cannot be
// read. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "exchange/sequencing/journal_format.hpp"

namespace nanotick::exchange {

// The journal cannot be used at all (wrong instrument table, unreadable
// file, records missing before the snapshot, corruption before valid
// records): the server must not start.
class JournalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class JournalDamage : std::uint8_t { kNone, kTornTail, kCorrupt };
const char* to_string(JournalDamage d) noexcept;

struct JournalSegmentInfo {
  std::string path;
  std::uint64_t name_seq = 0;      // first seq from the file name
  std::uint64_t file_bytes = 0;
  std::string header_problem;      // "" = the header is good
  bool header_zero = false;        // the header is missing (zeros or a short file): a torn segment creation
  std::uint64_t fingerprint = 0;   // from a good header
  std::uint64_t made_bytes = 0;    // the size the header says the file was made with (0: not recorded)
  bool cut_short = false;          // file_bytes < made_bytes: cut by something other than the writer
  std::uint64_t good_records = 0;  // records of the good run in this segment
  std::uint64_t first_seq = 0;     // of those (0 = none)
  std::uint64_t last_seq = 0;
  std::uint64_t end_offset = 0;    // byte offset after the good run's last record in this segment
};

// Where the good run ends, if it does not end cleanly.
struct JournalBreak {
  std::size_t segment = 0;         // index into JournalScan::segments
  std::uint64_t offset = 0;        // byte offset in that segment (0: the segment as a whole)
  std::uint64_t expected_seq = 0;  // the seq that should have been there
  std::string what;
};

struct JournalScan {
  std::string dir;
  std::vector<JournalSegmentInfo> segments;
  std::uint64_t first_seq = 0;     // first record of the good run (0 = none)
  std::uint64_t next_seq = 0;      // seq after the good run's last record (0 = no records)
  std::uint64_t good_records = 0;
  JournalDamage damage = JournalDamage::kNone;
  bool has_break = false;
  JournalBreak first_break;
  // Records after the break that pass their CRC (whatever their seq): why a
  // break is corruption rather than a torn tail.
  std::uint64_t valid_after_break = 0;
  std::uint64_t valid_after_min_seq = 0;
  std::uint64_t valid_after_max_seq = 0;
  // The break is damage whatever follows it (a cut-short or header-less
  // segment, records missing between segments): the reason is in
  // first_break.what.
  bool loss_proven = false;
  std::string proof;  // the first such evidence
  // Segments whose fingerprint differs from the one asked for (if any).
  std::vector<std::size_t> fingerprint_mismatch;

  // One line for operators and logs: where, what, and what follows.
  std::string describe_break() const;
};

// What a record slot holds, as the scan judged it.
enum class SlotStatus : std::uint8_t {
  kGood,         // part of the good run
  kAfterBreak,   // passes its CRC but comes after the break
  kBad,          // fails length/type/CRC, or passes its CRC with the wrong seq at the break
};

// Called for every non-zero record slot in file order: good records (in seq
// order) and, after the break, every slot that is not zeros.
using SlotVisitor =
    std::function<void(const JournalSegmentInfo&, std::uint64_t offset, const JournalRecord&, SlotStatus)>;

// Scans `dir` (missing or empty: an empty journal). `fingerprint` (non-zero)
// is compared with every good header (mismatches are listed, not thrown).
JournalScan scan_journal(const std::string& dir, std::uint64_t fingerprint, const SlotVisitor& visit = {});

// A record slot passes its checks other than the seq: length, type, CRC.
inline bool record_passes_crc(const JournalRecord& r) noexcept {
  return r.length == sizeof(JournalRecord) && r.type == RecordType::kEngineRequest && r.crc == record_crc(r);
}

}  // namespace nanotick::exchange
