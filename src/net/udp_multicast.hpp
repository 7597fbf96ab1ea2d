// UDP multicast for market data: UdpMulticastSender publishes datagrams to one
// group:port through a chosen interface; UdpMulticastReceiver joins a group on
// an interface and reads datagrams without blocking. Construction is start-up
// code (validates the config, throws SocketError / std::invalid_argument with
// the address and a hint); send/recv are hot-path calls: noexcept, no
// allocation, outcomes are results and counters. Not thread-safe: each object
// is owned by one thread (the publisher's or the consumer's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "net/fd.hpp"
#include "net/socket_address.hpp"

namespace nanotick::net {

struct MulticastSenderConfig {
  Ipv4Address interface;  // outgoing interface (IP_MULTICAST_IF) and source address
  SocketAddress group;    // destination, in 224.0.0.0/4, port 1..65535
  int ttl = 0;            // 0..255; 0 never leaves the host
};

class UdpMulticastSender {
 public:
  explicit UdpMulticastSender(const MulticastSenderConfig& config);

  // Sends one datagram. false when the kernel had no room (EAGAIN, ENOBUFS:
  // counted in dropped()) or on another error (counted in send_errors(), errno
  // in last_error()); UDP gives no partial sends. Loopback delivery is on
  // (IP_MULTICAST_LOOP), so receivers on this host get it.
  [[nodiscard]] bool send(std::span<const std::uint8_t> datagram) noexcept;

  std::uint64_t sent() const noexcept { return sent_; }
  std::uint64_t dropped() const noexcept { return dropped_; }
  std::uint64_t send_errors() const noexcept { return send_errors_; }
  int last_error() const noexcept { return last_error_; }
  const SocketAddress& local_address() const noexcept { return local_; }
  const SocketAddress& group() const noexcept { return group_; }
  int fd() const noexcept { return fd_.get(); }

 private:
  Fd fd_;
  SocketAddress local_;
  SocketAddress group_;
  std::uint64_t sent_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t send_errors_ = 0;
  int last_error_ = 0;
};

struct MulticastReceiverConfig {
  Ipv4Address interface;                    // joins the group on this interface
  SocketAddress group;                      // in 224.0.0.0/4; port 0 lets the kernel pick (see local_address())
  int receive_buffer_bytes = 4 * 1024 * 1024;  // requested SO_RCVBUF: absorbs bursts while the reader is busy
};

enum class RecvStatus : std::uint8_t {
  kNothing,    // no datagram waiting
  kDatagram,   // one whole datagram of `bytes` bytes
  kTruncated,  // a datagram of `datagram_bytes` did not fit: its first `bytes` are in the buffer, the rest is lost
  kError,      // `error` holds the errno
};
std::string_view to_string(RecvStatus s) noexcept;

struct RecvResult {
  std::size_t bytes = 0;           // bytes placed in the buffer
  std::size_t datagram_bytes = 0;  // the datagram's real size
  RecvStatus status = RecvStatus::kNothing;
  int error = 0;
};

class UdpMulticastReceiver {
 public:
  // Binds group:port with SO_REUSEADDR (several receivers, in one process or
  // many, each get every datagram) and joins the group on the interface.
  explicit UdpMulticastReceiver(const MulticastReceiverConfig& config);

  // Takes the next datagram, if any. A datagram larger than the buffer is
  // consumed and reported kTruncated (MSG_TRUNC), never mistaken for a whole one.
  [[nodiscard]] RecvResult recv(std::span<std::uint8_t> buffer) noexcept;

  // The receive buffer asked for and what the kernel granted (Linux reports
  // twice the usable size; without CAP_NET_ADMIN it is capped by
  // net.core.rmem_max). The caller logs both so a capped buffer is visible.
  int receive_buffer_requested() const noexcept { return requested_rcvbuf_; }
  int receive_buffer_granted() const noexcept { return granted_rcvbuf_; }

  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t truncated() const noexcept { return truncated_; }
  std::uint64_t recv_errors() const noexcept { return recv_errors_; }
  const SocketAddress& local_address() const noexcept { return local_; }
  int fd() const noexcept { return fd_.get(); }

 private:
  Fd fd_;
  SocketAddress local_;
  int requested_rcvbuf_ = 0;
  int granted_rcvbuf_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t truncated_ = 0;
  std::uint64_t recv_errors_ = 0;
};

}  // namespace nanotick::net
