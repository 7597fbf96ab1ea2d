// TickToTradeFloor: the floor of tick-to-trade on this machine -- what any
// trader pays for "market data packet read -> order written to the socket"
// with no book, no strategy and no risk in between. A peer thread joins the
// exchange's incremental multicast group and, for every datagram, writes one
// order-sized message (kOrderBytes) to a loopback TCP connection (or a
// shared-memory session, setup.transport: the trader's order entry), timed
// exactly like the trader's hop: the TSC right after recv() returned -> the
// TSC right after send() returned (MdSockets and the order gateway take the
// same two readings, with the same socket classes from src/net). A sink
// thread reads and discards the stream the way the exchange's gateway reads
// its sessions: epoll_wait(0), then recv() until EAGAIN, idling like the
// exchange -- so each send() does the same kernel work as the trader's (the
// receiving socket sits in an epoll set, nobody blocks on it).
//
// Why the peer answers every datagram (heartbeats too) when the trader
// answers only some: the floor is the cost of the two system calls and of
// the wake-ups between them, which does not depend on the packet.
//
// Used by nanotick-floor (the demo runs it beside the traders, same load,
// same CPUs) and by tick_to_trade_bench (in its own process, pinned beside
// the measured trader).
//
// The two threads are core agents (Peer, Sink) on core runners, each with
// the idle strategy and CPU of the side it stands for.
//
// Thread-safety: the constructor, start(), stop() and result() are for one
// owning thread; between start() and stop() the peer and sink threads own
// their sockets and their fields of the result, which is read only after
// stop() (the joins order it before the reads). live() and failure() may be
// read from any thread. Start-up throws (net::SocketError /
// std::invalid_argument naming what failed; std::system_error for a thread
// that cannot be pinned, naming the CPU); the agents never allocate.
#pragma once

#include <sys/resource.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "core/agent_runner.hpp"
#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "floor/floor_thread_support.hpp"
#include "floor/live_figures.hpp"
#include "floor/loopback_pair.hpp"
#include "ipc/stream_link.hpp"
#include "net/epoll.hpp"
#include "net/socket_address.hpp"
#include "net/tcp.hpp"
#include "net/udp_multicast.hpp"

namespace nanotick::floors {

struct TickToTradeFloorSetup {
  net::Ipv4Address interface;  // joins the group on this interface (the trader's market_data.interface)
  net::SocketAddress group;    // the incremental channel; port 0 lets the kernel pick (tests)
  core::IdleKind peer_idle = core::IdleKind::backoff;  // the trader's idle
  core::IdleKind sink_idle = core::IdleKind::backoff;  // the exchange's
  int peer_cpu = -1;  // -1: not pinned (the demo pins nothing)
  int sink_cpu = -1;
  ipc::Transport transport = ipc::Transport::kTcp;  // how the order leaves: the trader's order-entry transport
  std::uint64_t shm_ring_bytes = 1u << 16;
};

struct TickToTradeFloorResult {
  core::LatencyHistogram hop_ns;   // recv() returned -> send() returned, per datagram answered
  std::uint64_t datagrams = 0;     // read while recording
  std::uint64_t truncated = 0;     // larger than the receive buffer (never expected: 64 KiB)
  std::uint64_t recv_errors = 0;   // recv failed (other than EAGAIN)
  std::uint64_t short_writes = 0;  // send() took fewer than kOrderBytes (the sink fell behind)
  std::uint64_t write_errors = 0;  // the connection failed: the peer stopped (see failure())
  std::uint64_t bytes_sunk = 0;    // read by the sink
  std::uint64_t sink_errors = 0;   // the sink's connection failed
  std::uint64_t peer_involuntary_switches = 0;  // the peer thread, while recording
  double seconds = 0;              // recording time
};

class TickToTradeFloor {
 public:
  // An order message's size on the wire: NewOrder is 40 bytes and
  // ModifyOrder 32, and a requote writes two: 64 stands for one write.
  static constexpr std::size_t kOrderBytes = 64;
  static constexpr std::size_t kDatagramBytes = 65536;  // any UDP datagram fits
  static constexpr int kPollBudget = 64;                // datagrams per pass, as MdFeedConfig::poll_budget

