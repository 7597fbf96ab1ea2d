// The raw TCP peer of the order round trip: a thread, pinned like the
// exchange's critical thread and busy-polling like it, that answers a Logon
// with a LogonAck and every order message with one 96-byte ExecutionReport
// (client order id and ref_seq copied, Accepted for a NewOrder, Cancelled for
// a CancelOrder), and nothing else: no session checks, no sequencing, no
// journal, no matching, no market data. What it costs is loopback TCP plus
// two busy-polling threads, the floor under any order gateway on this
// machine. Two ways to wait, as rows of the same table:
//   kBusyRead  recv() on the non-blocking socket in a loop
//   kEpoll     epoll_wait(timeout 0) in a loop, recv() when readable, as the
//              exchange's gateway does (it serves many sessions)
// Serves one connection, then stops when it closes. Replies to a whole read
// are written together, and each send() is timed (fenced TSC): what one
// loopback write costs here, a floor under the exchange's own ack latency,
// which ends when its answer has been written. The constructor, stop() and
// the destructor run on the owning thread; the peer's state belongs to its
// own thread until stop() has joined it; stop_ is the only shared field (an
// atomic flag).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"
#include "ipc/shm_listener.hpp"
#include "ipc/stream_link.hpp"
#include "net/epoll.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::bench {

enum class EchoWait : std::uint8_t { kBusyRead, kEpoll };

class EchoPeer {
 public:
  // `shm`: serve one shared-memory session (at shm_path()) instead of TCP;
  // its input is polled (kEpoll waits like kBusyRead: there is nothing to epoll).
  EchoPeer(int cpu, EchoWait wait, bool shm = false)
      : listener_(net::parse_socket_address("127.0.0.1:0", net::PortZero::kAllowed)),
        wait_(shm ? EchoWait::kBusyRead : wait),
        in_(kInBytes),
        out_(kOutBytes) {
    if (shm) {
      static int serial = 0;
      shm_listener_.emplace(
          "/tmp/nt-echo-peer-" + std::to_string(::getpid()) + "-" + std::to_string(++serial) + ".sock",
          std::uint64_t{1} << 20);  // as the bench exchange's rings
    }
    thread_.emplace("nt-echo-peer", cpu, [this] { run(); });
  }
  ~EchoPeer() { stop(); }
  EchoPeer(const EchoPeer&) = delete;
  EchoPeer& operator=(const EchoPeer&) = delete;

  const net::SocketAddress& address() const noexcept { return listener_.local_address(); }
  // The shared-memory listener's path (empty when serving TCP).
  std::string shm_path() const { return shm_listener_ ? shm_listener_->path() : std::string(); }

  // Stops serving and joins the peer's thread.
  void stop() noexcept {
    stop_.store(true, std::memory_order_release);
    thread_.reset();
  }
  // Nanoseconds per send() call of the answers; read after stop().
  const core::LatencyHistogram& send_ns() const noexcept { return send_ns_; }

 private:
  static constexpr std::size_t kInBytes = 1 << 16;
  // Every input message is at least a header (8 bytes) and gets at most 96.
  static constexpr std::size_t kOutBytes = kInBytes / sizeof(proto::Header) * sizeof(proto::ExecutionReport);

  bool stopping() const noexcept { return stop_.load(std::memory_order_acquire); }

  void run() noexcept {
    std::optional<ipc::StreamLink> stream;
    while (!stopping() && !stream) {
      if (shm_listener_) {
        if (auto s = shm_listener_->accept()) stream.emplace().attach(std::move(*s));
      } else if (auto s = listener_.accept()) {
        stream.emplace().attach(std::move(*s));
      }
      if (!stream) core::BusySpinIdle::pause();
    }
    if (!stream) return;
    std::optional<net::EpollPoller> poller;
    if (wait_ == EchoWait::kEpoll) {
      try {
        poller.emplace(4);
      } catch (...) {
        return;  // the client sees the connection close and reports it
      }
      if (poller->add(stream->fd(), net::Interest::kRead, 0)) return;
    }
    std::size_t filled = 0;
    while (!stopping()) {
      if (poller && poller->wait(0).empty()) continue;
      const net::IoResult r = stream->read_some({in_.data() + filled, kInBytes - filled});
      if (r.status == net::IoStatus::kWouldBlock) continue;
      if (r.status != net::IoStatus::kOk) return;  // the client closed: done
      filled += r.bytes;
      std::size_t used = 0;
      std::size_t out = 0;
      for (;;) {
        const proto::Frame f = proto::next_frame({in_.data() + used, filled - used}, proto::Direction::kFromClient);
        if (f.status == proto::FrameStatus::kNeedMore) break;
        if (f.status == proto::FrameStatus::kFatal) return;
        out += answer(f.header, in_.data() + used, out_.data() + out);
        used += f.length;
      }
      std::memmove(in_.data(), in_.data() + used, filled - used);
      filled -= used;
      for (std::size_t sent = 0; sent < out && !stopping();) {
        const std::uint64_t t0 = stamp_begin();
        const net::IoResult w = stream->write_some({out_.data() + sent, out - sent});
        send_ns_.record(elapsed_ns(clock_, t0, stamp_end()));
        if (w.status == net::IoStatus::kWouldBlock) continue;
        if (w.status != net::IoStatus::kOk) return;
        sent += w.bytes;
      }
    }
  }

  // Writes the answer to one client message at `out`; returns its length.
  std::size_t answer(const proto::Header& h, const std::uint8_t* msg, std::uint8_t* out) noexcept {
    if (h.type == proto::MsgType::kLogon) {
      auto ack = proto::make_message<proto::LogonAck>(next_out_seq_++);
      ack.client_id = proto::read_message<proto::Logon>(msg).client_id;
      ack.heartbeat_ms = 60'000;
      return proto::write_message(ack, out);
    }
    if (h.type != proto::MsgType::kNewOrder && h.type != proto::MsgType::kCancelOrder) return 0;
    auto r = proto::make_message<proto::ExecutionReport>(next_out_seq_++);
    std::memcpy(&r.client_order_id, msg + 8, sizeof r.client_order_id);  // offset 8 in both messages
    r.ref_seq = h.seq;
    r.instrument = kEchoInstrument;
    r.exec_type = h.type == proto::MsgType::kNewOrder ? proto::ExecType::kAccepted : proto::ExecType::kCancelled;
    return proto::write_message(r, out);
  }

  static constexpr std::uint32_t kEchoInstrument = 0;

  net::TcpListener listener_;
  std::optional<ipc::ShmListener> shm_listener_;
  EchoWait wait_;
  std::vector<std::uint8_t> in_;
  std::vector<std::uint8_t> out_;
  std::uint32_t next_out_seq_ = 1;
  const core::TscClock& clock_ = core::TscClock::global();
  core::LatencyHistogram send_ns_;
  std::atomic<bool> stop_{false};
  std::optional<core::NamedThread> thread_;  // last: started once the rest exists
};

}  // namespace nanotick::bench
