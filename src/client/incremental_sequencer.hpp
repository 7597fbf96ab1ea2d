// The market data consumer's incremental sequencing (docs/TRADER.md "Market
// data sequence logic"): puts the incremental channel's valid packets in
// global seq order and hands each new message on exactly once. Incremental
// packets carry the global sequence number of their first message (the
// others follow +1):
// - Duplicates: a packet wholly below the next expected seq is dropped (a
//   packet that overlaps it has only its new messages applied).
// - Reordering: a packet (or heartbeat) ahead of the next expected seq is
//   held, up to reorder_packets packets and reorder_ns (on_timer). If the
//   hole fills meanwhile, everything is applied in order: nobody notices.
// - Gap: when the window is full or expires, the sequencer gives up the
//   lowest hole and moves on (messages_lost counts the skipped seqs). It
//   does not know which instruments the lost messages were for: the
//   consumer finds out from each instrument's own instrument_seq.
// - An incremental heartbeat (count 0) announces the next seq: above the
//   expected one it is a gap like any other (held, then skipped).
//
// What it calls, on a Sink given to each call (a template parameter: static
// dispatch; the MdConsumer itself):
//   sink.on_incremental_start(first_seq)  the channel's first packet or
//       heartbeat: the seqs before it were never seen
//   sink.on_incremental_gap(to)  the hole up to `to` was given up (next_seq()
//       is now `to`)
//   sink.on_incremental_message(type, m, seq, rx_tsc, now)  each new message,
//       in seq order, with the rx_tsc of the packet that carried it
//   sink.finish_packet(rx_tsc)  after each packet whose messages were handed on
//
// Separate from the consumer because it is about one number, the channel's
// global seq: it knows nothing of instruments, books or snapshots, and the
// consumer knows nothing of held packets. Its packets are held in a
// ReorderWindow (reorder_window.hpp).
//
// Not thread-safe: the consumer's thread calls everything, and the sink runs
// inside on_packet / on_timer (it must not call back into the sequencer).
// Nothing allocates after the constructor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "client/client_types.hpp"
#include "client/md_consumer_types.hpp"
#include "client/reorder_window.hpp"
#include "core/compiler.hpp"
#include "proto/md_packet.hpp"

namespace nanotick::client {

class IncrementalSequencer {
 public:
  // `counters` (the consumer's) must outlive the sequencer.
  IncrementalSequencer(std::uint32_t reorder_packets, TimeNs reorder_ns, MdConsumerCounters& counters)
      : window_(reorder_packets), reorder_ns_(reorder_ns), counters_(counters) {}
  IncrementalSequencer(const IncrementalSequencer&) = delete;
  IncrementalSequencer& operator=(const IncrementalSequencer&) = delete;

  // A valid incremental packet (parse_packet accepted it; first_seq > 0 and
  // first_seq + count does not overflow).
  template <typename Sink>
  void on_packet(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, TimeNs now, std::uint64_t rx_tsc,
                 Sink& sink) noexcept {
    if (!started_) [[unlikely]]
      start(h.first_seq, sink);
    const std::uint64_t end = h.first_seq + h.count;
    for (;;) {
      if (h.first_seq <= next_seq_) {
        if (end > next_seq_) {
          apply_packet(packet, h, rx_tsc, now, sink);
          drain_window(now, sink);
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
      skip_to(window_.empty() ? h.first_seq : std::min(window_.lowest_first_seq(), h.first_seq), now, sink);
    }
  }

  // Gives up the holes whose oldest held packet waited reorder_ns or more.
  template <typename Sink>
  void on_timer(TimeNs now, Sink& sink) noexcept {
    while (!window_.empty() && now >= window_.oldest_arrival() && now - window_.oldest_arrival() >= reorder_ns_)
      skip_to(window_.lowest_first_seq(), now, sink);
  }

  // The channel's first packet or heartbeat arrived.
  bool started() const noexcept { return started_; }
  // The next incremental seq expected (0 before the channel started).
  std::uint64_t next_seq() const noexcept { return next_seq_; }
  std::uint32_t held_packets() const noexcept { return window_.size(); }

 private:
  // The first packet or heartbeat of the channel: what came before it was
  // never seen.
  template <typename Sink>
  NT_COLD void start(std::uint64_t first_seq, Sink& sink) noexcept {
    started_ = true;
    next_seq_ = first_seq;
    sink.on_incremental_start(first_seq);
  }

  // Gives up the hole [next_seq_, to) and applies what the window then allows.
  template <typename Sink>
  NT_COLD void skip_to(std::uint64_t to, TimeNs now, Sink& sink) noexcept {
    if (to > next_seq_) {
      counters_.gaps.add();
      counters_.messages_lost.add(to - next_seq_);
      next_seq_ = to;
      sink.on_incremental_gap(to);
    }
    drain_window(now, sink);
  }

  template <typename Sink>
  void drain_window(TimeNs now, Sink& sink) noexcept {
    for (std::uint32_t i = window_.find_at_or_before(next_seq_); i != ReorderWindow::kNone;
         i = window_.find_at_or_before(next_seq_)) {
      const ReorderWindow::Held& held = window_.held(i);
      if (held.header.first_seq + held.header.count > next_seq_) {
        counters_.reordered.add();
        apply_packet(window_.bytes(i), held.header, held.rx_tsc, now, sink);
      } else if (held.header.count > 0) {
        counters_.duplicates.add();
      }
      window_.release(i);
    }
  }

  template <typename Sink>
  void apply_packet(std::span<const std::uint8_t> packet, const proto::PacketHeader& h, std::uint64_t rx_tsc,
                    TimeNs now, Sink& sink) noexcept {
    // The sink does not call back into the sequencer, so next_seq_ holds
    // still until the packet is applied. The lambda holds what it reads by
    // value: it is called once per message.
    const std::uint64_t from = next_seq_;
    proto::for_each_message(
        packet, h, [&sink, from, rx_tsc, now](proto::MdMsgType type, const std::uint8_t* m, std::uint64_t seq) {
          if (seq >= from) sink.on_incremental_message(type, m, seq, rx_tsc, now);
        });
    next_seq_ = h.first_seq + h.count;
    sink.finish_packet(rx_tsc);
  }

  ReorderWindow window_;
  TimeNs reorder_ns_;
  MdConsumerCounters& counters_;
  bool started_ = false;       // the channel's first packet arrived
  std::uint64_t next_seq_ = 0;  // next global seq expected
};

}  // namespace nanotick::client
