#include "net/socket_address.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <stdexcept>

namespace nanotick::net {

namespace {

std::string quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

// Parses the address part; `whole` is the full text for the message.
Ipv4Address parse_ip_part(std::string_view ip, std::string_view whole) {
  if (ip.empty())
    throw std::invalid_argument(quoted(whole) + ": the IPv4 address is missing (expected a.b.c.d, e.g. 127.0.0.1)");
  // inet_pton needs a NUL-terminated string; a dotted IPv4 address has at most
  // 15 characters, so anything longer is rejected before copying.
  char buf[16] = {};
  in_addr a{};
  bool ok = ip.size() < sizeof buf && ip.find('\0') == std::string_view::npos;
  if (ok) {
    ip.copy(buf, ip.size());
    ok = inet_pton(AF_INET, buf, &a) == 1;
  }
  if (!ok)
    throw std::invalid_argument(
        quoted(whole) + ": " + quoted(ip) +
        " is not a dotted IPv4 address (expected a.b.c.d, e.g. 127.0.0.1; host names are not resolved)");
  return Ipv4Address::from_in_addr(a);
}

}  // namespace

in_addr Ipv4Address::to_in_addr() const noexcept {
  in_addr a{};
  a.s_addr = htonl(value);
  return a;
}

Ipv4Address Ipv4Address::from_in_addr(in_addr a) noexcept { return Ipv4Address{ntohl(a.s_addr)}; }

std::string Ipv4Address::to_string() const {
  return std::to_string(value >> 24) + "." + std::to_string((value >> 16) & 0xFF) + "." +
         std::to_string((value >> 8) & 0xFF) + "." + std::to_string(value & 0xFF);
}

sockaddr_in SocketAddress::to_sockaddr() const noexcept {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr = ip.to_in_addr();
  return sa;
}

SocketAddress SocketAddress::from_sockaddr(const sockaddr_in& sa) noexcept {
  return SocketAddress{Ipv4Address::from_in_addr(sa.sin_addr), ntohs(sa.sin_port)};
}

std::string SocketAddress::to_string() const { return ip.to_string() + ":" + std::to_string(port); }

Ipv4Address parse_ipv4(std::string_view text) { return parse_ip_part(text, text); }

SocketAddress parse_socket_address(std::string_view text, PortZero zero) {
  const std::string_view range = zero == PortZero::kAllowed ? "0..65535" : "1..65535";
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument(quoted(text) + ": expected ipv4:port (e.g. 127.0.0.1:9100), found no ':'");
  const std::string_view port_text = text.substr(colon + 1);
  if (port_text.empty())
    throw std::invalid_argument(quoted(text) + ": the port after ':' is missing (expected " + std::string(range) + ")");
  // from_chars accepts neither signs nor spaces, so "+80", "-1" and " 80" fail
  // here, and a number followed by anything else is caught by the end check.
  unsigned long port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec == std::errc::result_out_of_range ||
      (ec == std::errc{} && end == port_text.data() + port_text.size() && port > 65535))
    throw std::invalid_argument(quoted(text) + ": port " + std::string(port_text) + " is out of range (expected " +
                                std::string(range) + ")");
  if (ec != std::errc{} || end != port_text.data() + port_text.size())
    throw std::invalid_argument(quoted(text) + ": port " + quoted(port_text) + " is not a number (expected " +
                                std::string(range) + ")");
  if (port == 0 && zero == PortZero::kRejected)
    throw std::invalid_argument(quoted(text) + ": port 0 is not allowed here (expected 1..65535)");
  const Ipv4Address ip = parse_ip_part(text.substr(0, colon), text);
  return SocketAddress{ip, static_cast<std::uint16_t>(port)};
}

void require_multicast(const SocketAddress& group, std::string_view what) {
  if (!group.ip.is_multicast())
    throw std::invalid_argument(std::string(what) + " " + group.to_string() +
                                " is not a multicast group (expected 224.0.0.0 to 239.255.255.255; "
                                "239.255.0.0/16 is for local use)");
}

SocketAddress parse_multicast_group(std::string_view text, PortZero zero) {
  const SocketAddress group = parse_socket_address(text, zero);
  require_multicast(group, quoted(text) + ": address");
  return group;
}

}  // namespace nanotick::net
