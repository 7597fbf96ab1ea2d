#include "net/tcp.hpp"

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "net/socket_error.hpp"
#include "net/socket_options.hpp"

namespace nanotick::net {

namespace {

const sockaddr* as_sockaddr(const sockaddr_in& sa) noexcept { return reinterpret_cast<const sockaddr*>(&sa); }
sockaddr* as_sockaddr(sockaddr_in& sa) noexcept { return reinterpret_cast<sockaddr*>(&sa); }

// What to do about the usual connect failures; empty when we have nothing to add.
std::string connect_hint(int err, const SocketAddress& peer, std::chrono::milliseconds timeout) {
  switch (err) {
    case ECONNREFUSED:
      return "nothing listens on " + peer.to_string() + ": is the server running, and is the address right?";
    case ETIMEDOUT:
      return "no answer within " + std::to_string(timeout.count()) + " ms: is the server up and the address reachable?";
    case ENETUNREACH:
    case EHOSTUNREACH: return "no route to the host: check the address";
    default: return {};
  }
}

std::string bind_hint(int err, const SocketAddress& address) {
  switch (err) {
    case EADDRINUSE:
      return "another socket is already listening on port " + std::to_string(address.port) +
             ": stop that process (ss -ltnp 'sport = :" + std::to_string(address.port) +
             "' shows which) or choose another port";
    case EADDRNOTAVAIL:
      return address.ip.to_string() +
             " is not an address of this host: use 127.0.0.1, 0.0.0.0 or a local interface's address";
    case EACCES: return "ports below 1024 need privileges: choose a port >= 1024";
    default: return {};
  }
}

}  // namespace

std::string_view to_string(IoStatus s) noexcept {
  switch (s) {
    case IoStatus::kOk: return "ok";
    case IoStatus::kWouldBlock: return "would block";
    case IoStatus::kClosed: return "closed";
    case IoStatus::kError: return "error";
  }
  return "unknown";
}

IoResult TcpStream::read_some(std::span<std::uint8_t> buffer) noexcept {
  if (buffer.empty()) return {};
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buffer.data(), buffer.size(), 0);
    if (n > 0) return {static_cast<std::size_t>(n), IoStatus::kOk, 0};
    if (n == 0) return {0, IoStatus::kClosed, 0};
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return {0, IoStatus::kWouldBlock, 0};
    if (err == ECONNRESET) return {0, IoStatus::kClosed, err};
    return {0, IoStatus::kError, err};
  }
}

IoResult TcpStream::write_some(std::span<const std::uint8_t> data) noexcept {
  if (data.empty()) return {};
  for (;;) {
    const ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      // send() on a stream socket with a non-empty buffer either writes
      // something or fails with EAGAIN; 0 is treated as "full" for safety.
      if (n == 0) return {0, IoStatus::kWouldBlock, 0};
      return {static_cast<std::size_t>(n), IoStatus::kOk, 0};
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return {0, IoStatus::kWouldBlock, 0};
    if (err == EPIPE || err == ECONNRESET) return {0, IoStatus::kClosed, err};
    return {0, IoStatus::kError, err};
  }
}

long TcpStream::queued_output_bytes() const noexcept {
  int n = 0;
  return ::ioctl(fd_.get(), SIOCOUTQ, &n) == 0 ? n : -1;
}

int TcpStream::send_buffer_limit() const noexcept {
  int n = 0;
  socklen_t len = sizeof n;
  return ::getsockopt(fd_.get(), SOL_SOCKET, SO_SNDBUF, &n, &len) == 0 ? n : -1;
}

void TcpStream::discard_input() noexcept {
  std::uint8_t scratch[16384];
  // Bounded: a peer that keeps sending cannot hold the caller here.
  for (int i = 0; i < 256; ++i) {
    const ssize_t n = ::recv(fd_.get(), scratch, sizeof scratch, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    return;
  }
}

int TcpStream::set_send_buffer_bytes(int bytes) {
  return request_buffer_bytes(fd_.get(), SocketBuffer::kSend, bytes, "tcp connection to " + peer_.to_string());
}

int TcpStream::set_receive_buffer_bytes(int bytes) {
  return request_buffer_bytes(fd_.get(), SocketBuffer::kReceive, bytes, "tcp connection to " + peer_.to_string());
}

TcpStream tcp_connect(const SocketAddress& peer, std::chrono::milliseconds timeout) {
  const std::string where = "cannot connect to " + peer.to_string();
  if (peer.port == 0) throw std::invalid_argument(where + ": port 0 is not a connectable port (expected 1..65535)");
  if (timeout.count() <= 0)
    throw std::invalid_argument(where + ": the connect timeout must be > 0 ms, got " + std::to_string(timeout.count()));

  // Non-blocking from the start: connect() returns EINPROGRESS and poll()
  // gives the timeout that a blocking connect() does not have.
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw_socket_error(where + ": cannot create a socket", errno);
  const sockaddr_in sa = peer.to_sockaddr();
  if (::connect(fd.get(), as_sockaddr(sa), sizeof sa) != 0) {
    const int err = errno;
    // EINTR leaves the connection attempt running, as EINPROGRESS does.
    if (err != EINPROGRESS && err != EINTR) throw_socket_error(where, err, connect_hint(err, peer, timeout));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw_socket_error(where, ETIMEDOUT, connect_hint(ETIMEDOUT, peer, timeout));
      pollfd p{fd.get(), POLLOUT, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc > 0) break;
      if (rc < 0 && errno != EINTR) throw_socket_error(where + ": poll failed", errno);
    }
    const int result = get_int_option(fd.get(), SOL_SOCKET, SO_ERROR, "SO_ERROR", where);
    if (result != 0) throw_socket_error(where, result, connect_hint(result, peer, timeout));
  }
  set_int_option(fd.get(), IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY", where);
  const SocketAddress local = bound_address(fd.get(), where);
  return TcpStream(std::move(fd), local, peer);
}

TcpListener::TcpListener(const SocketAddress& address, int backlog) {
  const std::string where = "cannot listen on " + address.to_string();
  if (backlog <= 0) throw std::invalid_argument(where + ": backlog must be > 0, got " + std::to_string(backlog));
  fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd_) throw_socket_error(where + ": cannot create a socket", errno);
  set_int_option(fd_.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR", where);
  const sockaddr_in sa = address.to_sockaddr();
  if (::bind(fd_.get(), as_sockaddr(sa), sizeof sa) != 0) {
    const int err = errno;
    throw_socket_error(where, err, bind_hint(err, address));
  }
  // listen() reports EADDRINUSE too: two SO_REUSEADDR sockets may both bind a
  // port, only one may listen on it.
  if (::listen(fd_.get(), backlog) != 0) {
    const int err = errno;
    throw_socket_error(where, err, bind_hint(err, address));
  }
  local_ = bound_address(fd_.get(), where);
}

std::optional<TcpStream> TcpListener::accept() noexcept {
  for (;;) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    Fd fd(::accept4(fd_.get(), as_sockaddr(peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return std::nullopt;
      ++accept_errors_;
      last_accept_error_ = err;
      return std::nullopt;
    }
    const int one = 1;
    sockaddr_in local{};
    socklen_t local_len = sizeof local;
    if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        ::getsockname(fd.get(), as_sockaddr(local), &local_len) != 0) {
      ++accept_errors_;
      last_accept_error_ = errno;
      return std::nullopt;  // `fd` closes the half-set-up connection
    }
    return TcpStream(std::move(fd), SocketAddress::from_sockaddr(local), SocketAddress::from_sockaddr(peer));
  }
}

}  // namespace nanotick::net
