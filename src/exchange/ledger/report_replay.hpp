// Missed execution reports sent again (docs/PROTOCOL.md §1.8): a client's
// ReportsRequest, taken by the gateway, is served from the venue's trade
// ledger on the thread that writes it (the aux thread) and answered through
// the gateway: one ExecutionReport (kFill, flags kReportReplayed) per fill
// of the client with exec_seq > after_exec_seq, in exec_seq order, then a
// ReportsReplayed.
//
// Why on the ledger's thread: a fill the client saw acknowledged was put
// into the LedgerRing by the engine's thread before its report reached the
// gateway, so before the client could ask. The replayer pops the request
// (acquire: everything the gateway had seen happened before) and then drains
// the LedgerRing into the file itself (TradeLedger::do_work, same thread):
// the file then holds every such fill. A fill made later may come live and
// replayed both; the client tells them apart by exec_seq.
//
// What a ledger record cannot give is 0 in a replayed report (PROTOCOL.md
// §1.8): price (the order's limit), order_qty, cum_qty, leaves_qty,
// order_type, ref_seq.
//
// Not thread-safe: ReportReplayer runs on the aux thread; the rings are its
// only link to the gateway (one producer, one consumer each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/spsc_ring.hpp"
#include "exchange/ledger/trade_record.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::exchange {

class TradeLedger;

// gateway -> replayer: one per accepted ReportsRequest.
struct ReplayRequest {
  std::uint32_t session_index = 0;  // the gateway's slot, and the connection on it:
  std::uint16_t generation = 0;     // answers for a connection that ended are dropped
  std::uint32_t client = 0;
  std::uint64_t after_exec_seq = 0;
};
// replayer -> gateway: the reports, then the end (`end` set: `done` is sent).
struct ReplayAnswer {
  std::uint32_t session_index = 0;
  std::uint16_t generation = 0;
  bool end = false;
  proto::ExecutionReport report{};
  proto::ReportsReplayed done{};
};
inline constexpr std::size_t kReplayRequestRingCapacity = 256;  // more than max_sessions: one per session
inline constexpr std::size_t kReplayAnswerRingCapacity = 4096;  // a long replay waits for room, a chunk at a time
using ReplayRequestRing = core::SpscRing<ReplayRequest, kReplayRequestRingCapacity>;
using ReplayAnswerRing = core::SpscRing<ReplayAnswer, kReplayAnswerRingCapacity>;

// The fills of `client` in trade `t` numbered after `after` (0, 1, or 2 for
// a trade with itself), as replayed ExecutionReports in exec_seq order; the
// count written to `out`.
std::size_t replayed_fills(const TradeRecord& t, std::uint32_t client, std::uint64_t after,
                           proto::ExecutionReport (&out)[2]) noexcept;

class ReportReplayer {
 public:
  // `ledger_path`: the file `writer` writes (read through a descriptor of
  // its own). `writer`: drained before each request is served (nullptr:
  // the file is read as it is; tests).
  ReportReplayer(std::string ledger_path, TradeLedger* writer, ReplayRequestRing& requests,
                 ReplayAnswerRing& answers) noexcept;
  ~ReportReplayer();
  ReportReplayer(const ReportReplayer&) = delete;
  ReportReplayer& operator=(const ReportReplayer&) = delete;

  std::string_view role_name() const noexcept { return "report-replay"; }
  // Serves the request in hand as far as the answer ring has room, or takes
  // the next one. Work done: answers queued.
  int do_work() noexcept;
  void place_counters(core::CountersFile& file);

  std::uint64_t requests_served() const noexcept { return served_.get(); }
  std::uint64_t reports_replayed() const noexcept { return replayed_.get(); }
  std::uint64_t read_failures() const noexcept { return read_failures_.get(); }

 private:
  bool start(const ReplayRequest& rq) noexcept;
  // Reads on from offset_; false once the replay is complete (its end queued).
  bool step(int& work) noexcept;
  bool push_answer(const proto::ExecutionReport* report) noexcept;

  std::string path_;
  TradeLedger* writer_;
  ReplayRequestRing& requests_;
  ReplayAnswerRing& answers_;
  int fd_ = -1;
  bool active_ = false;
  ReplayRequest job_{};
  std::uint64_t offset_ = 0;   // the next record's byte offset in the file
  std::uint64_t end_ = 0;      // the file's whole records when the request was taken: the replay stops there
  std::uint64_t through_ = 0;  // the highest exec_seq read
  std::uint64_t count_ = 0;
  proto::ExecutionReport held_[2]{};  // a record's reports not yet queued (answer ring full)
  std::size_t held_n_ = 0;
  std::size_t held_i_ = 0;
  core::Counter served_;
  core::Counter replayed_;
  core::Counter read_failures_;
};

}  // namespace nanotick::exchange
