// The market data consumer's snapshot assembly (docs/TRADER.md "Market data
// sequence logic"; PROTOCOL.md §2): follows the snapshot channel's seq and
// collects one instrument's snapshot at a time -- SnapshotStart, its orders,
// SnapshotEnd -- into a staging array, then hands the complete snapshot on.
// - The snapshot channel is not reordered: a hole in its seq abandons the
//   snapshot being collected (the next cycle brings another).
// - Start, Orders and End must agree (instrument, instrument_seq, last_seq,
//   the number of orders); a snapshot whose parts do not is abandoned.
// - The channel numbers from 1 in every run of the exchange: a packet far
//   behind what was seen starts the channel over (not a duplicate).
//
// What it calls, on a Sink given to each call (a template parameter: static
// dispatch; the MdConsumer itself):
//   sink.wants_snapshot(start, now) -> bool  a SnapshotStart: whether to
//       collect this snapshot (the sink also audits live instruments here).
//       Must refuse one of more orders than max_orders (the staging's size).
//   sink.on_snapshot(start, orders, now, rx_tsc)  a complete snapshot it
//       wanted; `orders` is valid during the call only; rx_tsc is the
//       receive TSC of the packet that completed it
//   sink.finish_packet(rx_tsc)  after each packet whose messages were looked at
//
// Separate from the consumer because it is about the snapshot channel's
// framing only: it neither knows which instruments need a snapshot nor what
// a snapshot does to a book.
//
// Not thread-safe: the consumer's thread calls on_packet, and the sink runs
// inside it (it must not call back into the assembler). Nothing allocates
// after the constructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "book/book_replica.hpp"
#include "client/client_types.hpp"
#include "client/md_consumer_types.hpp"
#include "core/compiler.hpp"
#include "proto/market_data.hpp"
#include "proto/md_packet.hpp"

namespace nanotick::client {

class SnapshotAssembler {
 public:
  // Snapshots of up to max_orders orders; `counters` (the consumer's) must
  // outlive the assembler.
  SnapshotAssembler(std::size_t max_orders, MdConsumerCounters& counters) : staging_(max_orders), counters_(counters) {}
  SnapshotAssembler(const SnapshotAssembler&) = delete;
  SnapshotAssembler& operator=(const SnapshotAssembler&) = delete;

  // A valid snapshot-channel packet (parse_packet accepted it; first_seq > 0
  // and first_seq + count does not overflow).
  template <typename Sink>
  void on_packet(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, TimeNs now, std::uint64_t rx_tsc,
                 Sink& sink) noexcept {
    const std::uint64_t end = h.first_seq + h.count;
    if (next_seq_ == 0) next_seq_ = h.first_seq;
    // The snapshot channel numbers from 1 in every run of the exchange (only
    // the incremental channel continues across restarts): a packet far behind
    // what was seen, or a 1 after more, is a restarted channel (or the seq
    // before it was a stray), not a duplicate. Start over from it.
    if (end <= next_seq_ && (h.first_seq == 1 || next_seq_ - h.first_seq > kRestartDistance)) {
      counters_.snapshot_channel_restarts.add();
      if (collect_.active) {
        counters_.snapshots_incomplete.add();
        collect_.active = false;
      }
      next_seq_ = h.first_seq;
    }
    if (h.first_seq < next_seq_ && end <= next_seq_) {
      if (h.count > 0) counters_.snapshot_duplicates.add();
      return;
    }
    if (h.first_seq > next_seq_) {
      counters_.snapshot_gaps.add();
      if (collect_.active) {
        counters_.snapshots_incomplete.add();
        collect_.active = false;
      }
      next_seq_ = h.first_seq;
    }
    proto::for_each_message(packet, h, [&](proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq) {
      if (seq >= next_seq_) on_message(type, m, now, rx_tsc, sink);
    });
    next_seq_ = end;
    sink.finish_packet(rx_tsc);
  }

 private:
  // The snapshot being collected.
  struct Collecting {
    bool active = false;
    proto::MdSnapshotBound start{};
    std::uint32_t received = 0;
  };

  template <typename Sink>
  void on_message(proto::MdMsgType type, const std::uint8_t* m, TimeNs now, std::uint64_t rx_tsc, Sink& sink) noexcept {
    switch (type) {
      case proto::MdMsgType::kSnapshotStart: {
        if (collect_.active) abandon();  // the previous one never ended
        const auto b = proto::read_md<proto::MdSnapshotBound>(m);
        if (!sink.wants_snapshot(b, now)) return;
        collect_ = Collecting{true, b, 0};
        return;
      }
      case proto::MdMsgType::kSnapshotOrder: {
        if (!collect_.active) return;  // a snapshot we do not need, or joined in its middle
        const auto o = proto::read_md<proto::MdOrder>(m);
        if (o.instrument != collect_.start.instrument || o.instrument_seq != collect_.start.instrument_seq ||
            collect_.received >= collect_.start.orders) {
          abandon();
          return;
        }
        staging_[collect_.received++] =
            book::RestingOrder{o.order_id, o.price, o.qty, static_cast<Side>(o.header.side)};
        return;
      }
      case proto::MdMsgType::kSnapshotEnd: {
        if (!collect_.active) return;
        const auto e = proto::read_md<proto::MdSnapshotBound>(m);
        const proto::MdSnapshotBound& s = collect_.start;
        if (e.instrument != s.instrument || e.last_seq != s.last_seq || e.orders != s.orders ||
            e.instrument_seq != s.instrument_seq || e.trading_state != s.trading_state ||
            collect_.received != s.orders) {
          abandon();
          return;
        }
        collect_.active = false;
        sink.on_snapshot(s, std::span<const book::RestingOrder>(staging_.data(), collect_.received), now, rx_tsc);
        return;
      }
      default: return;  // parse_packet lets only snapshot types through on this channel
    }
  }

  NT_COLD void abandon() noexcept {
    counters_.snapshots_malformed.add();
    collect_.active = false;
  }

  static constexpr std::uint64_t kRestartDistance = 1u << 20;  // further behind: not a late duplicate

  std::vector<book::RestingOrder> staging_;  // the snapshot being collected
  MdConsumerCounters& counters_;
  Collecting collect_;
  std::uint64_t next_seq_ = 0;  // next seq expected (0: none seen)
};

}  // namespace nanotick::client
