// The incremental market data publisher (docs/EXCHANGE.md "Pipeline",
// PROTOCOL.md §2): encodes each engine MdEvent as its wire message on channel
// 1 with the event's own sequence number (and, in the message, its
// instrument's: both are the engine's, so both continue across restarts),
// packs consecutive events into packets up to the MTU (a full packet goes out
// as soon as the next message does not fit; flush() sends the partial one at
// the end of each engine batch, so an event waits at most one batch), sends
// heartbeats when idle, and forwards every event to the snapshot publisher
// through an MdRing.
//
// Shared memory (docs/EXCHANGE.md "Market data in shared memory"): given an
// ipc::MdRingServer (share_in(), wired by the exchange server), every packet
// the channel sends -- heartbeats included -- also goes into that ring, and
// do_work() lets the ring's readers in (and notices them leave) about once a
// millisecond: an epoll look from the agent's timer, never a system call
// per packet.
//
// Thread-safety: one thread calls on_md/flush/do_work (the md publisher's
// agent thread); the counters may be read from any thread. The MdRing's
// consumer (SnapshotPublisher) must run on ANOTHER thread: a full ring is
// waited out with _mm_pause (counted in ring_full_spins()), because dropping
// an event there would silently corrupt every later snapshot.
//
// Hot path: noexcept, no allocation, no virtual calls.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/tsc_clock.hpp"
#include "engine/events.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/marketdata/md_channel.hpp"
#include "exchange/pipeline.hpp"
#include "ipc/md_ring_server.hpp"

namespace nanotick::exchange {

class MdPublisher {
 public:
  // `next_seq`: the engine's next market data sequence number (1 on a fresh
  // start, last_md_seq() + 1 after recovery), announced by heartbeats until
  // the first event. Start-up: throws std::invalid_argument / net::SocketError
  // naming the config key.
  MdPublisher(const MarketDataConfig& config, MdRing& snapshot_ring, engine::Seq next_seq = 1,
              const core::TscClock& clock = core::TscClock::global());

  // Start-up, before the publishing thread runs: mirror every incremental
  // packet into `ring` (not owned; it must outlive the publisher's thread)
  // and serve its readers from do_work().
  // `ring_only`: the datagrams are sent by an MdUdpForwarder reading the
  // ring on another thread (market_data.udp_sender = "aux").
  void share_in(ipc::MdRingServer& ring, bool ring_only = false) noexcept {
    shm_ring_ = &ring;
    channel_.mirror_to(&ring, ring_only);
  }

  // Encodes and queues one event (sending the packet before it if it does not
  // fit), then forwards it to the snapshot publisher.
  void on_md(const engine::MdEvent& e) noexcept;

  // Sends the partial packet, if any. Call once per engine batch.
  void flush() noexcept { (void)channel_.flush(); }
  // A partial packet waits for flush().
  bool pending() const noexcept { return channel_.pending(); }

  // Agent duty cycle: lets the shared-memory ring's readers in and out (at
  // most once a millisecond), sends a partial packet left over by the
  // caller, else a heartbeat when nothing was sent for heartbeat_ms. Returns
  // packets sent plus readers let in or out.
  int do_work() noexcept;
  std::string_view role_name() const noexcept { return "md-publisher"; }

  const MdChannel& channel() const noexcept { return channel_; }
  std::uint64_t packets() const noexcept { return channel_.packets(); }
  std::uint64_t bytes() const noexcept { return channel_.bytes(); }
  std::uint64_t messages() const noexcept { return channel_.messages(); }
  std::uint64_t heartbeats() const noexcept { return channel_.heartbeats(); }
  std::uint64_t send_drops() const noexcept { return channel_.send_drops(); }
  // _mm_pause iterations spent waiting for room in the snapshot ring.
  std::uint64_t ring_full_spins() const noexcept { return ring_full_spins_.get(); }
  // Events of an unknown MdType: not published, not forwarded (the
  // consumers see a sequence gap).
  std::uint64_t bad_events() const noexcept { return bad_events_.get(); }
  // Start-up, before the publishing thread runs.
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    channel_.place_counters(file, "md.incremental");
    file.place(ring_full_spins_, "md.incremental.ring_full_spins");
    file.place(bad_events_, "md.incremental.bad_events");
    if (shm_ring_ != nullptr) shm_ring_->place_counters(file);  // written by this thread too
  }

 private:
  void forward(const engine::MdEvent& e) noexcept;

  const core::TscClock& clock_;
  MdRing& ring_;
  MdChannel channel_;
  ipc::MdRingServer* shm_ring_ = nullptr;
  const std::uint64_t shm_poll_ticks_;  // ~1 ms: how often the ring's readers are looked at
  std::uint64_t next_shm_poll_ = 0;
  core::Counter ring_full_spins_;
  core::Counter bad_events_;
};

}  // namespace nanotick::exchange
