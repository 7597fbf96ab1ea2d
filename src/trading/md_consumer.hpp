// The trading client's market data consumer and book builder (docs/TRADER.md
// "Pipeline", "Market data sequence logic"; wire format PROTOCOL.md §2): it
// takes the datagrams of the incremental and snapshot channels, validates
// each one completely (proto::parse_packet), keeps an order-by-order
// book::BookReplica per instrument and tells the Handler (a template
// parameter: static dispatch, see MdHandler) about trades, book updates and
// instruments going stale and live. Pure logic: no sockets (MdFeed reads
// them), no clock reads (times come in as arguments), nothing allocates
// after the constructor.
//
// Sequence logic. Incremental packets carry the global sequence number of
// their first message (the others follow +1); every incremental message
// also carries its instrument's own sequence number (instrument_seq: 1, 2,
// 3... per instrument, no gaps), so a loss can be pinned to the instruments
// it hit:
// - Duplicates: a packet wholly below the next expected seq is dropped (a
//   packet that overlaps it has only its new messages applied).
// - Reordering: a packet (or heartbeat) ahead of the next expected seq is
//   held, up to reorder_packets packets and reorder_ns (on_timer). If the
//   hole fills meanwhile, everything is applied in order: nobody notices.
// - Gap: when the window is full or expires, the consumer gives up the
//   lowest hole and moves on (messages_lost counts the skipped seqs). It
//   does not know which instruments the lost messages were for: each
//   instrument checks its own instrument_seq on its next message. One that
//   follows on (last + 1) lost nothing and keeps flowing; one that jumps
//   enters recovery. Healthy instruments are never paused.
// - Recovery, per instrument: its incremental messages are buffered (one
//   pool of buffer_messages for all instruments). The next complete snapshot
//   of it (SnapshotStart, its orders, SnapshotEnd, no gap in the snapshot
//   channel's seq in between) replaces its book (BookReplica::load), then
//   the buffered messages with instrument_seq above the snapshot's are
//   applied. That is only correct when they continue the snapshot without a
//   hole, so a snapshot is used only if it reflects at least what the buffer
//   misses: instrument_seq >= the one before the buffer's first message (the
//   buffer is kept contiguous: a message that does not follow its tail
//   restarts it; an overflow empties it and requires the lost message), and,
//   while nothing has been buffered since a gap, last_seq >= that gap's end
//   (the gap may have held this instrument's messages). Otherwise the
//   consumer waits for a later snapshot (e.g. after an overflow the buffer
//   starts too late for an older snapshot). Messages with global seq <= the
//   loaded snapshot's last_seq still to come (held or in flight) are
//   skipped: the snapshot has them.
// - Late join: every instrument starts in recovery. A snapshot is used only
//   once the incremental channel has started (its first packet or
//   heartbeat), and must reach the seq just before that packet: the
//   messages before it were never seen.
// - Snapshot audit: a lost last packet before a quiet period cannot be seen
//   by instrument_seq (no next message). So for a live instrument, when a
//   snapshot of it arrives with last_seq <= the global seq we processed, and
//   our last applied message of it has seq <= that last_seq (the snapshot
//   and our book describe the same moment), our instrument_seq must equal
//   the snapshot's and our order count its `orders`; otherwise the
//   instrument recovers (audit_mismatches), from that very snapshot if it
//   completes.
// - A message the book refuses (e.g. an unknown order id) or a TopOfBook
//   that differs from the book's best levels (price and total quantity; qty
//   0 = side empty) also sends the instrument to recovery: the book is wrong.
// - An incremental heartbeat (count 0) announces the next seq: above the
//   expected one it is a gap like any other (held, then skipped).
// - The snapshot channel is not reordered: a hole in its seq abandons the
//   snapshot being collected (the next cycle brings another).
//
// Handler calls: on_trade before the book applies that trade (features see
// the touch the trade hit); on_instrument_stale at once when an instrument
// enters recovery (not at start: all start stale); on_instrument_live(inst,
// recovery_ns) and on_book_update(inst, rx_tsc) after the whole packet that
// made them so was applied, so the strategy never reads half a packet.
// Buffered trades replayed after a snapshot reach on_trade too, with the
// rx_tsc of the snapshot packet that completed the recovery.
//
// Not thread-safe: one thread calls everything and the Handler runs on it,
// inside on_datagram / on_timer (a callback must not call back into the
// consumer). counters() may be read from any thread (core::Counter).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "book/book_replica.hpp"
#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/histogram.hpp"
#include "proto/market_data.hpp"
#include "proto/md_packet.hpp"
#include "trading/recovery_buffer.hpp"
#include "trading/reorder_window.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

