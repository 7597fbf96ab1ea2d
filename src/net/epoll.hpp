// EpollPoller: one epoll set whose wait() fills a fixed array sized at
// construction, so polling never allocates. Each registered descriptor
// carries a 64-bit user token (a session index, a generation...) handed back
// with its readiness. Level-triggered unless asked otherwise: a socket with
// unread input keeps reporting readable, so a reader with a per-pass budget
// can leave bytes behind safely. Not thread-safe: owned by one thread.
#pragma once

#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>

#include "net/fd.hpp"

namespace nanotick::net {

enum class Interest : std::uint32_t {
  kRead = EPOLLIN,
  kWrite = EPOLLOUT,
  kReadWrite = EPOLLIN | EPOLLOUT,
};

enum class Trigger : std::uint8_t {
  kLevel,  // reported on every wait() while the condition holds
  kEdge,   // reported once per change (EPOLLET): drain until would-block
};

struct ReadyEvent {
  std::uint64_t token = 0;
  std::uint32_t events = 0;  // EPOLL* bits

  bool readable() const noexcept { return (events & EPOLLIN) != 0; }
  bool writable() const noexcept { return (events & EPOLLOUT) != 0; }
  // Reported whether asked for or not: the peer hung up (EPOLLHUP) or the
  // socket has a pending error (EPOLLERR). A read or write then says which.
  bool hangup() const noexcept { return (events & EPOLLHUP) != 0; }
  bool error() const noexcept { return (events & EPOLLERR) != 0; }
};

class EpollPoller {
 public:
  static constexpr std::size_t kMaxEventsLimit = 65536;

  // Throws std::invalid_argument unless 1 <= max_events <= kMaxEventsLimit,
  // SocketError if epoll_create1 fails.
  explicit EpollPoller(std::size_t max_events);

  // Registration: the errno (EEXIST, ENOENT, EBADF, ...) on failure. Closing a
  // descriptor removes it from the set by itself (unless it was dup'ed).
  [[nodiscard]] std::error_code add(int fd, Interest interest, std::uint64_t token,
                                    Trigger trigger = Trigger::kLevel) noexcept;
  [[nodiscard]] std::error_code modify(int fd, Interest interest, std::uint64_t token,
                                       Trigger trigger = Trigger::kLevel) noexcept;
  [[nodiscard]] std::error_code remove(int fd) noexcept;

  // Waits up to `timeout_ms` (0: just look, for busy-poll mode; -1: until
  // something is ready) and returns the ready descriptors, at most
  // max_events() of them (the others come on the next call). The span is
  // valid until the next wait(). Interrupted by a signal: empty.
  [[nodiscard]] std::span<const ReadyEvent> wait(int timeout_ms) noexcept;

  std::size_t max_events() const noexcept { return max_events_; }
  int fd() const noexcept { return fd_.get(); }

 private:
  std::error_code control(int op, int fd, Interest interest, std::uint64_t token, Trigger trigger) noexcept;

  Fd fd_;
  std::size_t max_events_;
  // epoll_event is packed on x86-64; results are copied into aligned
  // ReadyEvents so callers never touch the packed layout.
  std::unique_ptr<epoll_event[]> raw_;
  std::unique_ptr<ReadyEvent[]> ready_;
};

}  // namespace nanotick::net
