// One market data channel's sending side (docs/PROTOCOL.md §2.1): messages
// with consecutive sequence numbers packed into packets up to the MTU, each
// packet sent as one multicast datagram, a heartbeat packet when the channel
// has sent nothing for heartbeat_ms, and its counters. The incremental
// publisher (MdPublisher) and the snapshot publisher each own one.
//
// Thread-safety: one owning thread sends; the counters may be read from any
// thread (single-writer core::Counter).
//
// Construction is start-up code (parses and checks the config, opens the
// socket, throws naming the config key); append/flush/heartbeat are hot-path:
// noexcept, no allocation, a refused datagram is counted, never retried (a
// consumer sees the gap and recovers from the snapshot channel).
//
// Shared memory: the incremental channel may also mirror every packet it
// sends -- the same bytes, heartbeats included -- into the market data ring
// (mirror_to(), ipc::MdRingServer), just before the datagram: a ring write
// is a few stores, the send a system call, so the host's readers are not
// made to wait for the kernel. A datagram the kernel refuses is still in
// the ring. With market_data.udp_sender = "aux" the channel only writes the
// ring and the auxiliary thread's MdUdpForwarder sends the datagrams (its
// counters count what the kernel took; this channel's count what it
// published).
//
// Telemetry: on the incremental channel, each packet of messages (not a
// heartbeat) is stamped ex_md_write with its first_seq when a recorder is
// bound to the thread: right after the ring write when there is a ring (the
// packet is readable from then on), else right after the send returned (not
// for a refused one). At the same reading, each request whose events the
// packet carries (the `cause` given to append: its telemetry order key) is
// stamped ex_md_effect, key = that order key, aux = the packet's first_seq:
// the join from an order to the market data it caused (up to kMaxCauses
// requests a packet; more are not stamped).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/tsc_clock.hpp"
#include "exchange/exchange_config.hpp"
#include "ipc/md_ring_server.hpp"
#include "net/udp_multicast.hpp"
#include "proto/md_packet.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::exchange {

class MdChannel {
 public:
  // `channel` picks the group: market_data.incremental or market_data.snapshot.
  // `next_seq` is the first sequence number this channel will send (what a
  // heartbeat announces before anything was sent). Throws std::invalid_argument
  // (bad address, ttl, mtu, heartbeat) or net::SocketError (socket setup),
  // naming the key.
  MdChannel(proto::Channel channel, const MarketDataConfig& config, std::uint64_t next_seq,
            const core::TscClock& clock);
  MdChannel(const MdChannel&) = delete;
  MdChannel& operator=(const MdChannel&) = delete;

  // Appends message `m` numbered `seq`. A packet holds consecutive numbers
  // only: when `seq` does not follow the previous message (counted in
  // seq_jumps()) or the packet is full, the packet is sent first.
  // `cause`: the telemetry order key of the request whose event `m` is (0: none).
  template <typename M>
  NT_ALWAYS_INLINE void append(const M& m, std::uint64_t seq, std::uint64_t cause = 0) noexcept {
    static_assert(sizeof(M) <= proto::kMaxMdMessageLength, "a market data message the packet limits do not cover");
    if (seq != next_seq_) [[unlikely]] {
      seq_jumps_.add();
      if (!writer_.empty()) send_packet();
    }
    if (!writer_.append(m, seq)) {
      send_packet();
      (void)writer_.append(m, seq);  // an empty packet always has room: md_packet.hpp asserts kMinMtu fits any message
    }
    next_seq_ = seq + 1;
    if constexpr (NANOTICK_TELEMETRY != 0) {
      // A request's events are consecutive: a new cause differs from the last one.
      if (cause != 0 && (n_causes_ == 0 || causes_[n_causes_ - 1] != cause) && n_causes_ < kMaxCauses)
        causes_[n_causes_++] = cause;
    }
  }

  // Sends the partial packet, if any. Returns whether a packet was sent.
  bool flush() noexcept {
    if (writer_.empty()) return false;
    send_packet();
    return true;
  }

  // At `now` (clock ticks): sends a heartbeat if nothing was sent for
  // heartbeat_ms (a pending partial packet goes out instead: it also tells
  // consumers the channel is alive). Returns whether something was sent.
  bool heartbeat_if_idle(std::uint64_t now) noexcept {
    if (now - last_send_ticks_ < heartbeat_ticks_) return false;
    if (!flush()) send(writer_.heartbeat(next_seq_), 0, true);
    return true;
  }

  // Start-up: every packet from now on also goes into `ring` (not owned;
  // nullptr: none) -- and only there when `ring_only` (another thread sends
  // the datagrams from the ring). The incremental channel's only.
  void mirror_to(ipc::MdRingServer* ring, bool ring_only = false) noexcept {
    ring_ = ring;
    ring_only_ = ring != nullptr && ring_only;
  }

