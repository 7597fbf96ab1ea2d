// A single-producer single-consumer byte stream in memory shared by two
// processes that do not trust each other: one direction of a shared-memory
// order-entry session (docs/EXCHANGE.md "Shared-memory sessions").
//
// Why not core::SpscRing: that ring keeps both indices (and each side's cached
// copy of the other's) inside the shared object and trusts them; a peer that
// writes a wrong index there makes the other side read or write out of
// bounds. Here each side's view keeps its own position in private memory and
// only *publishes* it into the shared word; it reads the peer's word once per
// call and checks it against what can be true before using it:
//
//   writer: 0 <= tail - head <= capacity, and head never moves backwards
//   reader: head <= tail (as published) and tail - head <= capacity
//
// A word that fails the check breaks the view for good (broken() == true, and
// every later call returns nothing): the session is closed, never read or
// written past its buffer. The payload bytes are copied out with memcpy and
// parsed from the private copy, so a peer that rewrites them after publishing
// can only make them wrong (the frame checks catch that), never change them
// between a check and a use.
//
// Layout (ShmByteRingWords, no pointers: both processes map it anywhere):
// the producer's tail and the consumer's head, each u64 counting bytes since
// the start on a cache line of its own; the data buffer (Capacity bytes, a
// power of two) lives elsewhere in the segment. Not thread-safe: each view is
// owned by one thread of one process.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/compiler.hpp"

namespace nanotick::ipc {

struct alignas(core::kCacheLine) ShmByteRingWords {
  std::uint64_t tail;  // written by the producer: bytes published so far
  char pad0[core::kCacheLine - sizeof(std::uint64_t)];
  std::uint64_t head;  // written by the consumer: bytes consumed so far
  char pad1[core::kCacheLine - sizeof(std::uint64_t)];
};
static_assert(sizeof(ShmByteRingWords) == 2 * core::kCacheLine);

namespace detail {

inline std::uint64_t load_shared(const std::uint64_t& word) noexcept {
  return std::atomic_ref<const std::uint64_t>(word).load(std::memory_order_acquire);
}
inline void store_shared(std::uint64_t& word, std::uint64_t value) noexcept {
  std::atomic_ref<std::uint64_t>(word).store(value, std::memory_order_release);
}

}  // namespace detail

// The producer's side of one direction.
class ShmByteRingWriter {
 public:
  ShmByteRingWriter() noexcept = default;
  // `capacity`: a power of two (checked by the caller that built the segment).
  ShmByteRingWriter(ShmByteRingWords* words, std::uint8_t* data, std::uint64_t capacity) noexcept
      : words_(words), data_(data), cap_(capacity), tail_(0), head_seen_(0) {}

  // Copies as many of `bytes` as there is room for and publishes them;
  // returns the count (0: full, or broken()).
  std::size_t write(std::span<const std::uint8_t> bytes) noexcept {
    if (!refresh_head()) return 0;
    const std::uint64_t room = cap_ - (tail_ - head_seen_);
    const std::size_t n = bytes.size() < room ? bytes.size() : static_cast<std::size_t>(room);
    if (n == 0) return 0;
    const std::uint64_t at = tail_ & (cap_ - 1);
    const std::size_t first = static_cast<std::size_t>(cap_ - at) < n ? static_cast<std::size_t>(cap_ - at) : n;
    std::memcpy(data_ + at, bytes.data(), first);
    if (first < n) std::memcpy(data_, bytes.data() + first, n - first);
    tail_ += n;
    detail::store_shared(words_->tail, tail_);
    return n;
  }
  // Bytes published and not yet consumed (0 when broken()).
  std::uint64_t queued() noexcept { return refresh_head() ? tail_ - head_seen_ : 0; }
  std::uint64_t capacity() const noexcept { return cap_; }
  std::uint64_t published() const noexcept { return tail_; }
  bool broken() const noexcept { return broken_; }

 private:
  bool refresh_head() noexcept {
    if (broken_ || words_ == nullptr) return false;
    const std::uint64_t h = detail::load_shared(words_->head);
    if (h < head_seen_ || h > tail_) [[unlikely]] {  // backwards, or past what was ever published
      broken_ = true;
      return false;
    }
    head_seen_ = h;
    return true;
  }

  ShmByteRingWords* words_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::uint64_t cap_ = 0;
  std::uint64_t tail_ = 0;       // private: what we published (never read back from the shared word)
  std::uint64_t head_seen_ = 0;  // the consumer's head as last read and checked
  bool broken_ = false;
};

// The consumer's side of one direction.
class ShmByteRingReader {
 public:
  ShmByteRingReader() noexcept = default;
  ShmByteRingReader(ShmByteRingWords* words, const std::uint8_t* data, std::uint64_t capacity) noexcept
      : words_(words), data_(data), cap_(capacity) {}

  // Copies up to buffer.size() published bytes out and consumes them;
  // returns the count (0: nothing published, or broken()).
  std::size_t read(std::span<std::uint8_t> buffer) noexcept {
    const std::uint64_t avail = available();
    const std::size_t n = buffer.size() < avail ? buffer.size() : static_cast<std::size_t>(avail);
    if (n == 0) return 0;
    const std::uint64_t at = head_ & (cap_ - 1);
    const std::size_t first = static_cast<std::size_t>(cap_ - at) < n ? static_cast<std::size_t>(cap_ - at) : n;
    std::memcpy(buffer.data(), data_ + at, first);
    if (first < n) std::memcpy(buffer.data() + first, data_, n - first);
    head_ += n;
    detail::store_shared(words_->head, head_);
    return n;
  }
  // Consumes everything published now, unread.
  void discard() noexcept {
    const std::uint64_t avail = available();
    if (avail == 0) return;
    head_ += avail;
    detail::store_shared(words_->head, head_);
  }
  // Bytes published and not yet read (0 when broken()): one shared load.
  std::uint64_t available() noexcept {
    if (broken_ || words_ == nullptr) return 0;
    const std::uint64_t t = detail::load_shared(words_->tail);
    if (t < head_ || t - head_ > cap_) [[unlikely]] {  // backwards, or more than the buffer holds
      broken_ = true;
      return 0;
    }
    return t - head_;
  }
  std::uint64_t consumed() const noexcept { return head_; }
  bool broken() const noexcept { return broken_; }

 private:
  ShmByteRingWords* words_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t cap_ = 0;
  std::uint64_t head_ = 0;  // private: what we consumed
  bool broken_ = false;
};

}  // namespace nanotick::ipc
