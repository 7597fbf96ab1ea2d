// A byte buffer filled at the back and consumed at the front, compacted (the
// unconsumed bytes moved to the start) when the back runs out: the input and
// output buffers of TCP sessions on both sides of the venue. Fixed capacity,
// allocated once; nothing allocates afterwards. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace nanotick::core {

class ByteBuffer {
 public:
  explicit ByteBuffer(std::size_t capacity) : data_(std::make_unique<std::uint8_t[]>(capacity)), cap_(capacity) {}

  std::span<const std::uint8_t> readable() const noexcept { return {data_.get() + head_, tail_ - head_}; }
  std::size_t size() const noexcept { return tail_ - head_; }
  std::size_t capacity() const noexcept { return cap_; }
  bool empty() const noexcept { return head_ == tail_; }
  void consume(std::size_t n) noexcept {
    head_ += n;
    if (head_ == tail_) head_ = tail_ = 0;
  }
  // Free space at the back, after compacting if that makes more.
  std::span<std::uint8_t> writable() noexcept {
    if (head_ != 0 && tail_ == cap_) compact();
    return {data_.get() + tail_, cap_ - tail_};
  }
  void commit(std::size_t n) noexcept { tail_ += n; }
  // Appends `n` bytes; false (nothing written) when they do not fit.
  bool append(const void* bytes, std::size_t n) noexcept {
    if (cap_ - tail_ < n) {
      compact();
      if (cap_ - tail_ < n) return false;
    }
    std::memcpy(data_.get() + tail_, bytes, n);
    tail_ += n;
    return true;
  }
  void clear() noexcept { head_ = tail_ = 0; }
  // Keeps only the first `n` unconsumed bytes.
  void truncate(std::size_t n) noexcept {
    if (n < tail_ - head_) tail_ = head_ + n;
    if (head_ == tail_) head_ = tail_ = 0;
  }

 private:
  void compact() noexcept {
    if (head_ == 0) return;
    std::memmove(data_.get(), data_.get() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t cap_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

}  // namespace nanotick::core
