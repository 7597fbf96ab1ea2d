// The benchmark's order-entry client (docs/PROTOCOL.md §1): one session on a
// non-blocking TCP socket, busy-polled by its caller. It queues NewOrder /
// CancelOrder messages into its own buffer (the caller decides when to
// flush, so a windowed sender writes many per system call), reads and frames
// what the peer sends, checks the peer's sequence numbers, and hands every
// ExecutionReport to a callback. Anything else (a reject, a logout, a broken
// frame) ends the benchmark: the bench's order stream never asks for one.
// The same class talks to the real exchange and to the raw echo peer, so both
// sides of the round-trip comparison run identical client code.
// Steady state does not allocate; failures throw (cold, end of the run).
// Not thread-safe: owned by the thread that polls it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "core/compiler.hpp"
#include "core/tsc_clock.hpp"
#include "ipc/stream_link.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::bench {

// The bench's orders: buy limits far below any seller, so each NewOrder
// rests (one Accepted report) until its CancelOrder (one Cancelled report).
inline constexpr std::uint32_t kBenchInstrument = 0;
inline constexpr std::int64_t kRestingPrice = 1000;

[[noreturn]] NT_COLD inline void client_fail(const std::string& what) { throw std::runtime_error(what); }

class OrderClient {
 public:
  static constexpr std::size_t kBufferBytes = 1 << 16;

