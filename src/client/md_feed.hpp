// The trading client's market data input (docs/TRADER.md "Pipeline"): two
// non-blocking multicast receivers, one per channel (incremental and
// snapshot, PROTOCOL.md §2), and one fixed receive buffer (MdSockets). With
// the shared-memory transport the incremental channel comes from the
// exchange's ring instead (md_ring_feed.hpp, same sink, same path): then
// no socket joins the incremental group (incremental_multicast = false) and
// MdSockets reads the snapshot channel only.
// poll(sink, now) reads up to poll_budget datagrams from each socket,
// stamping each with the TSC right after it was read (the tick of
// tick-to-trade), and hands them to the sink: the MdConsumer (md_consumer.hpp)
// itself, or a ring to the consumer's thread (trader.hpp composes them).
//
// Why the incremental socket is read first: its packets move the books the
// strategy trades on; snapshots only serve instruments in recovery. Both
// get a budget per poll so neither starves the other, nor the other agents
// of a compact thread.
//
// A datagram larger than the receive buffer is counted as truncated and
// dropped (never parsed from its first bytes); a receive error is counted
// and ends that socket's turn. Construction is start-up code (throws
// std::invalid_argument / net::SocketError naming the field); poll never
// allocates. Not thread-safe: one thread polls, and the sink runs on it;
// counters() may be read from any thread.
//
// incremental_md_key() reads a datagram's telemetry md key (the trader's
// sinks stamp tr_udp_read / tr_engine_dequeue with it: trader.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>

#include "client/client_types.hpp"
#include "core/agent.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/tsc_clock.hpp"
#include "net/socket_address.hpp"
#include "net/udp_multicast.hpp"
#include "proto/market_data.hpp"

namespace nanotick::client {

struct MdFeedConfig {
  net::Ipv4Address interface;         // joins both groups on this interface (e.g. 127.0.0.1)
  net::SocketAddress incremental;     // channel 1 group:port (port 0: the kernel picks, for tests)
  net::SocketAddress snapshot;        // channel 2 group:port
  int receive_buffer_bytes = 4 * 1024 * 1024;  // SO_RCVBUF asked for each socket
  std::uint32_t max_datagram_bytes = 65000;  // receive buffer; larger datagrams are truncated (md.mtu is at most 65000)
  std::uint32_t poll_budget = 64;  // datagrams per socket per poll()
  // false: the incremental channel is read from the shared-memory ring
  // (MdRingFeed); no socket joins its group and `incremental` is not used.
  bool incremental_multicast = true;

  // Throws std::invalid_argument "md feed: <field>: <problem>".
  void validate() const;
};

// The telemetry md key of a datagram read on `channel` (docs/TELEMETRY.md):
// the first_seq of an incremental packet that carries messages; 0 for a
// heartbeat (count 0), a snapshot-channel packet, or a datagram too short to
// hold a packet header (nothing past its end is read). The rest of the
// packet is not checked: the consumer does that, and a key is only a label.
inline std::uint64_t incremental_md_key(proto::Channel channel, std::span<const std::uint8_t> datagram) noexcept {
  if (channel != proto::Channel::kIncremental || datagram.size() < sizeof(proto::PacketHeader)) return 0;
  proto::PacketHeader h;
  std::memcpy(&h, datagram.data(), sizeof h);
  if (h.channel != proto::Channel::kIncremental || h.count == 0) return 0;
  return h.first_seq;
}

struct MdFeedCounters {
  std::array<core::Counter, 2> datagrams;  // handed to the consumer, by channel (0 incremental, 1 snapshot)
  std::array<core::Counter, 2> truncated;  // larger than max_datagram_bytes: dropped
  std::array<core::Counter, 2> recv_errors;  // recv failed (errno in the receiver's counters)
};

// The two sockets and the receive buffer: reads datagrams and hands each to
// a sink with sink.on_datagram(channel, bytes, now, rx_tsc) -- the consumer
// itself (compact layout) or a ring to the consumer's thread (dedicated).
class MdSockets {
 public:
  explicit MdSockets(const MdFeedConfig& config, const core::TscClock& clock = core::TscClock::global())
      : config_(validated(config)),
        clock_(clock),
        snapshot_({config.interface, config.snapshot, config.receive_buffer_bytes}),
        buffer_(std::make_unique<std::uint8_t[]>(config.max_datagram_bytes)) {
    if (config.incremental_multicast)
      incremental_.emplace(
          net::MulticastReceiverConfig{config.interface, config.incremental, config.receive_buffer_bytes});
  }
  MdSockets(const MdSockets&) = delete;
  MdSockets& operator=(const MdSockets&) = delete;

