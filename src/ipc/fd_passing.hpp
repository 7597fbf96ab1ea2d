// Passing a file descriptor to another process over a UNIX stream socket
// (SCM_RIGHTS), with a small fixed message beside it: how an exchange hands a
// client its session's shared-memory segment. Set-up code, not the hot path.
// Not thread-safe per socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "net/fd.hpp"

namespace nanotick::ipc {

// Sends `bytes` and `fd` in one sendmsg (MSG_NOSIGNAL). Returns 0, or the
// errno (a short send is EMSGSIZE: the message must go whole).
int send_with_fd(int socket, std::span<const std::uint8_t> bytes, int fd) noexcept;

struct Received {
  std::size_t bytes = 0;  // bytes read into the buffer (0 with error == 0: the peer closed)
  net::Fd fd;             // the one descriptor sent with them, if any
  int error = 0;          // errno, or EBADMSG: more than one descriptor or a truncated control message
};
// One recvmsg into `buffer` (MSG_CMSG_CLOEXEC). Descriptors beyond the first,
// or of a truncated control message, are closed and make it an error.
Received receive_with_fd(int socket, std::span<std::uint8_t> buffer) noexcept;

}  // namespace nanotick::ipc