  // Connects (TCP to `server`, or a shared-memory session at the UNIX socket
  // path `shm_path` when it is not empty), logs on as `client_id` with `key`
  // (asking for a 60 s heartbeat, so an idle pause never costs the session)
  // and waits for the LogonAck.
  OrderClient(const net::SocketAddress& server, std::uint32_t client_id, std::string_view key,
              const std::string& shm_path = {}) {
    if (shm_path.empty()) {
      stream_.attach(net::tcp_connect(server, std::chrono::seconds(5)));
    } else {
      stream_.attach(ipc::shm_connect(shm_path, std::chrono::seconds(5)));
    }
    auto logon = proto::make_message<proto::Logon>(next_seq_++);
    logon.client_id = client_id;
    logon.heartbeat_ms = 60'000;
    if (key.size() > sizeof logon.credential) client_fail("API key longer than the Logon credential field");
    std::memcpy(logon.credential, key.data(), key.size());
    append(&logon, sizeof logon);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!output_empty()) {
      flush();
      if (std::chrono::steady_clock::now() > deadline) client_fail("logon: could not send the Logon within 5 s");
    }
    bool acked = false;
    while (!acked) {
      acked = read_logon_answer();
      if (!acked && std::chrono::steady_clock::now() > deadline)
        client_fail("logon: no LogonAck within 5 s from " + server.to_string());
      if (!acked) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // Queue one message (not yet written: flush()). The caller keeps
  // output_room() >= sizeof(proto::NewOrder). Returns the message's seq.
  // A buy limit order (rests: one answer), or with `ioc` an immediate-or-cancel
  // one (nothing to trade with at the bench's prices: Accepted, then Cancelled).
  std::uint32_t queue_new(std::uint64_t client_order_id, std::int64_t price, bool ioc = false) noexcept {
    auto m = proto::make_message<proto::NewOrder>(next_seq_++);
    m.client_order_id = client_order_id;
    m.instrument = kBenchInstrument;
    m.side = 1;                          // buy
    m.order_type = ioc ? 2 : 1;          // IOC, or limit (rests)
    m.price = price;
    m.qty = 1;
    append(&m, sizeof m);
    return m.header.seq;
  }
  std::uint32_t queue_cancel(std::uint64_t client_order_id) noexcept {
    auto m = proto::make_message<proto::CancelOrder>(next_seq_++);
    m.client_order_id = client_order_id;
    m.instrument = kBenchInstrument;
    append(&m, sizeof m);
    return m.header.seq;
  }

  std::size_t output_room() const noexcept { return kBufferBytes - (out_end_ - out_begin_); }
  bool output_empty() const noexcept { return out_begin_ == out_end_; }

  // Writes what the socket takes now (possibly nothing).
  void flush() {
    if (output_empty()) return;
    const net::IoResult r = stream_.write_some({out_.data() + out_begin_, out_end_ - out_begin_});
    if (r.status == net::IoStatus::kWouldBlock) return;
    if (r.status != net::IoStatus::kOk) io_fail("write", r);
    out_begin_ += r.bytes;
    if (out_begin_ == out_end_) out_begin_ = out_end_ = 0;
  }

  // One read of what has arrived; every complete ExecutionReport goes to
  // on_report(const proto::ExecutionReport&). Returns the reports seen.
  template <typename OnReport>
  NT_ALWAYS_INLINE std::size_t poll(OnReport&& on_report) {
    const net::IoResult r = stream_.read_some({in_.data() + in_end_, kBufferBytes - in_end_});
    if (r.status == net::IoStatus::kWouldBlock) return 0;
    if (r.status != net::IoStatus::kOk) io_fail("read", r);
    last_read_tsc_ = core::rdtsc();
    in_end_ += r.bytes;
    std::size_t reports = 0;
    for (;;) {
      const proto::Frame f =
          proto::next_frame({in_.data() + in_begin_, in_end_ - in_begin_}, proto::Direction::kFromExchange);
      if (f.status == proto::FrameStatus::kNeedMore) break;
      const std::uint8_t* bytes = in_.data() + in_begin_;
      if (f.status != proto::FrameStatus::kMessage) frame_fail(f);
      if (f.header.seq != next_peer_seq_) seq_fail(f.header);
      ++next_peer_seq_;
      in_begin_ += f.length;
      if (f.header.type == proto::MsgType::kExecutionReport) {
        on_report(proto::read_message<proto::ExecutionReport>(bytes));
        ++reports;
      } else if (f.header.type != proto::MsgType::kServerHeartbeat) {
        unexpected(f.header, bytes);
      }
    }
    // Keep room for a whole message at the end of the buffer.
    if (in_begin_ == in_end_) {
      in_begin_ = in_end_ = 0;
    } else if (kBufferBytes - in_end_ < proto::kMaxMessageLength) {
      std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
      in_end_ -= in_begin_;
      in_begin_ = 0;
    }
    return reports;
  }

  // TSC right after the last read that returned bytes.
  std::uint64_t last_read_tsc() const noexcept { return last_read_tsc_; }
  // The seq the next queued message gets.
  std::uint32_t next_seq() const noexcept { return next_seq_; }

 private:
  void append(const void* m, std::size_t n) noexcept {
    if (kBufferBytes - out_end_ < n) {  // move the unwritten bytes to the front
      std::memmove(out_.data(), out_.data() + out_begin_, out_end_ - out_begin_);
      out_end_ -= out_begin_;
      out_begin_ = 0;
    }
    std::memcpy(out_.data() + out_end_, m, n);
    out_end_ += n;
  }

  // True once the LogonAck is in; throws on a LogonReject or anything else.
  bool read_logon_answer() {
    const net::IoResult r = stream_.read_some({in_.data() + in_end_, kBufferBytes - in_end_});
    if (r.status == net::IoStatus::kWouldBlock) return false;
    if (r.status != net::IoStatus::kOk) io_fail("logon read", r);
    in_end_ += r.bytes;
    const proto::Frame f = proto::next_frame({in_.data(), in_end_}, proto::Direction::kFromExchange);
    if (f.status == proto::FrameStatus::kNeedMore) return false;
    if (f.status != proto::FrameStatus::kMessage) frame_fail(f);
    if (f.header.type != proto::MsgType::kLogonAck) unexpected(f.header, in_.data());
    if (f.header.seq != next_peer_seq_) seq_fail(f.header);
    ++next_peer_seq_;
    std::memmove(in_.data(), in_.data() + f.length, in_end_ - f.length);
    in_end_ -= f.length;
    return true;
  }

  [[noreturn]] NT_COLD static void io_fail(const char* what, const net::IoResult& r) {
    client_fail(std::string("order entry ") + what + ": " + std::string(net::to_string(r.status)) +
                (r.error != 0 ? std::string(" (") + std::strerror(r.error) + ")" : std::string()) +
                " - did the exchange close the session? (see its log)");
  }
  [[noreturn]] NT_COLD static void frame_fail(const proto::Frame& f) {
    client_fail("order entry: malformed message from the peer (type " +
                std::to_string(static_cast<int>(f.header.type)) + ", length " + std::to_string(f.header.length) + ", " +
                std::string(proto::to_string(f.reason)) + ")");
  }
  [[noreturn]] NT_COLD void seq_fail(const proto::Header& h) const {
    client_fail("order entry: peer seq " + std::to_string(h.seq) + ", expected " + std::to_string(next_peer_seq_));
  }
  // A message the bench's order stream never causes: name it and its reason.
  [[noreturn]] NT_COLD static void unexpected(const proto::Header& h, const std::uint8_t* bytes) {
    std::string why;
    switch (h.type) {
      case proto::MsgType::kSessionReject: {
        const auto m = proto::read_message<proto::SessionReject>(bytes);
        why = std::string(proto::to_string(static_cast<proto::SessionRejectReason>(m.reason))) + " for seq " +
              std::to_string(m.ref_seq);
        break;
      }
      case proto::MsgType::kLogonReject:
        why = proto::to_string(
            static_cast<proto::LogonRejectReason>(proto::read_message<proto::LogonReject>(bytes).reason));
        break;
      case proto::MsgType::kServerLogout:
        why =
            proto::to_string(static_cast<proto::LogoutReason>(proto::read_message<proto::ServerLogout>(bytes).reason));
        break;
      case proto::MsgType::kCancelReject: {
        const auto m = proto::read_message<proto::OrderReject>(bytes);
        why = "engine reason " + std::to_string(m.reason) + " for client order id " + std::to_string(m.client_order_id);
        break;
      }
      default: why = "not expected here";
    }
    client_fail("order entry: unexpected " + std::string(proto::to_string(h.type)) + ": " + why);
  }

  ipc::StreamLink stream_;  // TCP or a shared-memory session
  std::uint32_t next_seq_ = 1;
  std::uint32_t next_peer_seq_ = 1;
  std::uint64_t last_read_tsc_ = 0;
  std::size_t out_begin_ = 0;
  std::size_t out_end_ = 0;
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
  alignas(64) std::array<std::uint8_t, kBufferBytes> out_{};
  alignas(64) std::array<std::uint8_t, kBufferBytes> in_{};
};

}  // namespace nanotick::bench
