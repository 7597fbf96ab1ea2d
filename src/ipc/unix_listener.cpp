#include "ipc/unix_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "net/socket_error.hpp"

namespace nanotick::ipc {

namespace {

// A socket file at `path` that no process listens on any more (its exchange
// died): connecting to it is refused.
bool stale_socket_file(const std::string& path, const sockaddr_un& addr, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (!S_ISSOCK(st.st_mode))
    throw net::SocketError(what + " " + path + " exists and is not a socket: not replacing it", EEXIST);
  net::Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) throw net::SocketError(what + " " + path + ": socket", errno);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0)
    throw net::SocketError(what + " " + path + " is in use by a running exchange", EADDRINUSE);
  return errno == ECONNREFUSED;
}

}  // namespace

sockaddr_un unix_socket_address(const std::string& path, const std::string& what) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    throw std::invalid_argument(what + " '" + path + "' is empty or longer than " +
                                std::to_string(sizeof addr.sun_path - 1) + " bytes (a UNIX socket path)");
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

UnixListener::UnixListener(std::string path, int backlog, std::string what) : path_(std::move(path)) {
  const sockaddr_un addr = unix_socket_address(path_, what);
  if (stale_socket_file(path_, addr, what)) ::unlink(path_.c_str());
  fd_ = net::Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd_) throw net::SocketError(what + " " + path_ + ": socket", errno);
  if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw net::SocketError(what + " " + path_ + ": bind (does its directory exist and is it writable?)", errno);
  // Owner-only before anyone can connect (connect needs write permission on the file).
  if (::chmod(path_.c_str(), 0600) != 0 || ::listen(fd_.get(), backlog) != 0) {
    const int e = errno;
    ::unlink(path_.c_str());
    fd_.reset();
    throw net::SocketError(what + " " + path_ + ": chmod 0600 / listen", e);
  }
}

UnixListener::~UnixListener() {
  if (fd_) ::unlink(path_.c_str());
}

net::Fd UnixListener::accept(bool nonblocking) noexcept {
  return net::Fd(::accept4(fd_.get(), nullptr, nullptr, (nonblocking ? SOCK_NONBLOCK : 0) | SOCK_CLOEXEC));
}

}  // namespace nanotick::ipc
