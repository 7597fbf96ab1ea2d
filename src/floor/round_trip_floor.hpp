// RoundTripFloor: the floor of the order round trip on this machine -- a raw
// ping-pong over the order-entry transport (TCP on loopback, or a
// shared-memory session: setup.transport) of an order's and its answer's sizes (a NewOrder,
// 40 bytes out; an ExecutionReport, 96 bytes back) with no session, no
// sequencer, no journal and no engine. A client thread sends one ping at a
// time, paced (pings_per_s, one every 1/rate s: a trader's order flow, not a
// flood), and times it like the trader's round trip: the TSC right after the
// send() returned -> the TSC right after the recv() that completed the
// answer returned (tr_tcp_write -> tr_response_read, docs/TELEMETRY.md). It
// waits for the answer polling its non-blocking socket with the trader's
// idle strategy. An echo thread answers each complete ping with 96 bytes,
// waiting the way the exchange's gateway does: epoll_wait(0) in a loop,
// recv() until EAGAIN when readable, idling like the exchange between passes.
//
// What the ratio "ours / this" means: the exchange's and the trader's code,
// the journal, the engine and the wake-ups of more threads, over the two
// system calls and two wake-ups any round trip on loopback pays.
//
// The two threads are core agents (Client, Echo) on core runners, each with
// the idle strategy and CPU of the side it stands for; with "block" each
// sleeps in epoll_wait on its socket, as the trader and the gateway do.
//
// Thread-safety: the constructor, start(), stop() and result() are for one
// owning thread; between start() and stop() the client and echo threads own
// their ends and their fields of the result, read only after stop() (the
// joins order them before the reads). live() and failure() from any thread.
// Start-up throws (a thread that cannot be pinned: std::system_error naming
// the CPU); the agents never allocate.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
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
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::floors {

struct RoundTripFloorSetup {
  double pings_per_s = 1000;  // 0.1 .. 100000; never more than one ping in flight
  core::IdleKind client_idle = core::IdleKind::backoff;  // the trader's
  core::IdleKind echo_idle = core::IdleKind::backoff;    // the exchange's
  int client_cpu = -1;  // -1: not pinned
  int echo_cpu = -1;
  ipc::Transport transport = ipc::Transport::kTcp;  // the order-entry transport it stands for
  std::uint64_t shm_ring_bytes = 1u << 16;          // shm: each direction's ring (the exchange's shm_ring_bytes)
};

struct RoundTripFloorResult {
  core::LatencyHistogram round_trip_ns;  // ping sent -> its whole answer read, per ping
  std::uint64_t pings = 0;          // sent
  std::uint64_t late_pings = 0;     // sent more than a period after their slot (the schedule restarts there)
  std::uint64_t short_writes = 0;   // a ping's send() took part of it (the rest followed; never expected)
  std::uint64_t client_errors = 0;  // the client's connection failed (see failure())
  std::uint64_t answers = 0;        // written by the echo
  std::uint64_t echo_errors = 0;    // the echo's connection failed
  double seconds = 0;               // the client's running time
};

class RoundTripFloor {
 public:
  static constexpr std::size_t kPingBytes = sizeof(proto::NewOrder);
  static constexpr std::size_t kAnswerBytes = sizeof(proto::ExecutionReport);
  static_assert(kPingBytes == 40 && kAnswerBytes == 96, "an order and its answer, as on the wire (PROTOCOL.md)");

  explicit RoundTripFloor(const RoundTripFloorSetup& setup)
      : setup_(checked(setup)),
        period_ticks_(static_cast<std::uint64_t>(clock_.ticks_from_ns(core::ns_from_sec(1.0) / setup.pings_per_s))),
        pair_(make_loopback_pair(setup.transport, setup.shm_ring_bytes)),
        poller_(4),
        client_wait_(1) {
    if (const std::error_code ec = poller_.add(pair_.server.fd(), net::Interest::kRead, 0); ec)
      throw std::runtime_error("round trip floor: cannot watch the echo's socket: " + ec.message());
    if (const std::error_code ec = client_wait_.add(pair_.client.fd(), net::Interest::kRead, 0); ec)
      throw std::runtime_error("round trip floor: cannot watch the client's socket: " + ec.message());
  }
  RoundTripFloor(const RoundTripFloor&) = delete;
  RoundTripFloor& operator=(const RoundTripFloor&) = delete;
  ~RoundTripFloor() { stop(); }

  // Starts the echo, then the client; the first ping goes one period later.
  // Once only. Throws std::system_error when a thread cannot be pinned.
  void start() {
    if (started_) throw std::logic_error("round trip floor: start() called twice");
    started_ = true;
    start_agent(echo_, echo_agent_, "nt-floor-echo", setup_.echo_cpu, setup_.echo_idle);
    start_agent(client_, client_agent_, "nt-floor-ping", setup_.client_cpu, setup_.client_idle);
  }

  // Stops and joins the client, then the echo (idempotent).
  void stop() noexcept {
    stop_client_.store(true, std::memory_order_release);
    client_.reset();
    stop_echo_.store(true, std::memory_order_release);
    echo_.reset();
  }

  const LiveFigures& live() const noexcept { return live_; }
  const char* failure() const noexcept { return failure_.get(); }

  // After stop().
  const RoundTripFloorResult& result() const noexcept { return result_; }

 private:
  static const RoundTripFloorSetup& checked(const RoundTripFloorSetup& s) {
    if (!(s.pings_per_s >= 0.1 && s.pings_per_s <= 100'000))
      throw std::invalid_argument("round trip floor: pings per second must be in [0.1, 100000], got " +
                                  std::to_string(s.pings_per_s));
    return s;
  }

  void fail(const char* why) noexcept { failure_.set(why); }

  // Writes all of `bytes` (a partial write is finished at once, spinning:
  // with one message in flight the socket buffer is never full). False when
  // the connection failed or a stop was asked meanwhile.
  static bool write_all(ipc::StreamLink& s, std::span<const std::uint8_t> bytes, const std::atomic<bool>& stop,
                        std::uint64_t& short_writes) noexcept {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const net::IoResult w = s.write_some(bytes.subspan(sent));
      if (w.status == net::IoStatus::kOk) {
        sent += w.bytes;
        if (sent < bytes.size()) ++short_writes;
      } else if (w.status != net::IoStatus::kWouldBlock || stop.load(std::memory_order_acquire)) {
        return false;
      }
    }
    return true;
  }

  // The client: one ping at a time on its schedule, timed to its answer's last byte.
  struct Client {
    RoundTripFloor& f;
    std::array<std::uint8_t, kPingBytes> ping{};
    std::array<std::uint8_t, kAnswerBytes> answer{};
    std::uint64_t t_start = 0;
    std::uint64_t next = 0;
    std::uint64_t sent_tsc = 0;
    std::size_t got = 0;  // bytes of the awaited answer read so far
    bool waiting = false;
    bool broken = false;  // the connection failed: idle until stopped

    std::string_view role_name() const noexcept { return "nt-floor-ping"; }
    // A blocking idle sleeps on the client's socket (the ping schedule runs on its timeout).
    void wait_fds(core::WaitFds& out) { out.add(f.client_wait_.fd()); }
    // A broken connection stays readable (EOF): out of the wait set, or a blocking idle would spin.
    void set_broken() noexcept {
      broken = true;
      (void)f.client_wait_.remove(f.pair_.client.fd());
    }
    void on_start() noexcept {
      t_start = f.clock_.now();
      next = t_start + f.period_ticks_;
    }
    int do_work() noexcept {
      if (broken) return 0;
      RoundTripFloorResult& res = f.result_;
      int work = 0;
      if (!waiting) {
        const std::uint64_t now = f.clock_.now();
        if (now >= next) {
          if (now - next > f.period_ticks_) {  // held up for more than a period: no burst to catch up
            ++res.late_pings;
            next = now;
          }
          next += f.period_ticks_;
          ping[0] = static_cast<std::uint8_t>(res.pings);
          std::uint64_t ignored_short = 0;
          if (!write_all(f.pair_.client, ping, f.stop_client_, ignored_short)) {
            if (!f.stop_client_.load(std::memory_order_acquire)) {
              ++res.client_errors;
              f.fail("round trip floor: the client's connection failed");
            }
            set_broken();
            return 0;
          }
          sent_tsc = f.clock_.now();
          res.short_writes += ignored_short;
          ++res.pings;
          waiting = true;
          got = 0;
          ++work;
        }
      }
      if (waiting) {
        const net::IoResult r = f.pair_.client.read_some(std::span(answer).subspan(got));
        if (r.status == net::IoStatus::kOk) {
          const std::uint64_t rx_tsc = f.clock_.now();
          got += r.bytes;
          ++work;
          if (got == kAnswerBytes) {
            res.round_trip_ns.record(
                static_cast<std::uint64_t>(f.clock_.to_ns(static_cast<std::int64_t>(rx_tsc - sent_tsc))));
            f.live_.maybe_publish(res.round_trip_ns, rx_tsc);
            waiting = false;
          }
        } else if (r.status != net::IoStatus::kWouldBlock) {
          ++res.client_errors;
          f.fail("round trip floor: the client's connection failed");
          set_broken();
        }
      }
      return work;
    }
    void on_close() noexcept {
      f.live_.publish(f.result_.round_trip_ns);
      f.result_.seconds =
          core::sec_from_ns(static_cast<double>(f.clock_.to_ns(static_cast<std::int64_t>(f.clock_.now() - t_start))));
    }
  };

  // The echo: an answer for every whole ping, reading the way the exchange's gateway does.
  struct Echo {
    RoundTripFloor& f;
    std::array<std::uint8_t, 4096> in{};
    std::array<std::uint8_t, kAnswerBytes> answer{};
    std::size_t partial = 0;  // bytes of a ping not complete yet
    bool broken = false;      // the connection failed (or stopped mid-write): idle until stopped

    std::string_view role_name() const noexcept { return "nt-floor-echo"; }
    // A blocking idle sleeps on the epoll set do_work() polls, as the gateway's does.
    void wait_fds(core::WaitFds& out) { out.add(f.poller_.fd()); }
    void set_broken() noexcept {
      broken = true;
      (void)f.poller_.remove(f.pair_.server.fd());
    }
    void on_start() noexcept { answer.fill(0xa5); }
    int do_work() noexcept {
      if (broken) return 0;
      // Shared memory is polled (read_some says kWouldBlock when empty), as the gateway does.
      if (!f.pair_.server.is_shm() && f.poller_.wait(0).empty()) return 0;
      int work = 0;
      std::uint64_t ignored_short = 0;
      for (;;) {
        const net::IoResult r = f.pair_.server.read_some(in);
        if (r.status == net::IoStatus::kWouldBlock) break;
        if (r.status != net::IoStatus::kOk) {
          ++f.result_.echo_errors;
          f.fail("round trip floor: the echo's connection failed");
          set_broken();
          return work;
        }
        ++work;
        for (partial += r.bytes; partial >= kPingBytes; partial -= kPingBytes) {
          if (!write_all(f.pair_.server, answer, f.stop_echo_, ignored_short)) {
            set_broken();
            if (f.stop_echo_.load(std::memory_order_acquire)) return work;
            ++f.result_.echo_errors;
            f.fail("round trip floor: the echo's connection failed");
            return work;
          }
          ++f.result_.answers;
        }
      }
      return work;
    }
  };

  RoundTripFloorSetup setup_;
  const core::TscClock& clock_ = core::TscClock::global();
  std::uint64_t period_ticks_;
  LoopbackPair pair_;
  net::EpollPoller poller_;       // the echo's socket: polled by the echo, slept on by a blocking idle
  net::EpollPoller client_wait_;  // the client's socket: slept on by a blocking idle only
  LiveFigures live_{clock_};
  std::atomic<bool> stop_client_{false};
  std::atomic<bool> stop_echo_{false};
  FirstFailure failure_;
  bool started_ = false;
  RoundTripFloorResult result_;
  Client client_agent_{*this};
  Echo echo_agent_{*this};
  std::optional<core::ConfiguredAgentRunner<Echo>> echo_;  // last: joined (by stop()) before the rest is destroyed
  std::optional<core::ConfiguredAgentRunner<Client>> client_;
};

}  // namespace nanotick::floors
