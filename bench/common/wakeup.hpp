// Wake-up primitives shared by the benches that put a thread or a process to
// sleep until a peer posts (notify_bench: thread to thread; ipc_bench: process
// to process): the raw futex call and an eventfd. Start-up code throws;
// post/wait die on errors that only a programming error can cause. EventFd is
// not thread-safe to create or destroy; post() and wait() may be called from
// two threads, or from two processes after fork() (the descriptor is inherited).
#pragma once

#include <errno.h>  // program_invocation_short_name (GNU)
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nanotick::bench {

[[noreturn]] inline void die_errno(const char* what) {
  std::fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name, what, std::strerror(errno));
  std::exit(1);
}

// FUTEX_WAIT / FUTEX_WAKE on a 32-bit atomic, no timeout. `op` chooses the
// scope: FUTEX_*_PRIVATE when both sides share one address space (threads),
// plain FUTEX_* when they share only the page (processes after fork(): a
// private futex is keyed by the address space, so a wake from another process
// would never find the waiter).
inline long futex(std::atomic<std::uint32_t>& word, int op, std::uint32_t value) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "the futex word is a plain 32-bit int");
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

class EventFd {
 public:
  EventFd() : fd_(::eventfd(0, EFD_CLOEXEC)) {
    if (fd_ < 0) {
      throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    }
  }
  ~EventFd() { ::close(fd_); }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  void post() {
    const std::uint64_t one = 1;
    if (::write(fd_, &one, sizeof one) != static_cast<ssize_t>(sizeof one)) {
      die_errno("eventfd write");
    }
  }
  // Sleeps until at least one post, consuming all of them.
  void wait() {
    while (!try_wait()) {
    }
  }
  // One read(): false when a signal interrupted it before a post arrived (a
  // caller with a deadline checks it and decides whether to wait again).
  [[nodiscard]] bool try_wait() {
    std::uint64_t count = 0;
    if (::read(fd_, &count, sizeof count) == static_cast<ssize_t>(sizeof count)) {
      return true;
    }
    if (errno != EINTR) {
      die_errno("eventfd read");
    }
    return false;
  }

 private:
  int fd_;
};

}  // namespace nanotick::bench
