// Periodic engine snapshots without stopping the critical path (docs/
// EXCHANGE.md "Snapshots and recovery"): on the auxiliary thread, a shadow
// MatchingEngine follows the journal (reading the segment files the
// sequencer appends to, up to JournalWriter::appended_seq()) and every
// `snapshot_every` records writes its state as an engine snapshot file. The
// shadow is the journal replayed continuously, so a snapshot is exactly the
// state recovery would rebuild at that seq. Before writing a snapshot it
// fdatasyncs the journal, so a snapshot is never ahead of what the journal
// holds on disk (a machine crash could otherwise leave a snapshot the journal
// cannot continue). Runs on a thread of its own: a snapshot takes
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
#include "exchange/journal_format.hpp"
#include "exchange/journal_writer.hpp"

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

  std::uint64_t applied_seq() const noexcept { return applied_seq_; }
  std::uint64_t snapshots_written() const noexcept { return written_.get(); }
  // Start-up, before the snapshotter's thread runs.
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    file.place(written_, "engine_snapshots_written");
    file.place(last_snapshot_seq_, "engine_snapshot_last_seq", core::CounterKind::kGauge);
  }
  std::uint64_t last_snapshot_seq() const noexcept { return last_snapshot_seq_.get(); }
  // Non-empty after a failure (the snapshotter stops; the server goes on:
  // the journal alone still recovers everything).
  std::string error() const;

 private:
  struct NullSink {
    void on_report(const engine::ExecReport&) noexcept {}
    void on_market_data(const engine::MdEvent&) noexcept {}
  };
  // Reads up to `count` records from `first` on into buffer_ (one pread,
  // stopping at the end of buffer_ and of the segment); returns how many
  // leading ones are whole and valid (0: a failure).
  std::size_t read_records(std::uint64_t first, std::size_t count);
  bool open_segment_for(std::uint64_t seq);
  void snapshot_now();

  const ExchangeConfig& config_;
  JournalWriter& journal_;  // read (appended_seq) and synced before each snapshot
  std::uint64_t fingerprint_;
  NullSink sink_;
  controls::ControlledEngine<NullSink> shadow_;  // the controls too: their refusals change the books
  std::uint64_t applied_seq_;
  core::Counter written_;
  core::Counter last_snapshot_seq_;
  int fd_ = -1;
  std::uint64_t segment_first_ = 0;
  std::uint64_t segment_records_ = 0;
  std::vector<JournalRecord> buffer_;  // one batch read by read_records()
  bool failed_ = false;
  std::string error_;  // written once, before failed_ is published
  std::atomic<bool> failed_flag_{false};
};

}  // namespace nanotick::exchange
