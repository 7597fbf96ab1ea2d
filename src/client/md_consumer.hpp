// The trading client's market data consumer and book builder (docs/TRADER.md
// "Pipeline", "Market data sequence logic"; wire format PROTOCOL.md §2): it
// takes the datagrams of the incremental and snapshot channels, validates
// each one completely (proto::parse_packet), keeps an order-by-order
// book::BookReplica per instrument and tells the Handler (a template
// parameter: static dispatch, see MdHandler) about trades, book updates and
// instruments going stale and live. Pure logic: no sockets (MdSockets in
// md_feed.hpp reads them), no clock reads (times come in as arguments),
// nothing allocates after the constructor.
//
// It composes three parts, each in its own header, and is the sink of the
// first two (static dispatch: they call it back as a template parameter):
// - IncrementalSequencer (incremental_sequencer.hpp): the incremental
//   channel's global seq -- duplicates, reordering, gaps, heartbeats.
// - SnapshotAssembler (snapshot_assembler.hpp): the snapshot channel's seq
//   and the collection of one instrument's snapshot.
// - InstrumentRecovery (instrument_recovery.hpp): each instrument's state,
//   the buffer of instruments in recovery, which snapshot ends a recovery.
// What stays here is what needs the books: applying each message to its
// instrument's book, and deciding that a book is wrong.
//
// Every incremental message also carries its instrument's own sequence
// number (instrument_seq: 1, 2, 3... per instrument, no gaps), so a loss can
// be pinned to the instruments it hit:
// - Gap: the sequencer does not know which instruments the lost messages
//   were for: each instrument checks its own instrument_seq on its next
//   message. One that follows on (last + 1) lost nothing and keeps flowing;
//   one that jumps enters recovery. Healthy instruments are never paused.
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
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "book/book_replica.hpp"
#include "client/client_types.hpp"
#include "client/incremental_sequencer.hpp"
#include "client/instrument_recovery.hpp"
#include "client/md_consumer_types.hpp"
#include "client/snapshot_assembler.hpp"
#include "core/compiler.hpp"
#include "core/histogram.hpp"
#include "proto/market_data.hpp"
#include "proto/md_packet.hpp"

namespace nanotick::client {

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
  static_assert(MdHandler<Handler>,
                "Handler must have on_trade, on_book_update, on_instrument_stale, on_instrument_live");

 public:
  // Start-up: throws std::invalid_argument for a bad config or instrument table.
  MdConsumer(std::span<const book::InstrumentCapacity> instruments, const MdConsumerConfig& config, Handler& handler)
      : handler_(handler),
        books_(instruments),
        // The config is checked here, before the first part that reads it.
        sequencer_(validated(config).reorder_packets, config.reorder_ns, counters_),
        recovery_(static_cast<std::uint32_t>(instruments.size()), config.buffer_messages, counters_),
        touched_(instruments.size()),
        halted_(instruments.size(), 0),
        assembler_(largest_book(instruments), counters_) {}
  MdConsumer(const MdConsumer&) = delete;
  MdConsumer& operator=(const MdConsumer&) = delete;