  std::uint64_t next_seq() const noexcept { return next_seq_; }
  bool pending() const noexcept { return !writer_.empty(); }
  std::size_t mtu() const noexcept { return writer_.mtu(); }
  const net::SocketAddress& group() const noexcept { return sender_.group(); }

  // Datagrams sent (heartbeats included), their bytes, the messages in them,
  // heartbeats, datagrams the kernel refused (no buffer space, or an error:
  // last_send_error()), and messages that did not follow their predecessor.
  std::uint64_t packets() const noexcept { return packets_.get(); }
  std::uint64_t bytes() const noexcept { return bytes_.get(); }
  std::uint64_t messages() const noexcept { return messages_.get(); }
  std::uint64_t heartbeats() const noexcept { return heartbeats_.get(); }
  std::uint64_t send_drops() const noexcept { return send_drops_.get(); }
  std::uint64_t seq_jumps() const noexcept { return seq_jumps_.get(); }
  // Start-up, before the sending thread runs: `<prefix>.packets`, `.bytes`, ...
  void place_counters(core::CountersFile& file, const std::string& prefix) {
    file.place(packets_, prefix + ".packets");
    file.place(bytes_, prefix + ".bytes");
    file.place(messages_, prefix + ".messages");
    file.place(heartbeats_, prefix + ".heartbeats");
    file.place(send_drops_, prefix + ".send_drops");
    file.place(seq_jumps_, prefix + ".seq_jumps");
  }
  int last_send_error() const noexcept { return sender_.last_error(); }

 private:
  NT_ALWAYS_INLINE void send_packet() noexcept {
    const std::uint16_t count = writer_.count();
    send(writer_.finish(), count, false);
    n_causes_ = 0;
  }
  void send(std::span<const std::uint8_t> packet, std::uint16_t count, bool heartbeat) noexcept {
    last_send_ticks_ = clock_.now();
    if (ring_ != nullptr) {
      ring_->publish(packet);
      if (!heartbeat && stamp_sends_) stamp(packet);
    }
    if (!ring_only_ && !sender_.send(packet)) [[unlikely]] {
      send_drops_.add();
      return;
    }
    packets_.add();
    bytes_.add(packet.size());
    messages_.add(count);
    if (heartbeat) {
      heartbeats_.add();
    } else if (stamp_sends_ && ring_ == nullptr) {
      stamp(packet);
    }
  }
  // ex_md_write for the packet, ex_md_effect for each request it carries (one clock reading).
  void stamp(std::span<const std::uint8_t> packet) noexcept {
    if constexpr (NANOTICK_TELEMETRY != 0) {
      if (telemetry::Recorder* const r = NT_RECORDER(); r != nullptr) {
        const std::uint64_t now = r->now();
        const std::uint64_t md_key = first_seq_of(packet);
        (void)r->record_at(now, telemetry::Point::ex_md_write, md_key, 0, 0);
        for (std::size_t i = 0; i < n_causes_; ++i)
          (void)r->record_at(now, telemetry::Point::ex_md_effect, causes_[i], md_key, 0);
      }
    }
  }
  static std::uint64_t first_seq_of(std::span<const std::uint8_t> packet) noexcept {
    std::uint64_t seq;
    std::memcpy(&seq, packet.data() + offsetof(proto::PacketHeader, first_seq), sizeof seq);
    return seq;
  }

  const core::TscClock& clock_;
  const bool stamp_sends_;  // the incremental channel: its packets are the md keys of telemetry
  net::UdpMulticastSender sender_;
  ipc::MdRingServer* ring_ = nullptr;  // the incremental channel's shared-memory mirror, if any
  bool ring_only_ = false;  // the datagrams are sent from the ring by another thread
  proto::PacketWriter writer_;
  std::uint64_t next_seq_;
  std::uint64_t heartbeat_ticks_;
  std::uint64_t last_send_ticks_;
  core::Counter packets_;
  core::Counter bytes_;
  core::Counter messages_;
  core::Counter heartbeats_;
  core::Counter send_drops_;
  core::Counter seq_jumps_;
  // The requests whose events the packet being filled carries (telemetry: ex_md_effect).
  static constexpr std::size_t kMaxCauses = 64;
  std::uint64_t causes_[kMaxCauses] = {};
  std::size_t n_causes_ = 0;
};

// The sender of `channel`'s group from the config (start-up; throws
// std::invalid_argument naming the key: bad interface, group or ttl).
net::MulticastSenderConfig md_sender_config(proto::Channel channel, const MarketDataConfig& config);

// Milliseconds -> ticks of `clock` (at least 1, so "every 0 ticks" cannot
// turn a schedule into a busy loop).
std::uint64_t ms_to_ticks(const core::TscClock& clock, std::uint64_t ms) noexcept;

}  // namespace nanotick::exchange
