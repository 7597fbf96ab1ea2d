// The FIX port bound to one address. QuickFIX 1.15 has no setting for it:
// its acceptor listens on INADDR_ANY:port (socket_createAcceptor takes only
// the port), so any host that reaches the machine reaches the gateway. Right
// after QuickFIX starts listening, narrow_listener() puts a socket bound to
// the configured address under QuickFIX's own file descriptor (dup2): QuickFIX
// polls and accepts on the same descriptor number as before, and the kernel
// now refuses connections to any other address. docs/FIX.md "Listening".
//
// Start-up code, on the thread that polls QuickFIX, before it polls again.
#pragma once

#include "net/socket_address.hpp"

namespace nanotick::fix {

// Finds this process's one socket listening on 0.0.0.0:address.port and
// rebinds it to `address` (same descriptor, same flags). Throws
// std::runtime_error naming the address when there is not exactly one such
// socket or the new one cannot bind or listen (the gateway then exits 1).
void narrow_listener(const net::SocketAddress& address);

// The address a listening descriptor is bound to (for the log and the tests).
net::SocketAddress bound_address(int fd);

}  // namespace nanotick::fix
