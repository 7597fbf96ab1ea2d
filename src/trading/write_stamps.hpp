// The order-entry client's record of when each order message was written in
// full (tick-to-trade: docs/TELEMETRY.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace nanotick::trading {

// Order messages queued or written but not yet reported to on_order_written:
// a ring of (seq, end offset in the output stream, TSC once written).
// Capacity fixed at construction. Not thread-safe.
class WriteStamps {
 public:
  explicit WriteStamps(std::size_t capacity);
  bool full() const noexcept { return tail_ - head_ == mask_ + 1; }
  void push(std::uint32_t seq, std::uint64_t end_offset) noexcept {
    slots_[tail_++ & mask_] = Slot{end_offset, 0, seq};
  }
  // Stamps every queued message whose last byte is below `written` with `tsc`.
  // Returns whether there was one (the caller reads the clock only then).
  bool has_unstamped_below(std::uint64_t written) const noexcept {
    return stamped_ != tail_ && slots_[stamped_ & mask_].end_offset <= written;
  }
  void stamp_below(std::uint64_t written, std::uint64_t tsc) noexcept {
    while (stamped_ != tail_ && slots_[stamped_ & mask_].end_offset <= written) slots_[stamped_++ & mask_].tsc = tsc;
  }
  // Hands each stamped message to fn(seq, tsc), oldest first.
  template <typename Fn>
  std::size_t deliver(Fn&& fn) {
    std::size_t n = 0;
    while (head_ != stamped_) {
      const Slot s = slots_[head_++ & mask_];
      fn(s.seq, s.tsc);
      ++n;
    }
    return n;
  }
  // Drops the messages never written (the connection is gone).
  void drop_unstamped() noexcept { tail_ = stamped_; }

 private:
  struct Slot {
    std::uint64_t end_offset;
    std::uint64_t tsc;
    std::uint32_t seq;
  };
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0;
  std::uint64_t head_ = 0;     // next to deliver
  std::uint64_t stamped_ = 0;  // next to stamp
  std::uint64_t tail_ = 0;     // next free
};

}  // namespace nanotick::trading