  // Reads what both sockets have (up to the budget each) into `sink`.
  // Returns the datagrams read.
  template <typename Sink>
  int poll(Sink& sink, TimeNs now) noexcept {
    int work = incremental_ ? drain(sink, *incremental_, proto::Channel::kIncremental, 0, now) : 0;
    work += drain(sink, snapshot_, proto::Channel::kSnapshot, 1, now);
    return work;
  }

  // What a blocking idle strategy sleeps on (core/agent.hpp): both sockets.
  void wait_fds(core::WaitFds& out) {
    if (incremental_) out.add(incremental_->fd());
    out.add(snapshot_.fd());
  }

  const MdFeedCounters& counters() const noexcept { return counters_; }
  // Start-up, before the reading thread runs: "md.datagrams.<channel>",
  // "md.truncated.<channel>", "md.recv_errors.<channel>".
  void place_counters(core::CountersFile& file) {
    static constexpr const char* kChannel[2] = {"incremental", "snapshot"};
    for (std::size_t ch = 0; ch < 2; ++ch) {
      file.place(counters_.datagrams[ch], std::string("md.datagrams.") + kChannel[ch]);
      file.place(counters_.truncated[ch], std::string("md.truncated.") + kChannel[ch]);
      file.place(counters_.recv_errors[ch], std::string("md.recv_errors.") + kChannel[ch]);
    }
  }
  // The bound groups (the kernel's port when the config said 0); the
  // incremental one only with incremental_multicast.
  const net::SocketAddress& incremental_address() const noexcept { return incremental_->local_address(); }
  const net::SocketAddress& snapshot_address() const noexcept { return snapshot_.local_address(); }

 private:
  static const MdFeedConfig& validated(const MdFeedConfig& c) {
    c.validate();
    return c;
  }

  template <typename Sink>
  int drain(Sink& sink, net::UdpMulticastReceiver& receiver, proto::Channel channel, std::size_t ch,
            TimeNs now) noexcept {
    const std::span<std::uint8_t> buffer(buffer_.get(), config_.max_datagram_bytes);
    int work = 0;
    for (std::uint32_t i = 0; i < config_.poll_budget; ++i) {
      const net::RecvResult r = receiver.recv(buffer);
      const std::uint64_t rx_tsc = clock_.now();
      switch (r.status) {
        case net::RecvStatus::kNothing: return work;
        case net::RecvStatus::kDatagram:
          counters_.datagrams[ch].add();
          sink.on_datagram(channel, buffer.first(r.bytes), now, rx_tsc);
          ++work;
          break;
        case net::RecvStatus::kTruncated:
          counters_.truncated[ch].add();
          ++work;
          break;
        case net::RecvStatus::kError: counters_.recv_errors[ch].add(); return work;
      }
    }
    return work;
  }

  MdFeedConfig config_;
  const core::TscClock& clock_;
  std::optional<net::UdpMulticastReceiver> incremental_;  // absent: the ring carries the incremental channel
  net::UdpMulticastReceiver snapshot_;
  std::unique_ptr<std::uint8_t[]> buffer_;
  MdFeedCounters counters_;
};

}  // namespace nanotick::client