struct MdConsumerConfig {
  std::uint32_t reorder_packets = 8;  // packets held ahead of a hole (0: a hole is a gap at once)
  TimeNs reorder_ns = 200'000;        // how long the oldest held packet waits for its hole
  std::uint32_t buffer_messages = 65536;  // incrementals buffered for instruments in recovery, all together

  // Largest allowed values: each held packet reserves 64 KiB, each buffered
  // message 72 bytes, and a window longer than a second stalls every
  // instrument behind one lost packet for that long.
  static constexpr std::uint32_t kMaxReorderPackets = 1024;
  static constexpr TimeNs kMaxReorderNs = 1'000'000'000;
  static constexpr std::uint32_t kMaxBufferMessages = 1u << 24;

  // Throws std::invalid_argument "md consumer: <field>: <problem>".
  void validate() const;
};

// Why an instrument entered recovery.
enum class RecoveryReason : std::uint8_t {
  kLateJoin = 0,          // the consumer started: no book yet
  kSeqJump = 1,           // its instrument_seq jumped (messages lost in a gap)
  kBookReject = 2,        // the book refused one of its messages
  kTopOfBookMismatch = 3, // a TopOfBook differed from the book's best levels
  kAuditMismatch = 4,     // a snapshot of the same moment disagreed (seq or order count)
};
inline constexpr std::size_t kRecoveryReasons = static_cast<std::size_t>(RecoveryReason::kAuditMismatch) + 1;
std::string_view to_string(RecoveryReason r) noexcept;

inline constexpr std::size_t kPacketErrors = static_cast<std::size_t>(proto::PacketError::kCountMismatch) + 1;

// Single writer (the consumer's thread); any thread may read.
struct MdConsumerCounters {
  std::array<core::Counter, 2> packets;     // valid packets by channel (0 incremental, 1 snapshot), heartbeats included
  std::array<core::Counter, 2> heartbeats;  // of which heartbeats
  std::array<core::Counter, kPacketErrors> invalid;  // dropped datagrams by proto::PacketError (kNone unused)
  core::Counter bad_seq;               // valid layout but first_seq 0, or first_seq + count overflows
  core::Counter duplicates;            // incremental packets already applied or already held
  core::Counter snapshot_duplicates;   // snapshot packets already seen
  core::Counter snapshot_channel_restarts;  // the snapshot channel's seq started over (exchange restart)
  core::Counter held;                  // incremental packets held ahead of a hole
  core::Counter reordered;             // held packets applied in order once their hole filled
  core::Counter gaps;                  // holes given up (window full or expired)
  core::Counter messages_lost;         // global seqs skipped by those gaps
  core::Counter snapshot_gaps;         // holes in the snapshot channel's seq
  core::Counter instrument_seq_jumps;  // live instruments whose next message did not follow on
  core::Counter unknown_instrument;    // messages naming an instrument outside the table (ignored)
  core::Counter skipped_in_snapshot;   // messages the loaded snapshot already reflected
  core::Counter buffered;              // messages buffered for instruments in recovery
  core::Counter buffer_restarts;       // a recovering instrument's buffer lost contiguity and restarted
  core::Counter buffer_overflows;      // a message found the buffer full: its instrument's buffer dropped
  std::array<core::Counter, kRecoveryReasons> recoveries_started;    // by RecoveryReason
  std::array<core::Counter, kRecoveryReasons> recoveries_completed;  // by the reason that started them
  core::Counter snapshots_used;
  core::Counter snapshots_ignored_live;  // complete or not, of an instrument that did not need one
  core::Counter snapshots_too_old;       // did not reach what the buffer misses: wait for a later one
  core::Counter snapshots_incomplete;    // abandoned: a hole in the snapshot channel
  core::Counter snapshots_malformed;     // Start / Order / End that do not agree (abandoned)
  core::Counter snapshots_before_start;  // complete before the incremental channel started (not usable)
  core::Counter snapshots_unloadable;    // more orders than the instrument's capacity, or load() refused
  core::Counter audits;                  // live instruments checked against a snapshot of the same moment
  core::Counter audit_mismatches;
  core::Counter book_rejects;            // incremental messages the book refused (by result: books().rejected(),
                                         // except trades, checked before they reach it)
  core::Counter top_of_book_mismatches;
  core::Counter replay_failures;         // a buffered message refused after a snapshot load: wait for another
};

