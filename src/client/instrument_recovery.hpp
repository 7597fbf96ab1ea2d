// The market data consumer's per-instrument recovery (docs/TRADER.md "Market
// data sequence logic"): each instrument's state -- live, or stale and
// waiting for a snapshot -- the messages buffered meanwhile, and which
// snapshot may end the wait.
// - Recovery, per instrument: its incremental messages are buffered (one
//   pool of buffer_messages for all instruments, a RecoveryBuffer). The next
//   complete snapshot of it (SnapshotStart, its orders, SnapshotEnd, no gap in
//   the snapshot channel's seq in between) replaces its book
//   (BookReplica::load, by the consumer), then the buffered messages with
//   instrument_seq above the snapshot's are applied. That is only correct
//   when they continue the snapshot without a hole, so a snapshot is used
//   only if it reflects at least what the buffer misses: instrument_seq >=
//   the one before the buffer's first message (the buffer is kept
//   contiguous: a message that does not follow its tail restarts it; an
//   overflow empties it and requires the lost message), and, while nothing
//   has been buffered since a gap, last_seq >= that gap's end (the gap may
//   have held this instrument's messages). Otherwise the consumer waits for
//   a later snapshot (e.g. after an overflow the buffer starts too late for
//   an older snapshot). Messages with global seq <= the loaded snapshot's
//   last_seq still to come (held or in flight) are skipped: the snapshot
//   has them (State::skip_through).
// - Late join: every instrument starts in recovery. A snapshot is used only
//   once the incremental channel has started (its first packet or
//   heartbeat), and must reach the seq just before that packet: the
//   messages before it were never seen.
//
// Separate from the consumer because it is the one state machine (stale ->
// live) that all of the consumer's triggers (seq jumps, book rejects,
// TopOfBook and audit mismatches) lead into, with its own bookkeeping (what
// a snapshot must reflect, the buffer, the stale count and the recovery
// times); the consumer decides when an instrument goes stale and owns the
// books and the handler.
//
// Not thread-safe: the consumer's thread calls everything. Nothing allocates
// after the constructor.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/client_types.hpp"
#include "client/md_consumer_types.hpp"
#include "client/recovery_buffer.hpp"
#include "core/compiler.hpp"
#include "core/histogram.hpp"
#include "proto/market_data.hpp"

namespace nanotick::client {

class InstrumentRecovery {
 public:
  // One instrument. The consumer reads it on every message, and writes
  // last_iseq / last_seq as it applies messages to a live instrument's book,
  // `touched` and `became_live` as it reports a packet; the rest is written
  // here.
  struct State {
    bool live = false;
    bool touched = false;      // in the consumer's touched list for the packet being applied
    bool became_live = false;  // on_instrument_live due at the end of this packet
    RecoveryReason reason = RecoveryReason::kLateJoin;
    std::uint64_t last_iseq = 0;      // live: instrument_seq of the last applied message
    std::uint64_t last_seq = 0;       // live: global seq of it (or the loaded snapshot's last_seq)
    std::uint64_t skip_through = 0;   // messages with seq <= this are in the loaded snapshot
    std::uint64_t required_iseq = 0;  // recovering: a usable snapshot reflects at least this instrument_seq
    std::uint64_t required_seq = 0;   // recovering: ... and at least this global seq
    TimeNs stale_since = 0;
    TimeNs recovery_ns = 0;  // of the recovery that just completed (for on_instrument_live)
  };

  // Every instrument starts in recovery (late join). `counters` (the
  // consumer's) must outlive this.
  InstrumentRecovery(std::uint32_t instruments, std::uint32_t buffer_messages, MdConsumerCounters& counters)
      : states_(instruments), stale_count_(instruments), counters_(counters), buffer_(buffer_messages, instruments) {
    counters_.recoveries_started[static_cast<std::size_t>(RecoveryReason::kLateJoin)].add(instruments);
  }
  InstrumentRecovery(const InstrumentRecovery&) = delete;
  InstrumentRecovery& operator=(const InstrumentRecovery&) = delete;

  std::size_t size() const noexcept { return states_.size(); }
  // Precondition: inst < size().
  State& state(InstrumentId inst) noexcept { return states_[inst]; }
  const State& state(InstrumentId inst) const noexcept { return states_[inst]; }
  bool is_live(InstrumentId inst) const noexcept { return inst < states_.size() && states_[inst].live; }
  std::uint32_t stale_count() const noexcept { return stale_count_; }
  std::uint32_t buffered_messages() const noexcept { return buffer_.used(); }
  // Durations of completed recoveries (stale -> live), ns; the late join's too.
  const core::LatencyHistogram& recovery_ns() const noexcept { return recovery_ns_; }

  // The late join's recoveries are timed from the first datagram or timer call.
  NT_ALWAYS_INLINE void note_time(TimeNs now) noexcept {
    if (time_started_) [[likely]]
      return;
    time_started_ = true;
    for (State& st : states_) st.stale_since = now;
  }

  // Global seqs up to `seq` were never seen (before the incremental channel
  // started) or were given up in a gap that may have held messages of
  // instruments in recovery that buffered nothing since: their snapshot must
  // reach past it.
  void require_seq(std::uint64_t seq) noexcept {
    for (State& st : states_)
      if (!st.live) st.required_seq = std::max(st.required_seq, seq);
  }

