// Small setsockopt/getsockopt/getsockname helpers shared by the TCP and UDP
// sockets, so each option is set and checked the same way. Start-up code:
// failures throw SocketError naming the option and the socket's address
// (`context`). Thread-safe: stateless.
#pragma once

#include <string_view>

#include "net/socket_address.hpp"

namespace nanotick::net {

// setsockopt(fd, level, name, &value, sizeof(int)); throws SocketError
// "<context>: cannot set <option_name>: <errno text>".
void set_int_option(int fd, int level, int name, int value, std::string_view option_name, std::string_view context);

// getsockopt of an int option; throws like set_int_option.
int get_int_option(int fd, int level, int name, std::string_view option_name, std::string_view context);

// Which kernel socket buffer request_buffer_bytes sizes.
enum class SocketBuffer { kSend, kReceive };

// Asks for a `bytes` buffer and returns what the kernel granted (as reported
// by getsockopt). Tries SO_SNDBUFFORCE/SO_RCVBUFFORCE first, which succeed
// beyond net.core.{w,r}mem_max with CAP_NET_ADMIN, then the plain option,
// which the kernel silently caps at that limit. Note that Linux reports twice
// the usable size (it counts its bookkeeping overhead). Throws
// std::invalid_argument if bytes <= 0.
int request_buffer_bytes(int fd, SocketBuffer which, int bytes, std::string_view context);

// The address a socket is bound to (getsockname): how a port-0 bind learns
// its port.
SocketAddress bound_address(int fd, std::string_view context);

}  // namespace nanotick::net
