// A shared-memory segment between processes: an anonymous memfd (no name in
// any file system, so no other process can open it and nothing is left
// behind by a crash), sized once and sealed so nobody can shrink or grow it
// -- a peer that truncated the file would make every access of the other
// side past the new end a SIGBUS. The creator passes the descriptor to its
// peer over a UNIX socket (fd_passing.hpp); the peer maps it with map().
//
// Two ways to share it (PeerAccess): read-write, for the two ends of an
// order-entry session; or read-only, for the market data ring many readers
// map and only the creator writes. A read-only segment is also sealed with
// F_SEAL_FUTURE_WRITE once the creator has mapped it: from then on no one --
// not even a peer that reopens the descriptor read-write through /proc --
// can map it writable or write() to it; only the creator's own mapping
// writes. read_only_fd() gives the descriptor to pass: a new O_RDONLY open
// of the same memfd, so a peer cannot even ask for a writable mapping.
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

enum class PeerAccess : std::uint8_t {
  kReadWrite,  // both sides write (an order-entry session)
  kReadOnly,   // only the creator writes (a broadcast ring)
};

class ShmSegment {
 public:
  ShmSegment() noexcept = default;
  ~ShmSegment() { unmap(); }
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // A new zero-filled segment of `bytes`, mode 0600, sealed against resizing
  // (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), mapped read-write; with
  // PeerAccess::kReadOnly also sealed against every later writable mapping
  // (F_SEAL_FUTURE_WRITE, after ours). `name` only labels it in
  // /proc/<pid>/maps.
  static ShmSegment create(const std::string& name, std::size_t bytes, PeerAccess peers = PeerAccess::kReadWrite);
  // Maps a segment received from a peer (read-write, or read-only with
  // `access` kReadOnly: PROT_READ, which an O_RDONLY descriptor requires).
  // Checks that it is a memfd sealed against shrinking and exactly `bytes`
  // long before mapping it.
  static ShmSegment map(net::Fd fd, std::size_t bytes, PeerAccess access = PeerAccess::kReadWrite);

  // A new descriptor of this segment opened O_RDONLY (through
  // /proc/self/fd), for a peer that may only read it. Throws std::system_error.
  net::Fd read_only_fd() const;

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
