// The venue's order-entry address as a client reaches it, from the venue's
// description (venue/venue_config.hpp, server.order_entry): the one lookup
// every client (the trader, the FIX gateway) makes when it is not given an
// address of its own. Start-up code only; thread-safe (no shared state).
#pragma once

#include "net/socket_address.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::client {

// server.order_entry, with a wildcard listen address (0.0.0.0) replaced by
// loopback: an exchange listening on every interface is reached on this host's
// 127.0.0.1. Throws std::invalid_argument saying what is wrong when the
// address cannot be connected to: it does not parse, or its port is 0 (the
// exchange listens on an ephemeral port only it knows). The caller names the
// config and the option that gives the address instead.
net::SocketAddress venue_order_entry_address(const venue::ServerConfig& server);

}  // namespace nanotick::client