// What the consumer calls (static dispatch). See the file comment for when.
template <typename H>
concept MdHandler = requires(H& h, const TradeEvent& trade, InstrumentId inst, std::uint64_t rx_tsc, TimeNs ns) {
  h.on_trade(trade, rx_tsc);
  h.on_book_update(inst, rx_tsc);
  h.on_instrument_stale(inst);
  h.on_instrument_live(inst, ns);
};

template <typename Handler>
class MdConsumer {
  static_assert(MdHandler<Handler>, "Handler must have on_trade, on_book_update, on_instrument_stale, on_instrument_live");

 public:
  // Start-up: throws std::invalid_argument for a bad config or instrument table.
  MdConsumer(std::span<const book::InstrumentCapacity> instruments, const MdConsumerConfig& config, Handler& handler)
      : config_(validated(config)),
        handler_(handler),
        books_(instruments),
        window_(config.reorder_packets),
        buffer_(config.buffer_messages, static_cast<std::uint32_t>(instruments.size())),
        state_(instruments.size()),
        touched_(instruments.size()),
        staging_(largest_book(instruments)),
        stale_count_(static_cast<std::uint32_t>(instruments.size())) {
    counters_.recoveries_started[static_cast<std::size_t>(RecoveryReason::kLateJoin)].add(instruments.size());
  }
  MdConsumer(const MdConsumer&) = delete;
  MdConsumer& operator=(const MdConsumer&) = delete;

  // A datagram received from `channel`. Invalid packets are counted by
  // reason and dropped.
  void on_datagram(proto::Channel channel, std::span<const std::uint8_t> datagram, TimeNs now,
                   std::uint64_t rx_tsc) noexcept {
    note_time(now);
    if (channel != proto::Channel::kIncremental && channel != proto::Channel::kSnapshot) [[unlikely]] {
      counters_.invalid[static_cast<std::size_t>(proto::PacketError::kWrongChannel)].add();
      return;
    }
    proto::PacketHeader h;
    const proto::PacketError e = proto::parse_packet(datagram, channel, h);
    if (e != proto::PacketError::kNone) [[unlikely]] {
      counters_.invalid[static_cast<std::size_t>(e)].add();
      return;
    }
    if (h.first_seq == 0 || h.first_seq > std::numeric_limits<std::uint64_t>::max() - h.count) [[unlikely]] {
      counters_.bad_seq.add();
      return;
    }
    const std::size_t ch = channel == proto::Channel::kIncremental ? 0 : 1;
    counters_.packets[ch].add();
    if (h.count == 0) counters_.heartbeats[ch].add();
    if (ch == 0) {
      on_incremental(datagram, h, now, rx_tsc);
    } else {
      on_snapshot(datagram, h, now, rx_tsc);
    }
  }

  // Gives up the holes whose oldest held packet waited reorder_ns or more.
  void on_timer(TimeNs now) noexcept {
    note_time(now);
    while (!window_.empty() && now >= window_.oldest_arrival() && now - window_.oldest_arrival() >= config_.reorder_ns)
      skip_to(window_.lowest_first_seq(), now);
  }

  const book::BookReplica& books() const noexcept { return books_; }
  bool is_live(InstrumentId inst) const noexcept { return inst < state_.size() && state_[inst].live; }
  std::uint32_t stale_count() const noexcept { return stale_count_; }
  // The next incremental seq expected (0 before the channel started).
  std::uint64_t next_seq() const noexcept { return next_seq_; }
  std::uint32_t held_packets() const noexcept { return window_.size(); }
  std::uint32_t buffered_messages() const noexcept { return buffer_.used(); }
  const MdConsumerCounters& counters() const noexcept { return counters_; }
  // Durations of completed recoveries (stale -> live), ns; the late join's too.
  const core::LatencyHistogram& recovery_ns() const noexcept { return recovery_ns_; }
  const MdConsumerConfig& config() const noexcept { return config_; }

 private:
  enum class Applied : std::uint8_t { kOk, kBookReject, kTopOfBookMismatch };

