// The incremental feed's datagrams, sent from the shared-memory ring by the
// auxiliary thread (market_data.udp_sender = "aux"; docs/EXCHANGE.md
// "Market data in shared memory"). Why: a loopback multicast sendto() costs
// microseconds (one delivery per receiver, inside the call), and on the
// compact critical thread it sits between writing one answer and reading
// the next order. With the ring on, the publisher writes each packet into the
// ring only (a few stores) and this agent, a reader of the same ring in the
// same process, sends every packet it reads as one datagram -- the same
// bytes, heartbeats included, in the same order.
//
// What it costs a UDP receiver: the aux thread's wake-up (its idle strategy:
// with backoff up to the park time) on top of the send. A forwarder that
// falls more than the ring's packets behind is lapped: the datagrams it
// missed are counted (lost_packets) and never sent, so UDP receivers see a
// sequence gap and recover through the snapshot feed, as after any lost
// datagram. The ring's readers are never slowed by it.
//
// Thread-safety: one thread calls do_work(); the counters may be read from
// any thread. Construction is start-up code (opens the socket; throws naming
// the config key); do_work() is noexcept and never allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "exchange/exchange_config.hpp"
#include "ipc/md_ring_layout.hpp"
#include "ipc/md_ring_server.hpp"
#include "net/udp_multicast.hpp"

namespace nanotick::exchange {

class MdUdpForwarder {
 public:
  // Packets sent per do_work(): bounded, so that the aux thread's other
  // agents (snapshot feed, journal syncer) get their turn under a burst.
  static constexpr int kPacketsPerWork = 64;

  // Forwards `ring`'s packets (not owned; outlives this) to the incremental
  // group of `config`, from the next packet published on. nullptr: off (the
  // publisher sends its own datagrams), do_work() does nothing.
  MdUdpForwarder(const MarketDataConfig& config, const ipc::MdRingServer* ring);

  bool on() const noexcept { return reader_.has_value(); }
  int do_work() noexcept;
  // After the last do_work(): sends what is left (the aux thread stops after
  // the publisher, so a clean shutdown forwards every packet published).
  void on_close() noexcept {
    while (do_work() > 0) {
    }
  }
  std::string_view role_name() const noexcept { return "md-udp-forwarder"; }

  std::uint64_t packets() const noexcept { return packets_.get(); }
  std::uint64_t send_drops() const noexcept { return send_drops_.get(); }
  std::uint64_t lost_packets() const noexcept { return lost_.get(); }
  // Start-up, before the forwarding thread runs: "md.udp_forward.packets", ...
  void place_counters(core::CountersFile& file);

 private:
  std::optional<net::UdpMulticastSender> sender_;
  std::optional<ipc::MdRing::Reader> reader_;
  ipc::MdRingPacket record_{};
  core::Counter packets_;
  core::Counter bytes_;
  core::Counter send_drops_;
  core::Counter lost_;
};

}  // namespace nanotick::exchange
