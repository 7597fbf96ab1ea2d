// One order-entry connection over either transport: a TCP stream or a
// shared-memory stream, behind the calls the session code on both ends uses
// (docs/EXCHANGE.md "Shared-memory sessions"). The sessions' protocol logic
// is written once against this; only the byte transport differs. A branch on
// the transport per call (the same way every time for a connection:
// predicted), not a virtual call, so the calls stay inlinable.
// Not thread-safe: one thread owns the link.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "ipc/shm_stream.hpp"
#include "net/tcp.hpp"

namespace nanotick::ipc {

enum class Transport : std::uint8_t { kTcp, kShm };

constexpr std::string_view to_string(Transport t) noexcept { return t == Transport::kShm ? "shm" : "tcp"; }

class StreamLink {
 public:
  StreamLink() noexcept = default;

  void attach(net::TcpStream s) noexcept {
    close();
    tcp_ = std::move(s);
    transport_ = Transport::kTcp;
  }
  void attach(ShmStream s) noexcept {
    close();
    shm_ = std::move(s);
    transport_ = Transport::kShm;
  }

  Transport transport() const noexcept { return transport_; }
  bool is_shm() const noexcept { return transport_ == Transport::kShm; }
  bool valid() const noexcept { return is_shm() ? shm_.valid() : tcp_.valid(); }
  // What to poll: the socket (TCP), or the control socket whose hang-up says
  // the peer's process ended (shared memory: its data is polled, not signalled).
  int fd() const noexcept { return is_shm() ? shm_.fd() : tcp_.fd(); }

  [[nodiscard]] net::IoResult read_some(std::span<std::uint8_t> b) noexcept {
    return is_shm() ? shm_.read_some(b) : tcp_.read_some(b);
  }
  [[nodiscard]] net::IoResult write_some(std::span<const std::uint8_t> d) noexcept {
    return is_shm() ? shm_.write_some(d) : tcp_.write_some(d);
  }
  [[nodiscard]] long queued_output_bytes() noexcept {
    return is_shm() ? shm_.queued_output_bytes() : tcp_.queued_output_bytes();
  }
  [[nodiscard]] int send_buffer_limit() const noexcept {
    return is_shm() ? shm_.send_buffer_limit() : tcp_.send_buffer_limit();
  }
  // Shared memory: input published and not read yet (one shared load); TCP: 0
  // (its input is announced by the poller).
  bool shm_input_pending() noexcept { return is_shm() && shm_.input_pending(); }
  void shutdown_write() noexcept {
    if (is_shm()) {
      shm_.shutdown_write();
    } else {
      ::shutdown(tcp_.fd(), SHUT_WR);
    }
  }
  void discard_input() noexcept {
    if (is_shm()) {
      shm_.discard_input();
    } else {
      tcp_.discard_input();
    }
  }
  // Shared memory: looks at the control socket (true: the peer's process is
  // gone). TCP: false (its end arrives as a read of 0 bytes).
  bool check_peer() noexcept { return is_shm() && shm_.check_peer(); }
  void close() noexcept {
    tcp_.close();
    shm_.close();
  }
  net::TcpStream& tcp() noexcept { return tcp_; }
  ShmStream& shm() noexcept { return shm_; }

 private:
  Transport transport_ = Transport::kTcp;
  net::TcpStream tcp_;
  ShmStream shm_;
};

}  // namespace nanotick::ipc