  // A recovering instrument's snapshot must also reflect instrument_seq `iseq`.
  void require_instrument_seq(InstrumentId inst, std::uint64_t iseq) noexcept {
    State& st = states_[inst];
    st.required_iseq = std::max(st.required_iseq, iseq);
  }

  // A live instrument enters recovery. Returns whether the handler must be
  // told (on_instrument_stale): not when it went live earlier in this very
  // packet, since the handler never heard that.
  [[nodiscard]] bool go_stale(InstrumentId inst, RecoveryReason reason, TimeNs now) noexcept {
    State& st = states_[inst];
    st.live = false;
    st.reason = reason;
    st.stale_since = now;
    st.required_iseq = st.last_iseq;
    st.required_seq = 0;
    ++stale_count_;
    counters_.recoveries_started[static_cast<std::size_t>(reason)].add();
    // Live since earlier in this very packet: the handler never heard it.
    if (st.became_live) {
      st.became_live = false;
      return false;
    }
    return true;
  }

  // Buffers an incremental message of an instrument in recovery. Keeps the
  // instrument's buffer contiguous in instrument_seq, and records what a
  // snapshot must reflect for the buffer to continue it.
  void buffer_message(InstrumentId inst, const std::uint8_t* m, std::size_t length, std::uint64_t seq,
                      std::uint64_t iseq) noexcept {
    State& st = states_[inst];
    if (!buffer_.empty(inst) && iseq != buffer_.last_instrument_seq(inst) + 1) {
      counters_.buffer_restarts.add();
      buffer_.clear(inst);
    }
    if (buffer_.empty(inst) && iseq > 0) st.required_iseq = std::max(st.required_iseq, iseq - 1);
    // This message's instrument_seq now says what was missed before it,
    // whatever gap came earlier.
    st.required_seq = 0;
    if (!buffer_.push(inst, m, length, seq, iseq)) [[unlikely]] {
      counters_.buffer_overflows.add();
      buffer_.clear(inst);
      st.required_iseq = std::max(st.required_iseq, iseq);
      return;
    }
    counters_.buffered.add();
  }

  // A complete snapshot of s.instrument: whether it may be loaded -- the
  // instrument is in recovery, the incremental channel has started, and the
  // snapshot reaches what the buffer misses. Counts why not.
  bool can_use(const proto::MdSnapshotBound& s, bool incremental_started) noexcept {
    const State& st = states_[s.instrument];
    if (st.live) {
      counters_.snapshots_ignored_live.add();
      return false;
    }
    if (!incremental_started) {
      counters_.snapshots_before_start.add();
      return false;
    }
    if (s.instrument_seq < st.required_iseq || s.last_seq < st.required_seq) {
      counters_.snapshots_too_old.add();
      return false;
    }
    return true;
  }

  // The consumer loaded snapshot s (can_use said yes) into the instrument's
  // book: replays the buffered messages past it, each through
  // apply(type, bytes) -> bool (false: the book refused it), and, if all
  // applied, the instrument goes live (became_live: the consumer tells the
  // handler at the end of the packet). Returns whether it went live; if not
  // (counted), it waits for a snapshot that reflects everything buffered.
  // The buffer is emptied either way.
  template <typename Apply>
  bool complete(const proto::MdSnapshotBound& s, TimeNs now, Apply&& apply) noexcept {
    const InstrumentId inst = s.instrument;
    State& st = states_[inst];
    std::uint64_t last_iseq = s.instrument_seq;
    std::uint64_t last_seq = s.last_seq;
    std::uint64_t failed_through = 0;  // instrument_seq of the last message not applied after a refusal
    buffer_.drain(inst, [&](const RecoveryBuffer::Entry& e) {
      if (e.instrument_seq <= s.instrument_seq) return;  // in the snapshot
      if (failed_through == 0) {
        const auto type = static_cast<proto::MdMsgType>(e.bytes[2]);
        if (apply(type, e.bytes.data())) {
          last_iseq = e.instrument_seq;
          last_seq = e.seq;
          return;
        }
      }
      failed_through = e.instrument_seq;
    });
    if (failed_through != 0) [[unlikely]] {
      // The snapshot plus the buffer did not make a consistent book: wait
      // for a snapshot that reflects everything buffered.
      counters_.replay_failures.add();
      st.required_iseq = std::max(st.required_iseq, failed_through);
      return false;
    }
    st.live = true;
    st.last_iseq = last_iseq;
    st.last_seq = last_seq;
    st.skip_through = s.last_seq;
    st.required_iseq = 0;
    st.required_seq = 0;
    st.recovery_ns = now >= st.stale_since ? now - st.stale_since : 0;
    st.became_live = true;
    --stale_count_;
    counters_.snapshots_used.add();
    counters_.recoveries_completed[static_cast<std::size_t>(st.reason)].add();
    recovery_ns_.record(st.recovery_ns);
    return true;
  }

 private:
  std::vector<State> states_;
  std::uint32_t stale_count_;
  bool time_started_ = false;  // the first `now` was seen
  MdConsumerCounters& counters_;
  RecoveryBuffer buffer_;
  core::LatencyHistogram recovery_ns_;
};

}  // namespace nanotick::client