  struct InstrumentState {
    bool live = false;
    bool touched = false;      // in touched_ for the packet being applied
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

  // The snapshot being collected from the snapshot channel.
  struct Collecting {
    bool active = false;
    proto::MdSnapshotBound start{};
    std::uint32_t received = 0;
  };

  static const MdConsumerConfig& validated(const MdConsumerConfig& c) {
    c.validate();
    return c;
  }
  static std::size_t largest_book(std::span<const book::InstrumentCapacity> instruments) noexcept {
    std::size_t n = 0;
    for (const book::InstrumentCapacity& c : instruments) n = std::max<std::size_t>(n, c.max_orders);
    return n;
  }

  // The late join's recoveries are timed from the first datagram or timer call.
  NT_ALWAYS_INLINE void note_time(TimeNs now) noexcept {
    if (time_started_) [[likely]] return;
    time_started_ = true;
    for (InstrumentState& st : state_) st.stale_since = now;
  }

  // ---- incremental channel ------------------------------------------------------------

  void on_incremental(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, TimeNs now,
                      std::uint64_t rx_tsc) noexcept {
    if (!started_) [[unlikely]] start(h.first_seq);
    const std::uint64_t end = h.first_seq + h.count;
    for (;;) {
      if (h.first_seq <= next_seq_) {
        if (end > next_seq_) {
          apply_packet(packet, h, rx_tsc, now);
          drain_window(now);
        } else if (h.count > 0) {
          counters_.duplicates.add();
        }  // an old heartbeat says nothing new
        return;
      }
      const std::uint32_t same = window_.find(h.first_seq);
      if (same != ReorderWindow::kNone) {
        // A data packet replaces a heartbeat announcing the same seq.
        if (h.count == 0 || window_.held(same).header.count > 0) {
          if (h.count > 0) counters_.duplicates.add();
          return;
        }
        window_.release(same);
      }
      if (!window_.full()) {
        window_.hold(packet, h, now, rx_tsc);
        counters_.held.add();
        return;
      }
      // Full: the lowest hole is given up; then this packet is looked at again.
      skip_to(window_.empty() ? h.first_seq : std::min(window_.lowest_first_seq(), h.first_seq), now);
    }
  }

  // The first packet or heartbeat of the channel: what came before it was
  // never seen, so a snapshot must reach the seq before it.
  NT_COLD void start(std::uint64_t first_seq) noexcept {
    started_ = true;
    next_seq_ = first_seq;
    for (InstrumentState& st : state_)
      if (!st.live) st.required_seq = std::max(st.required_seq, first_seq - 1);
  }

  // Gives up the hole [next_seq_, to) and applies what the window then allows.
  NT_COLD void skip_to(std::uint64_t to, TimeNs now) noexcept {
    if (to > next_seq_) {
      counters_.gaps.add();
      counters_.messages_lost.add(to - next_seq_);
      next_seq_ = to;
      // The hole may have held messages of instruments in recovery that
      // buffered nothing since: their snapshot must reach past it.
      for (InstrumentState& st : state_)
        if (!st.live) st.required_seq = std::max(st.required_seq, to - 1);
    }
    drain_window(now);
  }

  void drain_window(TimeNs now) noexcept {
    for (std::uint32_t i = window_.find_at_or_before(next_seq_); i != ReorderWindow::kNone;
         i = window_.find_at_or_before(next_seq_)) {
      const ReorderWindow::Held& held = window_.held(i);
      if (held.header.first_seq + held.header.count > next_seq_) {
        counters_.reordered.add();
        apply_packet(window_.bytes(i), held.header, held.rx_tsc, now);
      } else if (held.header.count > 0) {
        counters_.duplicates.add();
      }
      window_.release(i);
    }
  }

  void apply_packet(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, std::uint64_t rx_tsc,
                    TimeNs now) noexcept {
    proto::for_each_message(packet, h, [&](proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq) {
      if (seq >= next_seq_) on_incremental_message(type, m, seq, rx_tsc, now);
    });
    next_seq_ = h.first_seq + h.count;
    finish_packet(rx_tsc);
  }

