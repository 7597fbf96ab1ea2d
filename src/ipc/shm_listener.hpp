// The exchange's end of shared-memory order entry: a UNIX stream socket at a
// configured path where clients ask for a session. Each accepted connection
// gets a segment of its own (ShmSegment::create: anonymous, sealed, 0600)
// whose descriptor goes back over that connection, which then stays open as
// the session's control socket (shm_stream.hpp). A fresh segment per
// connection, never a reused one: a client that kept the mapping of its old
// session can write into nothing but memory no one reads any more.
//
// The socket file is a UnixListener (unix_listener.hpp): created 0600 before
// listen(), so only the exchange's user can connect; a stale one a killed
// exchange left behind is replaced (after a connect to it is refused -- a
// live exchange's is not), and the file is removed by the destructor.
//
// Set-up throws net::SocketError / std::invalid_argument with the path; accept()
// is noexcept and counts its failures. Not thread-safe: the gateway's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ipc/shm_stream.hpp"
#include "ipc/unix_listener.hpp"

namespace nanotick::ipc {

class ShmListener {
 public:
  // `ring_bytes`: each direction's buffer (a power of two, 4 KiB .. 64 MiB).
  ShmListener(std::string path, std::uint64_t ring_bytes, int backlog = 64);
  ShmListener(const ShmListener&) = delete;
  ShmListener& operator=(const ShmListener&) = delete;

  int fd() const noexcept { return listener_.fd(); }
  const std::string& path() const noexcept { return listener_.path(); }
  std::uint64_t ring_bytes() const noexcept { return ring_bytes_; }

  // Accepts one pending connection and sets up its session (segment created,
  // descriptor sent); nullopt when none is pending or its set-up failed
  // (counted in accept_errors(), errno in last_accept_error()).
  [[nodiscard]] std::optional<ShmStream> accept() noexcept;
  // Takes one pending connection and closes it at once (no slot for it).
  bool refuse() noexcept;
  std::uint64_t accept_errors() const noexcept { return accept_errors_; }
  int last_accept_error() const noexcept { return last_accept_error_; }

 private:
  static std::uint64_t checked_ring_bytes(std::uint64_t ring_bytes);

  std::uint64_t ring_bytes_;
  UnixListener listener_;
  std::uint64_t accept_errors_ = 0;
  int last_accept_error_ = 0;
  std::uint64_t serial_ = 0;
};

}  // namespace nanotick::ipc
