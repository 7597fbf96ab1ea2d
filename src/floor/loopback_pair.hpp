// LoopbackPair: one connection with both ends in this process, over either
// order-entry transport -- TCP on 127.0.0.1 (a listener on an ephemeral port,
// a connect, the accept, then the listener is closed) or a shared-memory
// session (an ipc::ShmListener at a temporary path, an ipc::shm_connect, the
// accept, then the listener and its path are removed). Both floors need
// exactly this: a sender whose write does the work of a real session's
// transport (the other end is a real endpoint, read by another thread),
// without a second process. Both ends are made by the same code as the
// trader's and the exchange's (src/net, src/ipc).
// Start-up code: throws net::SocketError naming the call that failed.
// Thread-safety: a plain value; each end is then owned by one thread.
#pragma once

#include <unistd.h>

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "ipc/shm_listener.hpp"
#include "ipc/stream_link.hpp"
#include "net/socket_address.hpp"
#include "net/socket_error.hpp"
#include "net/tcp.hpp"

namespace nanotick::floors {  // "floors": a namespace "floor" would hide ::floor() inside nanotick

struct LoopbackPair {
  ipc::StreamLink client;  // the connecting end (the trader's side)
  ipc::StreamLink server;  // the accepted end (the exchange's side)
};

namespace detail {

inline LoopbackPair tcp_loopback_pair() {
  net::TcpListener listener(net::parse_socket_address("127.0.0.1:0", net::PortZero::kAllowed), 1);
  LoopbackPair pair;
  pair.client.attach(net::tcp_connect(listener.local_address(), std::chrono::seconds(5)));
  // On loopback the connection is queued by the time connect() returns; the
  // bounded retry only covers a scheduler that delays the handshake.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    if (std::optional<net::TcpStream> accepted = listener.accept()) {
      pair.server.attach(std::move(*accepted));
      return pair;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      net::throw_socket_error("loopback pair: no connection to accept on " + listener.local_address().to_string(),
                              listener.last_accept_error());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The exchange's ring size: the floor's shared-memory hop is the session's.
inline LoopbackPair shm_loopback_pair(std::uint64_t ring_bytes) {
  static int serial = 0;
  ipc::ShmListener listener(
      "/tmp/nanotick-floor-" + std::to_string(::getpid()) + "-" + std::to_string(++serial) + ".sock", ring_bytes, 1);
  LoopbackPair pair;
  std::exception_ptr connect_error;
  // shm_connect waits for the segment, which the accept below sends.
  std::thread connector([&] {
    try {
      pair.client.attach(ipc::shm_connect(listener.path(), std::chrono::seconds(5)));
    } catch (...) {
      connect_error = std::current_exception();
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::optional<ipc::ShmStream> accepted = listener.accept()) {
      pair.server.attach(std::move(*accepted));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  connector.join();
  if (connect_error) std::rethrow_exception(connect_error);
  if (!pair.server.valid())
    net::throw_socket_error("loopback pair: no shared-memory connection to accept on " + listener.path(),
                            listener.last_accept_error());
  return pair;
}

}  // namespace detail

inline LoopbackPair make_loopback_pair(ipc::Transport transport = ipc::Transport::kTcp,
                                       std::uint64_t shm_ring_bytes = 1u << 16) {
  return transport == ipc::Transport::kShm ? detail::shm_loopback_pair(shm_ring_bytes) : detail::tcp_loopback_pair();
}

}  // namespace nanotick::floors
