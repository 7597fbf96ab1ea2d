// LoopbackPair: one connected TCP connection on 127.0.0.1 with both ends in
// this process -- a listener on an ephemeral port, a connect, the accept,
// then the listener is closed. Both floors need exactly this: a sender whose
// send() does the kernel work of a real session (the receiving socket is a
// real TCP endpoint, read by another thread), without a second process.
// Both ends come from src/net, so they are made like the trader's and the
// exchange's sockets: non-blocking, TCP_NODELAY, MSG_NOSIGNAL writes.
// Start-up code: throws net::SocketError naming the call that failed.
// Thread-safety: a plain value; each end is then owned by one thread.
#pragma once

#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "net/socket_address.hpp"
#include "net/socket_error.hpp"
#include "net/tcp.hpp"

namespace nanotick::floors {  // "floors": a namespace "floor" would hide ::floor() inside nanotick

struct LoopbackPair {
  net::TcpStream client;  // the connecting end
  net::TcpStream server;  // the accepted end
};

inline LoopbackPair make_loopback_pair() {
  net::TcpListener listener(net::parse_socket_address("127.0.0.1:0", net::PortZero::kAllowed), 1);
  LoopbackPair pair;
  pair.client = net::tcp_connect(listener.local_address(), std::chrono::seconds(5));
  // On loopback the connection is queued by the time connect() returns; the
  // bounded retry only covers a scheduler that delays the handshake.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    if (std::optional<net::TcpStream> accepted = listener.accept()) {
      pair.server = std::move(*accepted);
      return pair;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      net::throw_socket_error("loopback pair: no connection to accept on " + listener.local_address().to_string(),
                              listener.last_accept_error());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace nanotick::floors
