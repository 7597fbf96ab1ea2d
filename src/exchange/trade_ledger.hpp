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
// trade_seq does not follow ends the good part, and what follows is cut (a
// write the machine did not finish: records are only ever appended) -- the
// open reports what it cut. Records are written as they are drained and
// made durable by an fdatasync at most once a millisecond while there is
// something new (and at close).
//
// Thread-safety: TradeLedger is the auxiliary thread's agent (one thread);
// its counters may be read from any thread. read_trade_ledger() is for
// tools and tests. Start-up and the reader throw std::runtime_error naming
// the path and what is wrong.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "exchange/trade_record.hpp"

namespace nanotick::exchange {

struct LedgerContents {
  std::vector<TradeRecord> trades;  // the good part, in trade_seq order
  std::uint64_t fingerprint = 0;
  std::uint64_t created_ns = 0;
  std::uint64_t good_bytes = 0;     // header + good records
  std::uint64_t file_bytes = 0;
  std::string problem;              // why the good part ends before the file does ("" if it does not)
};

// Reads and checks `path` (throws if it cannot be opened or has no valid header).
LedgerContents read_trade_ledger(const std::string& path);

class TradeLedger {
 public:
  // Opens (or creates) the ledger at `path` for a venue with `fingerprint`;
  // a file of another fingerprint is refused. A torn tail is cut (cut_bytes()).
  TradeLedger(std::string path, std::uint64_t fingerprint, LedgerRing& ring);
  ~TradeLedger();
  TradeLedger(const TradeLedger&) = delete;
  TradeLedger& operator=(const TradeLedger&) = delete;

  // What the file held when opened: the next trade_seq, the last request
  // with a trade in it, and the last execution report seq of its trades
  // (what TradeTap starts from).
  std::uint64_t next_trade_seq() const noexcept { return next_trade_seq_; }
  std::uint64_t last_request_seq() const noexcept { return last_request_seq_; }
  std::uint64_t last_exec_seq() const noexcept { return last_exec_seq_; }
  std::uint64_t cut_bytes() const noexcept { return cut_bytes_; }
  const std::string& cut_reason() const noexcept { return cut_reason_; }
  const std::string& path() const noexcept { return path_; }

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
  void place_counters(core::CountersFile& file);

 private:
  bool write_all(const void* data, std::size_t n) noexcept;
  void sync_now() noexcept;

  std::string path_;
  LedgerRing& ring_;
  int fd_ = -1;
  std::uint64_t next_trade_seq_ = 1;
  std::uint64_t last_request_seq_ = 0;
  std::uint64_t last_exec_seq_ = 0;
  std::uint64_t cut_bytes_ = 0;
  std::string cut_reason_;
  std::vector<TradeRecord> batch_;
  bool dirty_ = false;
  std::uint64_t last_sync_ns_ = 0;
  bool failed_ = false;   // the writer's own view
  std::string error_;     // written once, before failed_flag_ is published
  std::atomic<bool> failed_flag_{false};
  core::Counter written_;
  core::Counter syncs_;
  core::Counter last_seq_;
};

}  // namespace nanotick::exchange