  NT_ALWAYS_INLINE void on_incremental_message(proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq,
                                               std::uint64_t rx_tsc, TimeNs now) noexcept {
    // Every incremental message has its instrument at offset 4 and its
    // instrument_seq in its last 8 bytes (asserted in md_consumer.cpp).
    const std::size_t length = proto::md_message_length(type);
    InstrumentId inst;
    std::uint64_t iseq;
    std::memcpy(&inst, m + 4, sizeof inst);
    std::memcpy(&iseq, m + length - sizeof iseq, sizeof iseq);
    if (inst >= state_.size()) [[unlikely]] {
      counters_.unknown_instrument.add();
      return;
    }
    InstrumentState& st = state_[inst];
    if (seq <= st.skip_through) [[unlikely]] {
      counters_.skipped_in_snapshot.add();
      return;
    }
    if (!st.live) [[unlikely]] {
      buffer_message(inst, m, length, seq, iseq);
      return;
    }
    if (iseq != st.last_iseq + 1) [[unlikely]] {
      counters_.instrument_seq_jumps.add();
      go_stale(inst, RecoveryReason::kSeqJump, now);
      buffer_message(inst, m, length, seq, iseq);
      return;
    }
    const Applied a = apply_to_book(inst, type, m, rx_tsc);
    if (a != Applied::kOk) [[unlikely]] {
      // The book was wrong before this message: recover; the message itself
      // is buffered (a snapshot that does not reflect it needs it).
      go_stale(inst, a == Applied::kBookReject ? RecoveryReason::kBookReject : RecoveryReason::kTopOfBookMismatch, now);
      buffer_message(inst, m, length, seq, iseq);
      return;
    }
    st.last_iseq = iseq;
    st.last_seq = seq;
    touch(inst);
  }

  // One incremental message onto a book that is (believed) right.
  NT_ALWAYS_INLINE Applied apply_to_book(InstrumentId inst, proto::MdMsgType type, const std::uint8_t* m,
                                         std::uint64_t rx_tsc) noexcept {
    book::BookResult r = book::BookResult::kOk;
    switch (type) {
      case proto::MdMsgType::kAddOrder: {
        const auto o = proto::read_md<proto::MdOrder>(m);
        r = books_.add(inst, o.order_id, static_cast<Side>(o.header.side), o.price, o.qty);
        break;
      }
      case proto::MdMsgType::kModifyOrder: {
        const auto o = proto::read_md<proto::MdModifyOrder>(m);
        r = books_.modify(inst, o.order_id, o.qty);
        break;
      }
      case proto::MdMsgType::kDeleteOrder: {
        const auto o = proto::read_md<proto::MdDeleteOrder>(m);
        r = books_.remove(inst, o.order_id);
        break;
      }
      case proto::MdMsgType::kTrade: {
        const auto t = proto::read_md<proto::MdTrade>(m);
        // on_trade must come before the book changes, and only for a trade
        // the book will take (a refused one is replayed after a snapshot and
        // would otherwise reach the handler twice): the book's own checks,
        // made first.
        const book::InstrumentBook& b = *books_.instrument(inst);
        const book::RestingOrder* maker = b.find(t.maker_order_id);
        const auto aggressor = static_cast<Side>(t.header.side);
        if (!is_valid(aggressor) || maker == nullptr || t.qty <= 0 || t.price != maker->price || t.qty > maker->qty) {
          counters_.book_rejects.add();
          return Applied::kBookReject;
        }
        handler_.on_trade(TradeEvent{inst, aggressor, t.price, t.qty}, rx_tsc);
        r = books_.trade(inst, t.maker_order_id, t.price, t.qty);
        break;
      }
      case proto::MdMsgType::kTopOfBook: {
        if (!top_matches(inst, proto::read_md<proto::MdTopOfBook>(m))) {
          counters_.top_of_book_mismatches.add();
          return Applied::kTopOfBookMismatch;
        }
        break;
      }
      default:
        break;  // parse_packet lets only incremental types through on this channel
    }
    if (r != book::BookResult::kOk) [[unlikely]] {
      counters_.book_rejects.add();
      return Applied::kBookReject;
    }
    return Applied::kOk;
  }

  bool top_matches(InstrumentId inst, const proto::MdTopOfBook& t) const noexcept {
    const auto side_matches = [&](Side side, Price price, Qty qty) {
      const std::optional<market::LevelView> best = books_.best(inst, side);
      if (qty == 0) return !best.has_value();
      return best.has_value() && best->price == price && best->qty == qty;
    };
    return side_matches(Side::kBuy, t.bid_price, t.bid_qty) && side_matches(Side::kSell, t.ask_price, t.ask_qty);
  }

