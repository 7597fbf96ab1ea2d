#include "net/udp_multicast.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "net/socket_error.hpp"
#include "net/socket_options.hpp"

namespace nanotick::net {

namespace {

const sockaddr* as_sockaddr(const sockaddr_in& sa) noexcept { return reinterpret_cast<const sockaddr*>(&sa); }

std::string interface_hint(int err, Ipv4Address interface) {
  if (err == EADDRNOTAVAIL || err == ENODEV)
    return interface.to_string() + " is not an address of this host: use 127.0.0.1 or a local interface's address";
  return {};
}

void require_unicast_interface(Ipv4Address interface, std::string_view where) {
  if (interface.is_multicast())
    throw std::invalid_argument(std::string(where) + ": interface " + interface.to_string() +
                                " is a multicast address; it must be an address of a local interface (e.g. 127.0.0.1)");
}

Fd udp_socket(std::string_view where) {
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw_socket_error(std::string(where) + ": cannot create a socket", errno);
  return fd;
}

}  // namespace

std::string_view to_string(RecvStatus s) noexcept {
  switch (s) {
    case RecvStatus::kNothing: return "nothing";
    case RecvStatus::kDatagram: return "datagram";
    case RecvStatus::kTruncated: return "truncated";
    case RecvStatus::kError: return "error";
  }
  return "unknown";
}

UdpMulticastSender::UdpMulticastSender(const MulticastSenderConfig& config) : group_(config.group) {
  const std::string where = "multicast sender to " + config.group.to_string() + " via " + config.interface.to_string();
  require_multicast(config.group, where + ": group");
  if (config.group.port == 0) throw std::invalid_argument(where + ": the group's port must be 1..65535, got 0");
  if (config.ttl < 0 || config.ttl > 255)
    throw std::invalid_argument(where + ": ttl must be 0..255 (0 = this host only), got " + std::to_string(config.ttl));
  require_unicast_interface(config.interface, where);

  fd_ = udp_socket(where);
  // Bound to the interface's address so the source address is fixed and
  // receivers can tell publishers apart.
  const sockaddr_in source = SocketAddress{config.interface, 0}.to_sockaddr();
  if (::bind(fd_.get(), as_sockaddr(source), sizeof source) != 0) {
    const int err = errno;
    throw_socket_error(where + ": cannot bind to the interface", err, interface_hint(err, config.interface));
  }
  const in_addr interface = config.interface.to_in_addr();
  if (::setsockopt(fd_.get(), IPPROTO_IP, IP_MULTICAST_IF, &interface, sizeof interface) != 0) {
    const int err = errno;
    throw_socket_error(where + ": cannot set IP_MULTICAST_IF", err, interface_hint(err, config.interface));
  }
  set_int_option(fd_.get(), IPPROTO_IP, IP_MULTICAST_TTL, config.ttl, "IP_MULTICAST_TTL", where);
  set_int_option(fd_.get(), IPPROTO_IP, IP_MULTICAST_LOOP, 1, "IP_MULTICAST_LOOP", where);
  // Connected: send() skips the per-datagram route lookup of sendto().
  // Multicast destinations never answer with ICMP errors, so a connected
  // socket does not pick up ECONNREFUSED from them.
  const sockaddr_in destination = config.group.to_sockaddr();
  if (::connect(fd_.get(), as_sockaddr(destination), sizeof destination) != 0)
    throw_socket_error(where + ": cannot set the destination", errno,
                       "is there a route for multicast on that interface?");
  local_ = bound_address(fd_.get(), where);
}

bool UdpMulticastSender::send(std::span<const std::uint8_t> datagram) noexcept {
  for (;;) {
    if (::send(fd_.get(), datagram.data(), datagram.size(), MSG_NOSIGNAL) >= 0) {
      ++sent_;
      return true;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
      ++dropped_;
    } else {
      ++send_errors_;
      last_error_ = err;
    }
    return false;
  }
}

UdpMulticastReceiver::UdpMulticastReceiver(const MulticastReceiverConfig& config)
    : requested_rcvbuf_(config.receive_buffer_bytes) {
  const std::string where = "multicast receiver of " + config.group.to_string() + " on " + config.interface.to_string();
  require_multicast(config.group, where + ": group");
  require_unicast_interface(config.interface, where);

  fd_ = udp_socket(where);
  // Every receiver of the group binds the same port; SO_REUSEADDR lets them
  // all bind it and the kernel gives each a copy of every datagram.
  set_int_option(fd_.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR", where);
  granted_rcvbuf_ = request_buffer_bytes(fd_.get(), SocketBuffer::kReceive, config.receive_buffer_bytes, where);
  // Bound to the group address, not INADDR_ANY: only this group's datagrams
  // arrive, not those of other groups that share the port.
  const sockaddr_in bind_to = config.group.to_sockaddr();
  if (::bind(fd_.get(), as_sockaddr(bind_to), sizeof bind_to) != 0) throw_socket_error(where + ": cannot bind", errno);
  ip_mreq membership{};
  membership.imr_multiaddr = config.group.ip.to_in_addr();
  membership.imr_interface = config.interface.to_in_addr();
  if (::setsockopt(fd_.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &membership, sizeof membership) != 0) {
    const int err = errno;
    throw_socket_error(where + ": cannot join the group", err, interface_hint(err, config.interface));
  }
  // Only the groups this socket joined, even if another socket of the host
  // joined more on the same port (Linux's default delivers them all).
  set_int_option(fd_.get(), IPPROTO_IP, IP_MULTICAST_ALL, 0, "IP_MULTICAST_ALL", where);
  local_ = bound_address(fd_.get(), where);
}

RecvResult UdpMulticastReceiver::recv(std::span<std::uint8_t> buffer) noexcept {
  for (;;) {
    // With MSG_TRUNC recv returns the datagram's real length even when it
    // exceeds the buffer, which is how truncation is detected.
    const ssize_t n = ::recv(fd_.get(), buffer.data(), buffer.size(), MSG_TRUNC);
    if (n >= 0) {
      const auto real = static_cast<std::size_t>(n);
      ++received_;
      if (real > buffer.size()) {
        ++truncated_;
        return {buffer.size(), real, RecvStatus::kTruncated, 0};
      }
      return {real, real, RecvStatus::kDatagram, 0};
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return {};
    ++recv_errors_;
    return {0, 0, RecvStatus::kError, err};
  }
}

}  // namespace nanotick::net
