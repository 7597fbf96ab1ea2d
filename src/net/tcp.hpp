// TCP for order entry: TcpListener (non-blocking accept), tcp_connect
// (blocking connect with a timeout) and TcpStream (non-blocking, TCP_NODELAY,
// partial reads and writes). Setting up (listen, connect, buffer sizes) is
// start-up code and throws SocketError with the address, the errno text and a
// hint; accept/read/write are hot-path calls: noexcept, no allocation, every
// outcome an explicit result. Not thread-safe: each object is owned by one
// thread (the gateway's, or the client session's).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "net/fd.hpp"
#include "net/socket_address.hpp"

namespace nanotick::net {

enum class IoStatus : std::uint8_t {
  kOk,          // `bytes` > 0 were read or written
  kWouldBlock,  // nothing now (EAGAIN): wait for readiness and retry
  kClosed,      // read: the peer closed (EOF, error 0) or reset (ECONNRESET);
                // write: the peer is gone (EPIPE or ECONNRESET)
  kError,       // another failure; `error` holds the errno. Close the stream.
};
std::string_view to_string(IoStatus s) noexcept;

struct IoResult {
  std::size_t bytes = 0;
  IoStatus status = IoStatus::kOk;
  int error = 0;  // errno for kClosed (0 = orderly EOF) and kError
};

class TcpStream {
 public:
  TcpStream() noexcept = default;  // not connected: valid() is false

  bool valid() const noexcept { return fd_.valid(); }
  int fd() const noexcept { return fd_.get(); }  // for EpollPoller registration
  const SocketAddress& local_address() const noexcept { return local_; }
  const SocketAddress& peer_address() const noexcept { return peer_; }

  // Reads what is available, up to buffer.size() bytes. An empty buffer
  // returns {0, kOk} without a system call (0 bytes from recv means EOF).
  [[nodiscard]] IoResult read_some(std::span<std::uint8_t> buffer) noexcept;

  // Writes as much of `data` as the socket buffer takes: possibly fewer bytes
  // than offered (kOk with a partial count), 0 with kWouldBlock when full.
  // MSG_NOSIGNAL: a vanished peer gives kClosed, never SIGPIPE.
  [[nodiscard]] IoResult write_some(std::span<const std::uint8_t> data) noexcept;

  // Kernel buffer sizes (start-up; see request_buffer_bytes): return what was
  // granted.
  int set_send_buffer_bytes(int bytes);
  int set_receive_buffer_bytes(int bytes);

  // What the kernel holds for this connection's output: bytes written and
  // not yet acknowledged by the peer (SIOCOUTQ), and the send buffer limit
  // it accounts them against (SO_SNDBUF as it reports it, autotuning
  // included, in its own units: payload plus overhead). -1 on error.
  [[nodiscard]] long queued_output_bytes() const noexcept;
  [[nodiscard]] int send_buffer_limit() const noexcept;

  // Reads and throws away whatever input is readable now. Before close():
  // closing with unread input makes the kernel reset the connection, and a
  // reset throws away the output the peer has not read yet.
  void discard_input() noexcept;

  // Closes the connection now (the destructor does it too).
  void close() noexcept { fd_.reset(); }

 private:
  friend class TcpListener;
  friend TcpStream tcp_connect(const SocketAddress& peer, std::chrono::milliseconds timeout);
  TcpStream(Fd fd, SocketAddress local, SocketAddress peer) noexcept : fd_(std::move(fd)), local_(local), peer_(peer) {}

  Fd fd_;
  SocketAddress local_;
  SocketAddress peer_;
};

// Connects to `peer`, waiting at most `timeout`, and returns a non-blocking
// stream with TCP_NODELAY on. Throws SocketError naming the address and the
// errno text (refused, unreachable, timed out) and std::invalid_argument for
// port 0 or a timeout <= 0.
TcpStream tcp_connect(const SocketAddress& peer, std::chrono::milliseconds timeout);

class TcpListener {
 public:
  // Binds `address` with SO_REUSEADDR (a restarted server need not wait for
  // TIME_WAIT) and listens. Port 0 picks an ephemeral port: read it back with
  // local_address(). Throws SocketError; "address in use" names the address
  // and how to fix it.
  explicit TcpListener(const SocketAddress& address, int backlog = 128);

  int fd() const noexcept { return fd_.get(); }
  const SocketAddress& local_address() const noexcept { return local_; }

  // Accepts one pending connection (non-blocking, TCP_NODELAY on), or nullopt
  // when none is pending. A connection that fails while being accepted
  // (aborted by the peer, out of descriptors, ...) is also nullopt and is
  // counted in accept_errors() with its errno in last_accept_error().
  [[nodiscard]] std::optional<TcpStream> accept() noexcept;

  std::uint64_t accept_errors() const noexcept { return accept_errors_; }
  int last_accept_error() const noexcept { return last_accept_error_; }

 private:
  Fd fd_;
  SocketAddress local_;
  std::uint64_t accept_errors_ = 0;
  int last_accept_error_ = 0;
};

}  // namespace nanotick::net
