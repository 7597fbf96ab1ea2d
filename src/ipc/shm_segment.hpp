// A shared-memory segment for exactly two processes: an anonymous memfd (no
// name in any file system, so no other process can open it and nothing is
// left behind by a crash), sized once and sealed so neither side can shrink
// or grow it -- a peer that truncated the file would make every access of the
// other side past the new end a SIGBUS. The creator passes the descriptor to
// its peer over a UNIX socket (fd_passing.hpp); the peer maps it with map().
//
// Set-up code: throws std::system_error (the call and its errno) or
// std::invalid_argument (a segment the peer sent that is not what it said).
// The mapping is released by the destructor. Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "net/fd.hpp"

namespace nanotick::ipc {

class ShmSegment {
 public:
  ShmSegment() noexcept = default;
  ~ShmSegment() { unmap(); }
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // A new zero-filled segment of `bytes`, mode 0600, sealed against resizing
  // (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), mapped read-write. `name`
  // only labels it in /proc/<pid>/maps.
  static ShmSegment create(const std::string& name, std::size_t bytes);
  // Maps a segment received from a peer. Checks that it is a memfd sealed
  // against shrinking and exactly `bytes` long before mapping it.
  static ShmSegment map(net::Fd fd, std::size_t bytes);

  bool valid() const noexcept { return base_ != nullptr; }
  std::uint8_t* data() const noexcept { return static_cast<std::uint8_t*>(base_); }
  std::size_t size() const noexcept { return bytes_; }
  // The descriptor (to pass to the peer); the mapping stays valid without it.
  int fd() const noexcept { return fd_.get(); }
  void close_fd() noexcept { fd_.reset(); }
  void unmap() noexcept;

 private:
  net::Fd fd_;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace nanotick::ipc
