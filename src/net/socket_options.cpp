#include "net/socket_options.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "net/socket_error.hpp"

namespace nanotick::net {

void set_int_option(int fd, int level, int name, int value, std::string_view option_name, std::string_view context) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0)
    throw_socket_error(
        std::string(context) + ": cannot set " + std::string(option_name) + " to " + std::to_string(value), errno);
}

int get_int_option(int fd, int level, int name, std::string_view option_name, std::string_view context) {
  int value = 0;
  socklen_t len = sizeof value;
  if (::getsockopt(fd, level, name, &value, &len) != 0)
    throw_socket_error(std::string(context) + ": cannot read " + std::string(option_name), errno);
  return value;
}

int request_buffer_bytes(int fd, SocketBuffer which, int bytes, std::string_view context) {
  const bool send = which == SocketBuffer::kSend;
  const std::string_view name = send ? "SO_SNDBUF" : "SO_RCVBUF";
  if (bytes <= 0)
    throw std::invalid_argument(std::string(context) + ": " + std::string(name) + " must be > 0, got " +
                                std::to_string(bytes));
  // The privileged form fails with EPERM without CAP_NET_ADMIN; the plain one
  // then applies the sysctl cap instead of failing.
  const int force = send ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
  const int plain = send ? SO_SNDBUF : SO_RCVBUF;
  if (::setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof bytes) != 0)
    set_int_option(fd, SOL_SOCKET, plain, bytes, name, context);
  return get_int_option(fd, SOL_SOCKET, plain, name, context);
}

SocketAddress bound_address(int fd, std::string_view context) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    throw_socket_error(std::string(context) + ": cannot read the bound address", errno);
  return SocketAddress::from_sockaddr(sa);
}

}  // namespace nanotick::net
