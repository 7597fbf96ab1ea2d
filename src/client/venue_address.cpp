#include "client/venue_address.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::client {

net::SocketAddress venue_order_entry_address(const venue::ServerConfig& server) {
  net::SocketAddress a;
  try {
    a = net::parse_socket_address(server.order_entry, net::PortZero::kAllowed);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("server.order_entry is not usable (" + std::string(e.what()) + ")");
  }
  if (a.port == 0) throw std::invalid_argument("server.order_entry has port 0 (an ephemeral port)");
  if (a.ip.value == 0) a.ip = net::parse_ipv4("127.0.0.1");
  return a;
}

}  // namespace nanotick::client
