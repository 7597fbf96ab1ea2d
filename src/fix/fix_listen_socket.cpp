#include "fix/fix_listen_socket.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace nanotick::fix {

namespace {

std::runtime_error failure(const net::SocketAddress& address, const std::string& what) {
  return std::runtime_error("FIX listen " + address.to_string() + ": " + what);
}

// The descriptors of this process listening on INADDR_ANY:port.
std::vector<int> wildcard_listeners(std::uint16_t port) {
  std::vector<int> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0) continue;
    sockaddr_in a{};
    socklen_t alen = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0 || a.sin_family != AF_INET) continue;
    if (ntohs(a.sin_port) == port && a.sin_addr.s_addr == htonl(INADDR_ANY)) found.push_back(fd);
  }
  if (ec) throw std::runtime_error("cannot list /proc/self/fd: " + ec.message());
  return found;
}

}  // namespace

net::SocketAddress bound_address(int fd) {
  sockaddr_in a{};
  socklen_t alen = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0 || a.sin_family != AF_INET) return {};
  return net::SocketAddress::from_sockaddr(a);
}

void narrow_listener(const net::SocketAddress& address) {
  const std::vector<int> fds = wildcard_listeners(address.port);
  if (fds.size() != 1)
    throw failure(address, "expected QuickFIX's one socket listening on 0.0.0.0:" + std::to_string(address.port) +
                               ", found " + std::to_string(fds.size()));
  const int fd = fds[0];
  const int status_flags = ::fcntl(fd, F_GETFL);
  const int fd_flags = ::fcntl(fd, F_GETFD);
  const int fresh = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fresh < 0) throw failure(address, std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  (void)::setsockopt(fresh, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // dup2 closes QuickFIX's wildcard socket (freeing the port) and puts the
  // fresh one under its number in one step.
  if (::dup2(fresh, fd) < 0) {
    const int err = errno;
    ::close(fresh);
    throw failure(address, std::string("dup2: ") + std::strerror(err));
  }
  ::close(fresh);
  if (status_flags >= 0) (void)::fcntl(fd, F_SETFL, status_flags);
  if (fd_flags >= 0) (void)::fcntl(fd, F_SETFD, fd_flags);
  const sockaddr_in sa = address.to_sockaddr();
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
    throw failure(address, std::string("bind: ") + std::strerror(errno));
  if (::listen(fd, SOMAXCONN) != 0) throw failure(address, std::string("listen: ") + std::strerror(errno));
  if (!(bound_address(fd) == address))
    throw failure(address, "the socket is bound to " + bound_address(fd).to_string());
}

}  // namespace nanotick::fix
