// The snapshot market data publisher (docs/EXCHANGE.md "Pipeline",
// PROTOCOL.md §2.2-2.3): an agent on the auxiliary thread that keeps its own
// order-by-order books (book::BookReplica) from the engine's MdEvents, which
// MdPublisher forwards through an MdRing, and sends one instrument's full book
// on channel 2 every snapshot_interval_ms / instruments, instruments in turn:
// SnapshotStart(instrument, last_seq, orders, instrument_seq), one
// SnapshotOrder per resting order in priority order, SnapshotEnd, with the
// channel's own sequence numbers from 1, split over as many packets as the
// MTU needs; heartbeats when idle. instrument_seq is the instrument's last
// applied event's (each instrument's is tracked), so a consumer can line the
// snapshot up with that instrument's incremental messages alone.
//
// Why a staged copy: a snapshot must reflect exactly the incremental messages
// up to last_seq, but a big book takes many packets. When a snapshot starts,
// the instrument's orders are copied (already encoded) into a buffer sized at
// construction; the packets then go out a few per do_work() while the ring is
// still drained into the books between them, so the producer (MdPublisher,
// which waits when the ring is full) never waits for a long snapshot.
//
// Thread-safety: one thread (the agent's) calls everything except the
// counters, which may be read from any thread. Hot path (do_work): noexcept,
// no allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "book/book_replica.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/tsc_clock.hpp"
#include "engine/events.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/marketdata/md_channel.hpp"
#include "exchange/pipeline.hpp"
#include "proto/market_data.hpp"

namespace nanotick::exchange {

class SnapshotPublisher {
 public:
  // Snapshot packets sent per do_work() at most, between ring drains.
  static constexpr int kPacketsPerPass = 8;

  // One book per entry of `instruments` (InstrumentId = index). Start-up:
  // throws std::invalid_argument / net::SocketError naming the config key.
  SnapshotPublisher(const MarketDataConfig& config, std::span<const book::InstrumentCapacity> instruments, MdRing& ring,
                    const core::TscClock& clock = core::TscClock::global());

  // Before the first do_work(), after the engine recovered its books: copies
  // every resting order of `engine` (a MatchingEngine) into the replica and
  // takes its last market data sequence number as last_seq, and each
  // instrument's (last_instrument_md_seq) as that instrument's. Throws
  // std::runtime_error when the replica cannot hold the engine's books (it
  // is sized from the same config, so this means a wiring bug).
  template <typename Engine>
  void seed_from(const Engine& engine);
  // With seed_from: the instruments an admin has halted (ascending ids; the
  // controls' ControlsState::halted). Throws std::invalid_argument on an
  // unknown instrument.
  void seed_halted(std::span<const book::InstrumentId> halted);

  // Agent duty cycle: drains the ring into the books, then continues (or
  // starts, when due) a snapshot, else sends a heartbeat when idle. Returns
  // events applied plus packets sent.
  int do_work() noexcept;
  std::string_view role_name() const noexcept { return "snapshot-publisher"; }

  const book::BookReplica& books() const noexcept { return books_; }
  // Seq of the last incremental event applied (0: none yet).
  engine::Seq last_seq() const noexcept { return last_seq_; }
  // instrument_seq of the last event of `inst` applied (0: none yet, or no such instrument).
  engine::Seq last_instrument_seq(book::InstrumentId inst) const noexcept {
    return inst < books_.instrument_count() ? instrument_seq_[inst] : 0;
  }
  // Whether `inst` is halted as of last_seq() (false for no such instrument).
  bool halted(book::InstrumentId inst) const noexcept { return inst < books_.instrument_count() && halted_[inst] != 0; }
  const MdChannel& channel() const noexcept { return channel_; }
  // Complete snapshots sent (SnapshotEnd queued), and events taken from the ring.
  std::uint64_t snapshots() const noexcept { return snapshots_.get(); }
  std::uint64_t events() const noexcept { return events_.get(); }
  // Events the books refused (a bug upstream: the count by reason is books().rejected()).
  std::uint64_t book_rejects() const noexcept { return books_.rejected_total(); }
  // Start-up, before the publisher's thread runs.
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    file.place(snapshots_, "md.snapshot.snapshots");
    file.place(events_, "md.snapshot.events");
    channel_.place_counters(file, "md.snapshot");
    books_.place_counters(file, "md.snapshot.book");
  }

 private:
  void apply(const engine::MdEvent& e) noexcept;
  void start_snapshot() noexcept;
  // Queues staged orders until `packets` packets went out or the snapshot is
  // done (SnapshotEnd queued and flushed). Returns packets sent (>= 1). The
  // channel numbers the messages: its sequence starts at 1 and has no gaps.
  int continue_snapshot(int packets) noexcept;

  const core::TscClock& clock_;
  MdRing& ring_;
  book::BookReplica books_;
  MdChannel channel_;
  std::uint64_t interval_ticks_;  // between two snapshots (of consecutive instruments)
  std::uint64_t next_due_;        // clock tick when the next snapshot starts
  engine::Seq last_seq_ = 0;
  std::unique_ptr<engine::Seq[]> instrument_seq_;  // per instrument: last instrument_seq applied
  std::unique_ptr<std::uint8_t[]> halted_;         // per instrument: 1 while halted
  book::InstrumentId next_instrument_ = 0;

  // The snapshot being sent: staged_[0, staged_count_) encoded SnapshotOrders.
  bool sending_ = false;
  proto::MdSnapshotBound bound_{};  // Start/End of the snapshot being sent
  std::unique_ptr<proto::MdOrder[]> staged_;
  std::uint32_t staged_count_ = 0;
  std::uint32_t staged_next_ = 0;

  core::Counter snapshots_;
  core::Counter events_;
};

template <typename Engine>
void SnapshotPublisher::seed_from(const Engine& engine) {
  if (engine.instrument_count() != books_.instrument_count())
    throw std::runtime_error("snapshot publisher: the engine has " + std::to_string(engine.instrument_count()) +
                             " instruments, the publisher's books " + std::to_string(books_.instrument_count()) +
                             " (build both from the same config)");
  for (book::InstrumentId inst = 0; inst < books_.instrument_count(); ++inst) {
    (void)books_.clear(inst);
    for (const engine::Side side : {engine::Side::kBuy, engine::Side::kSell}) {
      engine.for_each_order(inst, side, [&](const auto& o) {
        const book::BookResult r = books_.add(inst, o.order_id, o.side, o.price, o.open_qty);
        if (r != book::BookResult::kOk)
          throw std::runtime_error("snapshot publisher: cannot seed order " + std::to_string(o.order_id) +
                                   " of instrument " + std::to_string(inst) + ": " + std::string(book::to_string(r)));
      });
    }
    instrument_seq_[inst] = engine.last_instrument_md_seq(inst);
  }
  last_seq_ = engine.last_md_seq();
}

}  // namespace nanotick::exchange
