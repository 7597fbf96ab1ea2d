// Periodic engine snapshots without stopping the critical path (docs/
// EXCHANGE.md "Snapshots and recovery"): on the auxiliary thread, a shadow
// MatchingEngine follows the journal (reading the segment files the
// sequencer appends to, up to JournalWriter::written_seq(), what is in its files) and every
// `snapshot_every` records writes its state as an engine snapshot file. The
// shadow is the journal replayed continuously, so a snapshot is exactly the
// state recovery would rebuild at that seq. Before writing a snapshot it
// fdatasyncs the journal, so a snapshot is never ahead of what the journal
// holds on disk (a machine crash could otherwise leave a snapshot the journal
// cannot continue). And it waits for the trade ledger (hold_for_ledger): a
// snapshot is written only once the ledger's writer has written every trade
// the snapshot's state holds, because recovery replays only the journal after
// the snapshot, and a trade the ledger had not written by a kill -9 would
// never be put back (the soak found 31 trades lost that way). While a due
// snapshot waits, the shadow applies no further records, so a ledger a few
// trades behind under steady load cannot starve it. Runs on a thread of its own: a snapshot takes
// milliseconds and must not hold up the snapshot feed's ring. An agent; not
// thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controls/controlled_engine.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "engine/engine_state.hpp"
#include "engine/matching_engine.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_writer.hpp"

namespace nanotick::exchange {

class Snapshotter {
 public:
  // Starts from `state` and `balances`, the engine and the accounts after
  // journal record `state_seq`.
  Snapshotter(const ExchangeConfig& config, JournalWriter& journal, const engine::EngineState& state,
              const controls::ControlsState& balances, std::uint64_t state_seq);
  ~Snapshotter();
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  std::string_view role_name() const noexcept { return "snapshotter"; }
  int do_work() noexcept;

  // Catches up with the journal and writes a snapshot if anything happened
  // since the last one (clean shutdown, after the critical threads stopped;
  // nothing when snapshots are off: snapshot_every = 0).
  void finish();

  // Snapshots wait for `ledger` to have written every trade they hold (see
  // above); without it (tests of the snapshotter alone) they do not wait.
  void hold_for_ledger(const TradeLedger* ledger) noexcept { ledger_ = ledger; }

  std::uint64_t applied_seq() const noexcept { return applied_seq_; }
  std::uint64_t snapshots_written() const noexcept { return written_.get(); }
  // Start-up, before the snapshotter's thread runs.
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    file.place(written_, "engine_snapshots_written");
    file.place(last_snapshot_seq_, "engine_snapshot_last_seq", core::CounterKind::kGauge);
    file.place(held_for_ledger_, "engine_snapshots_held_for_ledger");
  }
  std::uint64_t last_snapshot_seq() const noexcept { return last_snapshot_seq_.get(); }
  // Non-empty after a failure (the snapshotter stops; the server goes on:
  // the journal alone still recovers everything).
  std::string error() const;

 private:
  // Keeps the execution report seq of the shadow's last fill: the trade the
  // ledger must hold before a snapshot (a maker's fill follows its taker's,
  // and the ledger's record of a trade carries the later of the two).
  struct LastFillSink {
    void on_report(const engine::ExecReport& r) noexcept {
      if (r.type == engine::ReportType::kFill) last_fill_seq = r.seq;
    }
    void on_market_data(const engine::MdEvent&) noexcept {}
    std::uint64_t last_fill_seq = 0;
  };
  bool ledger_holds_every_trade() const noexcept;
  // Reads up to `count` records from `first` on into buffer_ (one pread,
  // stopping at the end of buffer_ and of the segment); returns how many
  // leading ones are whole and valid (0: a failure).
  std::size_t read_records(std::uint64_t first, std::size_t count);
  bool open_segment_for(std::uint64_t seq);
  void snapshot_now();

  const ExchangeConfig& config_;
  JournalWriter& journal_;  // read (written_seq) and synced before each snapshot
  std::uint64_t fingerprint_;
  LastFillSink sink_;
  controls::ControlledEngine<LastFillSink> shadow_;  // the controls too: their refusals change the books
  std::uint64_t applied_seq_;
  core::Counter written_;
  core::Counter last_snapshot_seq_;
  core::Counter held_for_ledger_;  // passes a due snapshot waited for the ledger
  const TradeLedger* ledger_ = nullptr;
  int fd_ = -1;
  std::uint64_t segment_first_ = 0;
  std::uint64_t segment_records_ = 0;
  std::vector<JournalRecord> buffer_;  // one batch read by read_records()
  bool failed_ = false;
  std::string error_;  // written once, before failed_ is published
  std::atomic<bool> failed_flag_{false};
};

}  // namespace nanotick::exchange