  explicit TickToTradeFloor(const TickToTradeFloorSetup& setup)
      : setup_(checked(setup)),
        receiver_({setup.interface, setup.group, 4 * 1024 * 1024}),
        buffer_(std::make_unique<std::uint8_t[]>(kDatagramBytes)),
        pair_(make_loopback_pair(setup.transport, setup.shm_ring_bytes)),
        poller_(4),
        peer_wait_(1) {
    if (const std::error_code ec = peer_wait_.add(receiver_.fd(), net::Interest::kRead, 0); ec)
      throw std::runtime_error("tick-to-trade floor: cannot watch the peer's socket: " + ec.message());
    if (const std::error_code ec = poller_.add(pair_.server.fd(), net::Interest::kRead, 0); ec)
      throw std::runtime_error("tick-to-trade floor: cannot watch the sink's socket: " + ec.message());
  }
  TickToTradeFloor(const TickToTradeFloor&) = delete;
  TickToTradeFloor& operator=(const TickToTradeFloor&) = delete;
  ~TickToTradeFloor() { stop(); }

  // The group as bound (with the kernel's port when the setup said 0).
  const net::SocketAddress& group() const noexcept { return receiver_.local_address(); }

  // Starts the sink, then the peer, which drops what queued up since the
  // group was joined and records every datagram from then on. Once only.
  // Throws std::system_error when a thread cannot be pinned.
  void start() {
    if (started_) throw std::logic_error("tick-to-trade floor: start() called twice");
    started_ = true;
    start_agent(sink_, sink_agent_, "nt-floor-sink", setup_.sink_cpu, setup_.sink_idle);
    start_agent(peer_, peer_agent_, "nt-floor-peer", setup_.peer_cpu, setup_.peer_idle);
  }

  // Stops and joins the peer, then the sink (idempotent).
  void stop() noexcept {
    stop_peer_.store(true, std::memory_order_release);
    peer_.reset();
    stop_sink_.store(true, std::memory_order_release);
    sink_.reset();
  }

  // True once the peer has dropped what queued up before start(): every
  // datagram sent from then on is answered and counted.
  bool recording() const noexcept { return recording_.load(std::memory_order_acquire); }
  // Running count / p50 / p99 of hop_ns, for a status line.
  const LiveFigures& live() const noexcept { return live_; }
  // Why a thread stopped early (a static string), or nullptr.
  const char* failure() const noexcept { return failure_.get(); }

  // After stop().
  const TickToTradeFloorResult& result() const noexcept { return result_; }

 private:
  static const TickToTradeFloorSetup& checked(const TickToTradeFloorSetup& s) { return s; }

  void fail(const char* why) noexcept { failure_.set(why); }

  // The peer: every datagram answered with one order-sized write, timed recv -> send.
  struct Peer {
    TickToTradeFloor& f;
    std::array<std::uint8_t, kOrderBytes> order{};
    rusage before{};
    std::uint64_t t_start = 0;
    bool broken = false;  // the connection to the sink failed: idle until stopped