  // A datagram received from `channel`. Invalid packets are counted by
  // reason and dropped.
  void on_datagram(proto::Channel channel, std::span<const std::uint8_t> datagram, TimeNs now,
                   std::uint64_t rx_tsc) noexcept {
    recovery_.note_time(now);
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
      sequencer_.on_packet(datagram, h, now, rx_tsc, *this);
    } else {
      assembler_.on_packet(datagram, h, now, rx_tsc, *this);
    }
  }

  // Gives up the holes whose oldest held packet waited reorder_ns or more.
  void on_timer(TimeNs now) noexcept {
    recovery_.note_time(now);
    sequencer_.on_timer(now, *this);
  }

  const book::BookReplica& books() const noexcept { return books_; }
  bool is_live(InstrumentId inst) const noexcept { return recovery_.is_live(inst); }
  // Whether the venue has halted `inst` (an InstrumentState, or the trading
  // state of the snapshot it was loaded from); false for no such instrument.
  bool halted(InstrumentId inst) const noexcept { return inst < halted_.size() && halted_[inst] != 0; }
  std::uint32_t stale_count() const noexcept { return recovery_.stale_count(); }
  // The next incremental seq expected (0 before the channel started).
  std::uint64_t next_seq() const noexcept { return sequencer_.next_seq(); }
  std::uint32_t held_packets() const noexcept { return sequencer_.held_packets(); }
  std::uint32_t buffered_messages() const noexcept { return recovery_.buffered_messages(); }
  const MdConsumerCounters& counters() const noexcept { return counters_; }
  // Start-up, before the consumer's thread runs: its counters and its books' ("md.book.*").
  void place_counters(core::CountersFile& file) {
    place_md_consumer_counters(file, counters_);
    books_.place_counters(file, "md.book");
  }
  // Durations of completed recoveries (stale -> live), ns; the late join's too.
  const core::LatencyHistogram& recovery_ns() const noexcept { return recovery_.recovery_ns(); }

 private:
  // The parts call back the sink functions below.
  friend class IncrementalSequencer;
  friend class SnapshotAssembler;

  enum class Applied : std::uint8_t { kOk, kBookReject, kTopOfBookMismatch };
  using InstrumentState = InstrumentRecovery::State;

  static const MdConsumerConfig& validated(const MdConsumerConfig& c) {
    c.validate();
    return c;
  }
  static std::size_t largest_book(std::span<const book::InstrumentCapacity> instruments) noexcept {
    std::size_t n = 0;
    for (const book::InstrumentCapacity& c : instruments) n = std::max<std::size_t>(n, c.max_orders);
    return n;
  }

  // ---- incremental channel (IncrementalSequencer's sink) --------------------------------

  // The first packet or heartbeat of the channel: what came before it was
  // never seen, so a snapshot must reach the seq before it.
  void on_incremental_start(std::uint64_t first_seq) noexcept { recovery_.require_seq(first_seq - 1); }

  // The hole up to `to` was given up. The hole may have held messages of
  // instruments in recovery that buffered nothing since: their snapshot must
  // reach past it.
  void on_incremental_gap(std::uint64_t to) noexcept { recovery_.require_seq(to - 1); }

  NT_ALWAYS_INLINE void on_incremental_message(proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq,
                                               std::uint64_t rx_tsc, TimeNs now) noexcept {
    // Every incremental message has its instrument at offset 4 and its
    // instrument_seq in its last 8 bytes (asserted in md_consumer.cpp).
    const std::size_t length = proto::md_message_length(type);
    InstrumentId inst;
    std::uint64_t iseq;
    std::memcpy(&inst, m + 4, sizeof inst);
    std::memcpy(&iseq, m + length - sizeof iseq, sizeof iseq);
    if (inst >= recovery_.size()) [[unlikely]] {
      counters_.unknown_instrument.add();
      return;
    }
    InstrumentState& st = recovery_.state(inst);
    if (seq <= st.skip_through) [[unlikely]] {
      counters_.skipped_in_snapshot.add();
      return;
    }
    if (!st.live) [[unlikely]] {
      recovery_.buffer_message(inst, m, length, seq, iseq);
      return;
    }
    if (iseq != st.last_iseq + 1) [[unlikely]] {
      counters_.instrument_seq_jumps.add();
      go_stale(inst, RecoveryReason::kSeqJump, now);
      recovery_.buffer_message(inst, m, length, seq, iseq);
      return;
    }
    const Applied a = apply_to_book(inst, type, m, rx_tsc);
    if (a != Applied::kOk) [[unlikely]] {
      // The book was wrong before this message: recover; the message itself
      // is buffered (a snapshot that does not reflect it needs it).
      go_stale(inst, a == Applied::kBookReject ? RecoveryReason::kBookReject : RecoveryReason::kTopOfBookMismatch, now);
      recovery_.buffer_message(inst, m, length, seq, iseq);
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
      case proto::MdMsgType::kInstrumentState:
        set_halted(inst, proto::read_md<proto::MdInstrumentState>(m).state == proto::TradingState::kHalted);
        break;
      default: break;  // parse_packet lets only incremental types through on this channel
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

  NT_COLD void go_stale(InstrumentId inst, RecoveryReason reason, TimeNs now) noexcept {
    if (recovery_.go_stale(inst, reason, now)) handler_.on_instrument_stale(inst);
  }

  // ---- snapshot channel (SnapshotAssembler's sink) ------------------------------------

  // A SnapshotStart: collect it only for an instrument in recovery whose
  // book can hold it; a live one is audited against it.
  bool wants_snapshot(const proto::MdSnapshotBound& b, TimeNs now) noexcept {
    if (b.instrument >= recovery_.size()) {
      counters_.unknown_instrument.add();
      return false;
    }
    audit(b, now);
    if (recovery_.state(b.instrument).live) {
      counters_.snapshots_ignored_live.add();
      return false;
    }
    if (b.orders > books_.instrument(b.instrument)->max_orders()) {
      counters_.snapshots_unloadable.add();
      return false;
    }
    return true;
  }

  // A live instrument and a snapshot of the same moment must agree.
  void audit(const proto::MdSnapshotBound& b, TimeNs now) noexcept {
    const InstrumentState& st = recovery_.state(b.instrument);
    if (!st.live || !sequencer_.started() || b.last_seq >= sequencer_.next_seq() || st.last_seq > b.last_seq) return;
    counters_.audits.add();
    if (b.instrument_seq == st.last_iseq && b.orders == books_.order_count(b.instrument)) return;
    counters_.audit_mismatches.add();
    go_stale(b.instrument, RecoveryReason::kAuditMismatch, now);
    // go_stale required our own last instrument_seq; the snapshot's may be later.
    recovery_.require_instrument_seq(b.instrument, b.instrument_seq);
  }

  // A complete snapshot of an instrument in recovery: load it if it
  // reaches what the buffer misses, replay the buffer past it, go live.
  void on_snapshot(const proto::MdSnapshotBound& s, std::span<const book::RestingOrder> orders, TimeNs now,
                   std::uint64_t rx_tsc) noexcept {
    const InstrumentId inst = s.instrument;
    if (!recovery_.can_use(s, sequencer_.started())) return;
    if (books_.load(inst, orders) != book::BookResult::kOk) {
      counters_.snapshots_unloadable.add();
      return;
    }
    set_halted(inst, s.trading_state == proto::TradingState::kHalted);
    const bool live = recovery_.complete(s, now, [&](proto::MdMsgType type, const std::uint8_t* m) {
      return apply_to_book(inst, type, m, rx_tsc) == Applied::kOk;
    });
    if (live) touch(inst);
  }

  // The handler hears of a change, when it listens (on_trading_state is optional).
  void set_halted(InstrumentId inst, bool halted) noexcept {
    if ((halted_[inst] != 0) == halted) return;
    halted_[inst] = halted ? 1 : 0;
    if constexpr (requires { handler_.on_trading_state(inst, halted); }) handler_.on_trading_state(inst, halted);
  }

  // ---- after each packet (both parts' sink) -------------------------------------------

  NT_ALWAYS_INLINE void touch(InstrumentId inst) noexcept {
    InstrumentState& st = recovery_.state(inst);
    if (st.touched) return;
    st.touched = true;
    touched_[touched_count_++] = inst;
  }

  // The handler hears about the packet's instruments once it is all applied.
  void finish_packet(std::uint64_t rx_tsc) noexcept {
    for (std::uint32_t i = 0; i < touched_count_; ++i) {
      const InstrumentId inst = touched_[i];
      InstrumentState& st = recovery_.state(inst);
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

  Handler& handler_;
  MdConsumerCounters counters_;  // before the parts, which count into it
  book::BookReplica books_;
  IncrementalSequencer sequencer_;
  InstrumentRecovery recovery_;
  std::vector<InstrumentId> touched_;  // [0, touched_count_): instruments the current packet touched
  std::uint32_t touched_count_ = 0;
  std::vector<std::uint8_t> halted_;  // per instrument: 1 while the venue has it halted
  SnapshotAssembler assembler_;
};

}  // namespace nanotick::client
