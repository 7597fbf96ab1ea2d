// A listening UNIX stream socket at a file path, made the way every local
// transport of the venue needs it (docs/EXCHANGE.md "Shared-memory sessions",
// "Market data in shared memory"): the order-entry sessions' ShmListener and
// the market data ring's MdRingServer both stand on it.
//
// - The path must fit a UNIX socket address (1..107 bytes).
// - A socket file a killed exchange left behind is replaced, after a connect
//   to it is refused (nobody listens there any more); a live listener's file,
//   or a file that is not a socket, is an error naming the path.
// - The file is made 0600 before listen(), so only the owner's processes can
//   ever connect (connect needs write permission on the file).
// - The destructor removes the file.
//
// Set-up throws net::SocketError / std::invalid_argument, each naming `what`
// (the config key) and the path; accept() is noexcept. Not thread-safe: one
// owning thread.
#pragma once

#include <sys/un.h>

#include <string>

#include "net/fd.hpp"

namespace nanotick::ipc {

// The address of `path`; throws std::invalid_argument "<what> '<path>' is
// empty or longer than 107 bytes (a UNIX socket path)".
sockaddr_un unix_socket_address(const std::string& path, const std::string& what);

class UnixListener {
 public:
  // Binds and listens at `path` (non-blocking, close-on-exec). `what` names
  // the config key in errors ("shm_path", "market_data.shm_path").
  UnixListener(std::string path, int backlog, std::string what);
  ~UnixListener();
  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  int fd() const noexcept { return fd_.get(); }
  const std::string& path() const noexcept { return path_; }

  // One pending connection (SOCK_NONBLOCK when `nonblocking`, always
  // close-on-exec), or an invalid Fd: none pending (errno EAGAIN) or accept
  // failed (errno says why).
  net::Fd accept(bool nonblocking = true) noexcept;

 private:
  std::string path_;
  net::Fd fd_;
};

}  // namespace nanotick::ipc