  // ---- recovery -----------------------------------------------------------------------

  NT_COLD void go_stale(InstrumentId inst, RecoveryReason reason, TimeNs now) noexcept {
    InstrumentState& st = state_[inst];
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
      return;
    }
    handler_.on_instrument_stale(inst);
  }

  // Keeps the instrument's buffer contiguous in instrument_seq, and records
  // what a snapshot must reflect for the buffer to continue it.
  void buffer_message(InstrumentId inst, const std::uint8_t* m, std::size_t length, std::uint64_t seq,
                      std::uint64_t iseq) noexcept {
    InstrumentState& st = state_[inst];
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

  // ---- snapshot channel ---------------------------------------------------------------

  void on_snapshot(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, TimeNs now,
                   std::uint64_t rx_tsc) noexcept {
    const std::uint64_t end = h.first_seq + h.count;
    snapshot_rx_tsc_ = rx_tsc;
    if (snap_next_seq_ == 0) snap_next_seq_ = h.first_seq;
    // The snapshot channel numbers from 1 in every run of the exchange (only
    // the incremental channel continues across restarts): a packet far behind
    // what was seen, or a 1 after more, is a restarted channel (or the seq
    // before it was a stray), not a duplicate. Start over from it.
    if (end <= snap_next_seq_ && (h.first_seq == 1 || snap_next_seq_ - h.first_seq > kSnapshotRestartDistance)) {
      counters_.snapshot_channel_restarts.add();
      if (collect_.active) {
        counters_.snapshots_incomplete.add();
        collect_.active = false;
      }
      snap_next_seq_ = h.first_seq;
    }
    if (h.first_seq < snap_next_seq_ && end <= snap_next_seq_) {
      if (h.count > 0) counters_.snapshot_duplicates.add();
      return;
    }
    if (h.first_seq > snap_next_seq_) {
      counters_.snapshot_gaps.add();
      if (collect_.active) {
        counters_.snapshots_incomplete.add();
        collect_.active = false;
      }
      snap_next_seq_ = h.first_seq;
    }
    proto::for_each_message(packet, h, [&](proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq) {
      if (seq >= snap_next_seq_) on_snapshot_message(type, m, now);
    });
    snap_next_seq_ = end;
    finish_packet(rx_tsc);
  }

  void on_snapshot_message(proto::MdMsgType type, const std::uint8_t* m, TimeNs now) noexcept {
    switch (type) {
      case proto::MdMsgType::kSnapshotStart: {
        if (collect_.active) abandon_snapshot();  // the previous one never ended
        const auto b = proto::read_md<proto::MdSnapshotBound>(m);
        if (b.instrument >= state_.size()) {
          counters_.unknown_instrument.add();
          return;
        }
        audit(b, now);
        if (state_[b.instrument].live) {
          counters_.snapshots_ignored_live.add();
          return;
        }
        if (b.orders > books_.instrument(b.instrument)->max_orders()) {
          counters_.snapshots_unloadable.add();
          return;
        }
        collect_ = Collecting{true, b, 0};
        return;
      }
      case proto::MdMsgType::kSnapshotOrder: {
        if (!collect_.active) return;  // a snapshot we do not need, or joined in its middle
        const auto o = proto::read_md<proto::MdOrder>(m);
        if (o.instrument != collect_.start.instrument || o.instrument_seq != collect_.start.instrument_seq ||
            collect_.received >= collect_.start.orders) {
          abandon_snapshot();
          return;
        }
        staging_[collect_.received++] = book::RestingOrder{o.order_id, o.price, o.qty, static_cast<Side>(o.header.side)};
        return;
      }
      case proto::MdMsgType::kSnapshotEnd: {
        if (!collect_.active) return;
        const auto e = proto::read_md<proto::MdSnapshotBound>(m);
        const proto::MdSnapshotBound& s = collect_.start;
        if (e.instrument != s.instrument || e.last_seq != s.last_seq || e.orders != s.orders ||
            e.instrument_seq != s.instrument_seq || collect_.received != s.orders) {
          abandon_snapshot();
          return;
        }
        collect_.active = false;
        use_snapshot(s, now);
        return;
      }
      default:
        return;  // parse_packet lets only snapshot types through on this channel
    }
  }

  NT_COLD void abandon_snapshot() noexcept {
    counters_.snapshots_malformed.add();
    collect_.active = false;
  }

  // A live instrument and a snapshot of the same moment must agree.
  void audit(const proto::MdSnapshotBound& b, TimeNs now) noexcept {
    InstrumentState& st = state_[b.instrument];
    if (!st.live || !started_ || b.last_seq >= next_seq_ || st.last_seq > b.last_seq) return;
    counters_.audits.add();
    if (b.instrument_seq == st.last_iseq && b.orders == books_.order_count(b.instrument)) return;
    counters_.audit_mismatches.add();
    const std::uint64_t ours = st.last_iseq;
    go_stale(b.instrument, RecoveryReason::kAuditMismatch, now);
    st.required_iseq = std::max(ours, b.instrument_seq);
  }

  // A complete snapshot of an instrument in recovery: load it if it
  // reaches what the buffer misses, replay the buffer past it, go live.
  void use_snapshot(const proto::MdSnapshotBound& s, TimeNs now) noexcept {
    const InstrumentId inst = s.instrument;
    InstrumentState& st = state_[inst];
    if (st.live) {
      counters_.snapshots_ignored_live.add();
      return;
    }
    if (!started_) {
      counters_.snapshots_before_start.add();
      return;
    }
    if (s.instrument_seq < st.required_iseq || s.last_seq < st.required_seq) {
      counters_.snapshots_too_old.add();
      return;
    }
    if (books_.load(inst, std::span<const book::RestingOrder>(staging_.data(), collect_.received)) !=
        book::BookResult::kOk) {
      counters_.snapshots_unloadable.add();
      return;
    }
    std::uint64_t last_iseq = s.instrument_seq;
    std::uint64_t last_seq = s.last_seq;
    std::uint64_t failed_through = 0;  // instrument_seq of the last message not applied after a refusal
    buffer_.drain(inst, [&](const RecoveryBuffer::Entry& e) {
      if (e.instrument_seq <= s.instrument_seq) return;  // in the snapshot
      if (failed_through == 0) {
        const auto type = static_cast<proto::MdMsgType>(e.bytes[2]);
        if (apply_to_book(inst, type, e.bytes.data(), snapshot_rx_tsc_) == Applied::kOk) {
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
      return;
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
    touch(inst);
  }

  // ---- after each packet --------------------------------------------------------------

  NT_ALWAYS_INLINE void touch(InstrumentId inst) noexcept {
    InstrumentState& st = state_[inst];
    if (st.touched) return;
    st.touched = true;
    touched_[touched_count_++] = inst;
  }

  // The handler hears about the packet's instruments once it is all applied.
  void finish_packet(std::uint64_t rx_tsc) noexcept {
    for (std::uint32_t i = 0; i < touched_count_; ++i) {
      const InstrumentId inst = touched_[i];
      InstrumentState& st = state_[inst];
      st.touched = false;
      if (!st.live) continue;
      if (st.became_live) {
        st.became_live = false;
        handler_.on_instrument_live(inst, st.recovery_ns);
      }
      handler_.on_book_update(inst, rx_tsc);
    }
    touched_count_ = 0;
  }

  MdConsumerConfig config_;
  Handler& handler_;
  book::BookReplica books_;
  ReorderWindow window_;
  RecoveryBuffer buffer_;
  std::vector<InstrumentState> state_;
  std::vector<InstrumentId> touched_;  // [0, touched_count_): instruments the current packet touched
  std::uint32_t touched_count_ = 0;
  std::vector<book::RestingOrder> staging_;  // the snapshot being collected
  Collecting collect_;
  std::uint32_t stale_count_;
  bool started_ = false;       // the incremental channel's first packet arrived
  bool time_started_ = false;  // the first `now` was seen
  std::uint64_t next_seq_ = 0;       // incremental: next global seq expected
  static constexpr std::uint64_t kSnapshotRestartDistance = 1u << 20;  // further behind: not a late duplicate
  std::uint64_t snap_next_seq_ = 0;  // snapshot channel: next seq expected (0: none seen)
  std::uint64_t snapshot_rx_tsc_ = 0;  // rx_tsc of the snapshot packet being applied
  MdConsumerCounters counters_;
  core::LatencyHistogram recovery_ns_;
};

}  // namespace nanotick::trading
