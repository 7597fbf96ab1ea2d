// IPv4 addresses and "ipv4:port" endpoints parsed from config text, checked
// (dotted IPv4 via inet_pton, port range, multicast range) and converted to and
// from sockaddr_in. Parsing is start-up code: it throws std::invalid_argument
// naming the text and what is wrong. Thread-safe: plain values and pure
// functions.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace nanotick::net {

// An IPv4 address in host byte order (so 127.0.0.1 is 0x7f000001 and ranges
// compare numerically).
struct Ipv4Address {
  std::uint32_t value = 0;

  in_addr to_in_addr() const noexcept;
  static Ipv4Address from_in_addr(in_addr a) noexcept;
  // 224.0.0.0/4: 224.0.0.0 to 239.255.255.255.
  bool is_multicast() const noexcept { return (value >> 28) == 0xE; }
  std::string to_string() const;

  friend bool operator==(Ipv4Address, Ipv4Address) = default;
};

// An IPv4 address and a port (host byte order).
struct SocketAddress {
  Ipv4Address ip;
  std::uint16_t port = 0;

  sockaddr_in to_sockaddr() const noexcept;
  static SocketAddress from_sockaddr(const sockaddr_in& sa) noexcept;
  std::string to_string() const;  // "127.0.0.1:9100"

  friend bool operator==(const SocketAddress&, const SocketAddress&) = default;
};

// Whether port 0 ("let the kernel pick an ephemeral port") is acceptable:
// fine for a listener or receiver that reads its bound port back, never for a
// peer to connect or send to.
enum class PortZero : std::uint8_t { kRejected, kAllowed };

// Parses a bare dotted IPv4 address ("127.0.0.1"), e.g. a network interface.
// Host names are not resolved: the message says to use a dotted address.
Ipv4Address parse_ipv4(std::string_view text);

// Parses "a.b.c.d:port" with port in 1..65535 (0 too when `zero` allows it).
SocketAddress parse_socket_address(std::string_view text, PortZero zero = PortZero::kRejected);

// Throws std::invalid_argument unless `group` is in 224.0.0.0/4; `what` names
// the address's role in the message ("market data group").
void require_multicast(const SocketAddress& group, std::string_view what);

// parse_socket_address + require_multicast: a multicast "group:port".
SocketAddress parse_multicast_group(std::string_view text, PortZero zero = PortZero::kRejected);

}  // namespace nanotick::net
