// The trading client's incremental channel in shared memory (docs/TRADER.md
// "Transport"; the exchange's side is docs/EXCHANGE.md "Market data in
// shared memory"): with [trader] transport = "shm" the incremental packets
// are read from the exchange's market data ring instead of the multicast
// group, and handed to the same sink, on the same path, as a datagram read
// from the socket: sink.on_datagram(kIncremental, bytes, now, rx_tsc), with
// rx_tsc taken right after the packet was copied out of its slot (the tick
// of tick-to-trade, as after a recv). The consumer cannot tell the two
// apart, so everything after it -- sequencing, gaps, per-instrument
// recovery through the snapshot channel (which stays multicast) -- is one
// piece of code for both transports:
// - lapped (the exchange overwrote packets before they were read): the
//   packets are lost, counted here (md.shm.laps, md.shm.lost_packets); the
//   consumer sees the hole in the sequence numbers and recovers the
//   instruments it hit exactly as after a UDP gap;
// - the exchange dies (kill -9 included): once the ring has nothing new, the
//   control socket is looked at (at most once a millisecond); its EOF ends
//   the connection (md.shm.exchange_gone) and the feed reconnects with
//   exponential back-off (reconnect_initial_ms doubling to
//   reconnect_max_ms, reset by a connection made) to whatever exchange
//   listens at the path next: a new segment, from its next packet on. What
//   was lost meanwhile is a gap like any other.
//
// Never blocks: connecting is a non-blocking connect, then a look for the
// exchange's hello at most every 100 µs until connect_timeout_ms
// (ipc::MdRingSubscriber checks everything the exchange sends; a refusal is
// counted by reason, md.shm.refused.<reason>). poll() reads at most
// poll_budget packets.
//
// Construction is start-up code (throws std::invalid_argument naming the
// field); poll never allocates. Not thread-safe: one thread polls (the
// trader's engine thread, in both layouts: a ring read is no system call to
// move off it), and the sink runs on it; counters() may be read from any
// thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "client/client_types.hpp"
#include "client/reconnect_backoff.hpp"
#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "ipc/md_ring_subscriber.hpp"
#include "proto/market_data.hpp"

namespace nanotick::client {

struct MdRingFeedConfig {
  std::string path;  // the exchange's market_data.shm_path
  std::uint32_t connect_timeout_ms = 1000;  // connected, but no hello within this: refused (timed out)
  std::uint32_t reconnect_initial_ms = 100;
  std::uint32_t reconnect_max_ms = 5000;
  std::uint32_t poll_budget = 64;  // packets per poll()

  // Throws std::invalid_argument "md ring: <field>: <problem>".
  void validate() const;
};

struct MdRingFeedCounters {
  core::Counter connect_attempts;
  core::Counter connect_failures;  // the connect itself failed (nobody listens at the path)
  std::array<core::Counter, ipc::kMdRingRefusals> refused;  // by ipc::MdRingRefusal (kNone unused)
  core::Counter connects;       // rings mapped
  core::Counter exchange_gone;  // connections ended by the exchange's EOF
  core::Counter packets;        // handed to the sink
  core::Counter laps;           // times this reader was lapped
  core::Counter lost_packets;   // packets those laps cost
  core::Counter bad_records;    // slots whose length did not fit the slot (skipped)
  core::Counter connected;      // gauge: 1 while a ring is mapped
};

class MdRingFeed {
 public:
  static constexpr TimeNs kPeerCheckNs = core::kNsPerMs;  // how often an idle ring's control socket is looked at
  static constexpr TimeNs kHelloPollNs = 100 * core::kNsPerUs;  // how often a connecting feed looks for the hello

  explicit MdRingFeed(const MdRingFeedConfig& config, const core::TscClock& clock = core::TscClock::global())
      : config_(validated(config)),
        clock_(clock),
        subscriber_(config.path),
        backoff_(config.reconnect_initial_ms, config.reconnect_max_ms) {}
  MdRingFeed(const MdRingFeed&) = delete;
  MdRingFeed& operator=(const MdRingFeed&) = delete;

  // Reads up to poll_budget packets into `sink` (connected), or takes the
  // next connection step when its time has come. Returns the work done.
  template <typename Sink>
  NT_ALWAYS_INLINE int poll(Sink& sink, TimeNs now) noexcept {
    if (subscriber_.state() == ipc::MdRingSubscriber::State::kConnected) [[likely]]
      return read(sink, now);
    return connect_step(now);
  }

  bool connected() const noexcept { return subscriber_.state() == ipc::MdRingSubscriber::State::kConnected; }
  const std::string& path() const noexcept { return subscriber_.path(); }
  const MdRingFeedCounters& counters() const noexcept { return counters_; }
  // errno of the last failed connect (0: none yet).
  int last_connect_errno() const noexcept { return last_errno_; }
  // Start-up, before the polling thread runs: "md.shm.*".
  void place_counters(core::CountersFile& file);

 private:
  static const MdRingFeedConfig& validated(const MdRingFeedConfig& c) {
    c.validate();
    return c;
  }

  template <typename Sink>
  NT_ALWAYS_INLINE int read(Sink& sink, TimeNs now) noexcept {
    int work = 0;
    for (std::uint32_t i = 0; i < config_.poll_budget; ++i) {
      switch (subscriber_.read()) {
        case ipc::MdRingSubscriber::Read::kPacket: {
          const std::uint64_t rx_tsc = clock_.now();
          counters_.packets.add();
          sink.on_datagram(proto::Channel::kIncremental, subscriber_.packet(), now, rx_tsc);
          break;
        }
        case ipc::MdRingSubscriber::Read::kEmpty:
          if (work == 0) check_exchange(now);
          return work;
        case ipc::MdRingSubscriber::Read::kLapped:
          counters_.laps.add();
          counters_.lost_packets.add(subscriber_.lost());
          break;
        case ipc::MdRingSubscriber::Read::kBadRecord: counters_.bad_records.add(); break;
      }
      ++work;
    }
    return work;
  }

  // Nothing new in the ring: is the exchange still there? (At most once per kPeerCheckNs.)
  void check_exchange(TimeNs now) noexcept;
  int connect_step(TimeNs now) noexcept;
  void retry_later(TimeNs now) noexcept;

  MdRingFeedConfig config_;
  const core::TscClock& clock_;
  ipc::MdRingSubscriber subscriber_;
  ReconnectBackoff backoff_;
  TimeNs next_attempt_ns_ = 0;  // closed: the next connect
  TimeNs next_look_ns_ = 0;     // connecting: the next look for the hello; connected: the next peer check
  TimeNs deadline_ns_ = 0;      // connecting: give up then
  int last_errno_ = 0;
  MdRingFeedCounters counters_;
};

}  // namespace nanotick::client
