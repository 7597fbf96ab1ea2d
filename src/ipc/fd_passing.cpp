#include "ipc/fd_passing.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace nanotick::ipc {

namespace {

constexpr std::size_t kMaxFds = 4;  // room to receive (and close) a few more than we accept

}  // namespace

int send_with_fd(int socket, std::span<const std::uint8_t> bytes, int fd) noexcept {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t n;
  do {
    n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  return static_cast<std::size_t>(n) == bytes.size() ? 0 : EMSGSIZE;
}

Received receive_with_fd(int socket, std::span<std::uint8_t> buffer) noexcept {
  Received r;
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    r.error = errno;
    return r;
  }
  r.bytes = static_cast<std::size_t>(n);
  bool extra = (msg.msg_flags & MSG_CTRUNC) != 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (!r.fd) {
        r.fd = net::Fd(fd);
      } else {
        ::close(fd);
        extra = true;
      }
    }
  }
  if (extra) {
    r.fd.reset();
    r.error = EBADMSG;
  }
  return r;
}

}  // namespace nanotick::ipc
