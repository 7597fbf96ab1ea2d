#include "ipc/shm_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "ipc/fd_passing.hpp"
#include "net/socket_error.hpp"

namespace nanotick::ipc {

namespace {

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    throw std::invalid_argument("shm_path '" + path + "' is empty or longer than " +
                                std::to_string(sizeof addr.sun_path - 1) + " bytes (a UNIX socket path)");
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// A socket file at `path` that no process listens on any more (its exchange
// died): connecting to it is refused.
bool stale_socket_file(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return false;
  if (!S_ISSOCK(st.st_mode))
    throw net::SocketError("shm_path " + path + " exists and is not a socket: not replacing it", EEXIST);
  net::Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) throw net::SocketError("shm_path " + path + ": socket", errno);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0)
    throw net::SocketError("shm_path " + path + " is in use by a running exchange", EADDRINUSE);
  return errno == ECONNREFUSED;
}

}  // namespace

ShmListener::ShmListener(std::string path, std::uint64_t ring_bytes, int backlog)
    : path_(std::move(path)), ring_bytes_(ring_bytes) {
  if (!valid_ring_bytes(ring_bytes_))
    throw std::invalid_argument("shm ring_bytes " + std::to_string(ring_bytes_) +
                                ": must be a power of two from 4096 to 67108864");
  const sockaddr_un addr = unix_address(path_);
  if (stale_socket_file(path_, addr)) ::unlink(path_.c_str());
  fd_ = net::Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd_) throw net::SocketError("shm_path " + path_ + ": socket", errno);
  if (::bind(fd_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw net::SocketError("shm_path " + path_ + ": bind (does its directory exist and is it writable?)", errno);
  // Owner-only before anyone can connect (connect needs write permission on the file).
  if (::chmod(path_.c_str(), 0600) != 0 || ::listen(fd_.get(), backlog) != 0) {
    const int e = errno;
    ::unlink(path_.c_str());
    throw net::SocketError("shm_path " + path_ + ": chmod 0600 / listen", e);
  }
}

ShmListener::~ShmListener() {
  if (fd_) ::unlink(path_.c_str());
}

std::optional<ShmStream> ShmListener::accept() noexcept {
  net::Fd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!conn) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      ++accept_errors_;
      last_accept_error_ = errno;
    }
    return std::nullopt;
  }
  try {
    const std::uint64_t bytes = segment_bytes_for(ring_bytes_);
    ShmSegment segment = ShmSegment::create("nanotick-session-" + std::to_string(++serial_), bytes);
    ShmHello hello{kShmSessionMagic, kShmSessionVersion, 0, ring_bytes_, bytes};
    std::memcpy(segment.data(), &hello, sizeof hello);
    if (const int e = send_with_fd(conn.get(), {reinterpret_cast<const std::uint8_t*>(&hello), sizeof hello},
                                   segment.fd());
        e != 0) {
      ++accept_errors_;
      last_accept_error_ = e;
      return std::nullopt;
    }
    return ShmStream(std::move(segment), std::move(conn), ShmSide::kExchange);
  } catch (const std::system_error& e) {
    ++accept_errors_;
    last_accept_error_ = e.code().value();
  } catch (...) {
    ++accept_errors_;
    last_accept_error_ = ENOMEM;
  }
  return std::nullopt;
}

bool ShmListener::refuse() noexcept {
  net::Fd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  return conn.valid();
}

}  // namespace nanotick::ipc
