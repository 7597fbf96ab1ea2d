// Fd: owns one file descriptor and closes it exactly once. Move-only, so a
// descriptor has one owner and a moved-from Fd closes nothing. Not thread-safe:
// owned by one thread, like the socket it usually holds.
#pragma once

#include <unistd.h>

#include <utility>

namespace nanotick::net {

class Fd {
 public:
  Fd() noexcept = default;
  explicit Fd(int fd) noexcept : fd_(fd) {}
  ~Fd() { reset(); }

  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());  // self-move: release() then reset() to the same fd closes nothing
    return *this;
  }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  // Gives up ownership without closing.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

  // Closes the owned descriptor (if any and if different) and takes `fd`.
  // close() is not retried on EINTR: on Linux the descriptor is released even
  // then, and a retry could close a descriptor another thread just opened.
  void reset(int fd = -1) noexcept {
    const int old = std::exchange(fd_, fd);
    if (old >= 0 && old != fd) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace nanotick::net
