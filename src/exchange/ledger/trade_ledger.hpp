// The venue's trade ledger (docs/CONTROLS.md "Trade ledger"): one
// append-only file, <journal dir>/trades.ledger, of every trade with both
// sides (trade_record.hpp), written by the auxiliary thread from the
// LedgerRing the engine thread's TradeTap fills, so the file's system calls
// never run on the engine's thread.
//
// File: a 64-byte header (magic NTLEDG01, version, the exchange config's
// fingerprint, the creation time), then 128-byte records, each with its
// CRC-32C, trade_seq 1, 2, 3, ... Opening an existing file checks the
// header and scans every record: the first one whose CRC fails or whose
// trade_seq does not follow ends the good part. What follows decides:
// - nothing after it passes its CRC: a torn tail, a write the machine did
//   not finish (records are only ever appended). Start-up cuts it, after
//   the decision to start (docs/EXCHANGE.md "Snapshots and recovery");
// - a record after it passes its CRC: damage in the middle of the file.
//   Start-up refuses (LedgerError) and changes nothing, as for the journal:
//   cutting there would delete every later trade. `nanotick ledger repair`
//   is the operator's way on (it keeps a copy of what it removes).
// Records are written as they are drained and made durable by an fdatasync
// at most once a millisecond while there is something new (and at close).
// The file is created 0600: it names every client's trades.
//
// Thread-safety: TradeLedger is the auxiliary thread's agent (one thread);
// its counters may be read from any thread. read_trade_ledger() is for
// tools and tests. Start-up and the reader throw std::runtime_error naming
// the path and what is wrong.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "exchange/ledger/trade_record.hpp"

namespace nanotick::exchange {

// The ledger cannot be used: start-up refuses, having changed nothing.
class LedgerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class LedgerDamage : std::uint8_t { kNone, kTornTail, kCorrupt };
const char* to_string(LedgerDamage d) noexcept;

struct LedgerContents {
  std::vector<TradeRecord> trades;  // the good part, in trade_seq order
  std::uint64_t fingerprint = 0;
  std::uint64_t created_ns = 0;
  std::uint64_t good_bytes = 0;     // header + good records
  std::uint64_t file_bytes = 0;
  std::string problem;              // why the good part ends before the file does ("" if it does not)
  LedgerDamage damage = LedgerDamage::kNone;
  // Whole record slots after the break that pass their CRC: why a break is
  // damage rather than a torn tail.
  std::uint64_t valid_after_break = 0;
  std::uint64_t valid_after_min_seq = 0;  // their trade_seqs
  std::uint64_t valid_after_max_seq = 0;
};

// The file: a header of kLedgerHeaderBytes, then TradeRecords, each ending
// in the CRC-32C of its other bytes (trade_record_crc).
inline constexpr std::size_t kLedgerHeaderBytes = 64;
std::uint32_t trade_record_crc(const TradeRecord& t) noexcept;

// Reads and checks `path` (throws if it cannot be opened or has no valid header).
LedgerContents read_trade_ledger(const std::string& path);

// What start-up will do with the ledger at `path`, decided without changing
// anything: open it (cutting a torn tail), or make it (missing or empty).
// Throws LedgerError when start-up must refuse: damage in the middle, a
// file of another venue config, not a ledger.
struct LedgerPlan {
  std::string path;
  bool missing = false;              // no file (or an empty one): start-up makes it
  std::uint64_t next_trade_seq = 1;
  std::uint64_t last_request_seq = 0;  // the last request with a trade in the file
  std::uint64_t last_exec_seq = 0;     // the last execution report seq of its trades
  std::uint64_t good_bytes = 0;
  std::uint64_t cut_bytes = 0;       // a torn tail to cut
  std::string cut_reason;
};
LedgerPlan plan_trade_ledger(const std::string& path, std::uint64_t fingerprint);

// The LedgerError text for a ledger damaged in the middle.
std::string corrupt_ledger_message(const std::string& path, const LedgerContents& c);

class TradeLedger {
 public:
  // Carries out `plan` (plan_trade_ledger; the decision to start is taken):
  // cuts a torn tail, or makes the file.
  TradeLedger(const LedgerPlan& plan, std::uint64_t fingerprint, LedgerRing& ring);
  // Both steps at once (tests and tools).
  TradeLedger(std::string path, std::uint64_t fingerprint, LedgerRing& ring);
  ~TradeLedger();
  TradeLedger(const TradeLedger&) = delete;
  TradeLedger& operator=(const TradeLedger&) = delete;

  // What the file held when opened: the next trade_seq, the last request
  // with a trade in it, and the last execution report seq of its trades
  // (what TradeTap starts from).
  std::uint64_t next_trade_seq() const noexcept { return plan_.next_trade_seq; }
  std::uint64_t last_request_seq() const noexcept { return plan_.last_request_seq; }
  std::uint64_t last_exec_seq() const noexcept { return plan_.last_exec_seq; }
  std::uint64_t cut_bytes() const noexcept { return cut_bytes_; }
  const std::string& cut_reason() const noexcept { return cut_reason_; }
  const std::string& path() const noexcept { return path_; }

  // Start-up, before the writer's thread runs: appends the trades the
  // journal's replay re-made (TradeTap::collect_replay_into) and makes them
  // durable. Throws std::runtime_error naming the path on a write failure.
  void write_recovered(const std::vector<TradeRecord>& trades);

  // Agent: drains the ring into the file; fdatasync at most once a ms.
  int do_work() noexcept;
  void on_close() noexcept;
  std::string_view role_name() const noexcept { return "trade-ledger"; }

  // Non-empty once a write or sync failed (the writer then stops writing:
  // the server reports it and shuts down, as for the journal).
  // Any thread (the controlling thread's failure check).
  bool failed() const noexcept { return failed_flag_.load(std::memory_order_acquire); }
  std::string error() const { return failed() ? error_ : std::string(); }

  std::uint64_t trades_written() const noexcept { return written_.get(); }
  // The execution report seq of the last trade written (the later of its two
  // sides): every trade up to it is in the file (kill -9 safe: written, in
  // the page cache). Any thread (the snapshotter's).
  std::uint64_t written_exec_seq() const noexcept { return written_exec_seq_.load(std::memory_order_acquire); }
  void place_counters(core::CountersFile& file);

 private:
  bool write_all(const void* data, std::size_t n) noexcept;
  void sync_now() noexcept;

  std::string path_;
  LedgerPlan plan_;
  LedgerRing& ring_;
  int fd_ = -1;
  std::uint64_t cut_bytes_ = 0;
  std::string cut_reason_;
  std::vector<TradeRecord> batch_;
  bool dirty_ = false;
  std::uint64_t last_sync_ns_ = 0;
  bool failed_ = false;   // the writer's own view
  std::string error_;     // written once, before failed_flag_ is published
  std::atomic<bool> failed_flag_{false};
  std::atomic<std::uint64_t> written_exec_seq_{0};
  core::Counter written_;
  core::Counter syncs_;
  core::Counter last_seq_;
};

}  // namespace nanotick::exchange