    std::string_view role_name() const noexcept { return "nt-floor-peer"; }
    // A blocking idle sleeps on the multicast socket, as the trader does.
    void wait_fds(core::WaitFds& out) { out.add(f.peer_wait_.fd()); }
    // Broken, the peer reads no more: its socket out of the wait set, or a blocking idle would spin.
    void set_broken() noexcept {
      broken = true;
      (void)f.peer_wait_.remove(f.receiver_.fd());
    }
    void on_start() noexcept {
      const std::span<std::uint8_t> buffer(f.buffer_.get(), kDatagramBytes);
      order.fill(0x5a);
      // What queued up since the group was joined is not the window's: drop it.
      for (net::RecvResult r = f.receiver_.recv(buffer);
           r.status != net::RecvStatus::kNothing && r.status != net::RecvStatus::kError; r = f.receiver_.recv(buffer)) {
      }
      f.recording_.store(true, std::memory_order_release);
      ::getrusage(RUSAGE_THREAD, &before);
      t_start = f.clock_.now();
    }
    int do_work() noexcept {
      if (broken) return 0;
      const std::span<std::uint8_t> buffer(f.buffer_.get(), kDatagramBytes);
      TickToTradeFloorResult& res = f.result_;
      int work = 0;
      for (int i = 0; i < kPollBudget; ++i) {
        const net::RecvResult r = f.receiver_.recv(buffer);
        const std::uint64_t rx_tsc = f.clock_.now();
        if (r.status == net::RecvStatus::kNothing) break;
        if (r.status == net::RecvStatus::kError) {
          ++res.recv_errors;
          break;
        }
        ++work;
        if (r.status == net::RecvStatus::kTruncated) {
          ++res.truncated;
          continue;
        }
        ++res.datagrams;
        order[0] = buffer[0];  // the order depends on the packet, as a real one would
        const net::IoResult w = f.pair_.client.write_some(order);
        const std::uint64_t tx_tsc = f.clock_.now();
        if (w.status == net::IoStatus::kOk && w.bytes == kOrderBytes) {
          res.hop_ns.record(static_cast<std::uint64_t>(f.clock_.to_ns(static_cast<std::int64_t>(tx_tsc - rx_tsc))));
          f.live_.maybe_publish(res.hop_ns, tx_tsc);
        } else if (w.status == net::IoStatus::kOk || w.status == net::IoStatus::kWouldBlock) {
          ++res.short_writes;
        } else {
          ++res.write_errors;
          f.fail("tick-to-trade floor: the loopback connection to the sink failed");
          set_broken();
          break;
        }
      }
      return work;
    }
    void on_close() noexcept {
      TickToTradeFloorResult& res = f.result_;
      f.live_.publish(res.hop_ns);
      res.seconds =
          core::sec_from_ns(static_cast<double>(f.clock_.to_ns(static_cast<std::int64_t>(f.clock_.now() - t_start))));
      rusage after{};
      ::getrusage(RUSAGE_THREAD, &after);
      res.peer_involuntary_switches = static_cast<std::uint64_t>(after.ru_nivcsw - before.ru_nivcsw);
    }
  };

  // The sink: reads and discards the stream the way the exchange's gateway
  // reads its sessions. On close (after the peer was joined), one last drain
  // without epoll: loopback TCP queues the bytes inside the peer's send(), so
  // bytes_sunk then counts everything the peer wrote.
  struct Sink {
    TickToTradeFloor& f;
    std::array<std::uint8_t, 65536> buffer{};
    std::uint64_t bytes = 0;
    bool broken = false;  // the connection failed: idle until stopped

    std::string_view role_name() const noexcept { return "nt-floor-sink"; }
    // A blocking idle sleeps on the epoll set do_work() polls, as the gateway's does.
    void wait_fds(core::WaitFds& out) { out.add(f.poller_.fd()); }
    void set_broken() noexcept {
      broken = true;
      (void)f.poller_.remove(f.pair_.server.fd());
    }
    int do_work() noexcept {
      if (broken) return 0;
      // Shared memory is polled (read_some says kWouldBlock when empty), as the gateway does.
      if (!f.pair_.server.is_shm() && f.poller_.wait(0).empty()) return 0;
      return drain();
    }
    void on_close() noexcept {
      if (!broken) (void)drain();
      f.result_.bytes_sunk = bytes;
    }
    int drain() noexcept {
      int work = 0;
      for (;;) {
        const net::IoResult r = f.pair_.server.read_some(buffer);
        if (r.status == net::IoStatus::kOk) {
          bytes += r.bytes;
          ++work;
          continue;
        }
        if (r.status != net::IoStatus::kWouldBlock) {
          ++f.result_.sink_errors;
          f.fail("tick-to-trade floor: the sink's connection failed");
          set_broken();
        }
        return work;  // drained (or failed)
      }
    }
  };

  TickToTradeFloorSetup setup_;
  const core::TscClock& clock_ = core::TscClock::global();
  net::UdpMulticastReceiver receiver_;
  std::unique_ptr<std::uint8_t[]> buffer_;
  LoopbackPair pair_;
  net::EpollPoller poller_;     // the sink's socket: polled by the sink, slept on by a blocking idle
  net::EpollPoller peer_wait_;  // the peer's multicast socket: slept on by a blocking idle only
  LiveFigures live_{clock_};
  std::atomic<bool> stop_peer_{false};
  std::atomic<bool> stop_sink_{false};
  std::atomic<bool> recording_{false};
  FirstFailure failure_;
  bool started_ = false;
  TickToTradeFloorResult result_;
  Peer peer_agent_{*this};
  Sink sink_agent_{*this};
  std::optional<core::ConfiguredAgentRunner<Sink>> sink_;  // last: joined (by stop()) before the rest is destroyed
  std::optional<core::ConfiguredAgentRunner<Peer>> peer_;
};

}  // namespace nanotick::floors
