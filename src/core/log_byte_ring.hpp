// Bounded single-producer single-consumer ring of variable-length byte records,
// the per-thread queue of the async logger. Thread-safe for exactly one producer
// thread (try_claim/commit) and one consumer thread (front/pop) at a time.
//
// Layout: a power-of-two byte buffer indexed by two ever-increasing 64-bit
// positions. Every record is an 8-byte frame header (payload size) followed by
// the payload, padded to 8 bytes, and never wraps: when the space left before
// the end of the buffer is too small, the producer writes a wrap marker there
// and starts the record at offset 0. A record therefore always sits in one
// contiguous span, so the logger can memcpy whole strings into it.
//
// Producer: try_claim(size) -> write -> commit(). Consumer: front() -> read ->
// pop(), then publish_consumed() to return the space (once per batch).
//
//   producer line: write_pos_ (published, release), claim_end_, cached_read_pos_
//   consumer line: read_pos_  (published in batches, release), read_local_,
//                  cached_write_pos_
//
// The largest record that always fits is max_payload() = capacity/2 - 8 bytes:
// a record of payload p needs at most 2*(p+8) - 8 free bytes (padding + record).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "core/compiler.hpp"

namespace nanotick::core {

class LogByteRing {
 public:
  static constexpr std::size_t kFrame = 8;  // frame header: u32 payload size + u32 unused
  static constexpr std::uint32_t kWrapMarker = 0xFFFF'FFFFu;

  // capacity_bytes: power of two in [64, 2^31]. Throws std::invalid_argument
  // otherwise (start-up only).
  explicit LogByteRing(std::size_t capacity_bytes)
      : capacity_(checked_capacity(capacity_bytes)), mask_(capacity_ - 1), buffer_(new std::byte[capacity_]) {
    // Touch every page now so the first laps do not take page faults.
    std::memset(buffer_.get(), 0, capacity_);
  }

  LogByteRing(const LogByteRing&) = delete;
  LogByteRing& operator=(const LogByteRing&) = delete;

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t max_payload() const noexcept { return capacity_ / 2 - kFrame; }

  // ---- producer side -----------------------------------------------------

  // Reserves `size` contiguous payload bytes. Returns where to write them, or
  // nullptr when the ring has no room (or size > max_payload() and it does not
  // fit even now). Nothing is visible to the consumer until commit().
  NT_ALWAYS_INLINE std::byte* try_claim(std::uint32_t size) noexcept {
    const std::uint64_t pos = write_local_;
    const std::uint64_t total = frame_size(size);
    const std::uint64_t offset = pos & mask_;
    const std::uint64_t to_end = capacity_ - offset;
    const std::uint64_t need = total <= to_end ? total : to_end + total;
    if (pos + need - cached_read_pos_ > capacity_) [[unlikely]] {
      cached_read_pos_ = read_pos_.load(std::memory_order_acquire);
      if (pos + need - cached_read_pos_ > capacity_) return nullptr;
    }
    std::uint64_t start = pos;
    if (total > to_end) [[unlikely]] {
      write_header(offset, kWrapMarker);
      start += to_end;
    }
    const std::uint64_t start_offset = start & mask_;
    write_header(start_offset, size);
    claim_end_ = start + total;
    return buffer_.get() + start_offset + kFrame;
  }

  // Publishes the record returned by the last successful try_claim().
  NT_ALWAYS_INLINE void commit() noexcept {
    write_local_ = claim_end_;
    write_pos_.store(claim_end_, std::memory_order_release);
  }

  // Bytes published so far (producer position); any thread may read it.
  std::uint64_t committed_position() const noexcept { return write_pos_.load(std::memory_order_acquire); }

  // ---- consumer side -----------------------------------------------------

  // The oldest committed record's payload, or an empty span when there is none.
  // Valid until pop().
  std::span<const std::byte> front() noexcept {
    for (;;) {
      if (read_local_ == cached_write_pos_) {
        cached_write_pos_ = write_pos_.load(std::memory_order_acquire);
        if (read_local_ == cached_write_pos_) return {};
      }
      const std::uint64_t offset = read_local_ & mask_;
      std::uint32_t size;
      std::memcpy(&size, buffer_.get() + offset, sizeof size);
      if (size == kWrapMarker) {
        read_local_ += capacity_ - offset;  // the record starts at offset 0
        continue;
      }
      return {buffer_.get() + offset + kFrame, size};
    }
  }

  // Consumes the record last returned by front() (which must be non-empty).
  // The space goes back to the producer at the next publish_consumed().
  void pop() noexcept {
    const std::uint64_t offset = read_local_ & mask_;
    std::uint32_t size;
    std::memcpy(&size, buffer_.get() + offset, sizeof size);
    NT_DEBUG_ASSERT(size != kWrapMarker && read_local_ != cached_write_pos_,
                    "LogByteRing::pop without a record from front()");
    read_local_ += frame_size(size);
  }

  // Hands the space of every popped record back to the producer. Batching
  // this keeps the line a waiting producer polls from bouncing per record.
  void publish_consumed() noexcept {
    if (read_pos_.load(std::memory_order_relaxed) != read_local_)
      read_pos_.store(read_local_, std::memory_order_release);
  }

  // Bytes consumed so far (consumer position). Consumer thread only.
  std::uint64_t consumed_position() const noexcept { return read_local_; }

 private:
  static constexpr std::uint64_t frame_size(std::uint32_t payload) noexcept {
    return (static_cast<std::uint64_t>(payload) + kFrame + 7) & ~std::uint64_t{7};
  }

  static std::size_t checked_capacity(std::size_t bytes) {
    if (bytes < 64 || bytes > (std::size_t{1} << 31) || (bytes & (bytes - 1)) != 0)
      throw std::invalid_argument("LogByteRing: capacity " + std::to_string(bytes) +
                                  " bytes must be a power of two between 64 and 2^31; "
                                  "fix the logger's ring_bytes option");
    return bytes;
  }

  NT_ALWAYS_INLINE void write_header(std::uint64_t offset, std::uint32_t size) noexcept {
    std::memcpy(buffer_.get() + offset, &size, sizeof size);
  }

  // Read-only after construction; shared by both sides.
  const std::uint64_t capacity_;
  const std::uint64_t mask_;
  const std::unique_ptr<std::byte[]> buffer_;

  // Written by the producer.
  alignas(kCacheLine) std::atomic<std::uint64_t> write_pos_{0};
  std::uint64_t write_local_ = 0;      // == write_pos_, without the atomic load
  std::uint64_t claim_end_ = 0;        // end of the claimed, not yet committed record
  std::uint64_t cached_read_pos_ = 0;  // last seen read_pos_

  // Written by the consumer.
  alignas(kCacheLine) std::atomic<std::uint64_t> read_pos_{0};
  std::uint64_t read_local_ = 0;        // consumer's position, may be ahead of read_pos_
                                        // by a skipped wrap marker
  std::uint64_t cached_write_pos_ = 0;  // last seen write_pos_
};

}  // namespace nanotick::core
