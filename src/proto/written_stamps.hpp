// The messages queued on a session's output stream that wait for the write
// of their last byte (both ends of order entry: docs/TELEMETRY.md). One ring
// serves every "this message has now left" event a session needs:
//   - the exchange's acknowledgement latency (TCP read of an order -> its
//     first answer handed to send(), then written) and its ex_tcp_write stamp;
//   - the trading client's tr_tcp_write stamp and on_order_written (the end
//     of tick-to-trade), delivered on the next poll, not inside send_*.
// Each entry is the stream offset just past its last byte, two keys the owner
// chooses and a start TSC (0: none). Three cursors walk the ring, oldest
// first: handed (passed to the kernel's send), stamped (written in full, with
// the TSC read then) and taken (delivered to the owner).
//
// Fixed capacity (a power of two), allocated once; a full ring refuses a push
// (the caller counts the message as unstamped). Not thread-safe: the
// session's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace nanotick::proto {

class WrittenStamps {
 public:
  struct Entry {
    std::uint64_t end;        // stream offset just past the message's last byte
    std::uint64_t key;        // the owner's: a telemetry key
    std::uint64_t aux;        // the owner's: a second key, or the seq
    std::uint64_t start_tsc;  // the owner's: when what this message answers began (0: none)
    std::uint64_t written_tsc;  // set when stamped
  };

  // Start-up: room for at least `capacity` messages; 0 leaves it disabled
  // (every push refused, nothing ever written).
  void allocate(std::size_t capacity) {
    if (capacity == 0) return;
    std::size_t n = 1;
    while (n < capacity) n <<= 1;
    slots_ = std::make_unique<Entry[]>(n);
    mask_ = n - 1;
  }
  bool enabled() const noexcept { return slots_ != nullptr; }
  bool full() const noexcept { return !enabled() || tail_ - taken_ > mask_; }

  bool push(std::uint64_t end, std::uint64_t key, std::uint64_t aux, std::uint64_t start_tsc = 0) noexcept {
    if (full()) return false;
    slots_[tail_++ & mask_] = Entry{end, key, aux, start_tsc, 0};
    return true;
  }

  // Calls fn(entry) for each message queued since the last call (its bytes
  // are about to be handed to the kernel), oldest first.
  template <typename Fn>
  void take_handed(Fn&& fn) noexcept {
    while (handed_ != tail_) fn(static_cast<const Entry&>(slots_[handed_++ & mask_]));
  }

  // Whether the oldest unstamped message ends within the first `written` bytes
  // (the caller reads the clock only then).
  bool has_written(std::uint64_t written) const noexcept {
    return stamped_ != tail_ && slots_[stamped_ & mask_].end <= written;
  }
  // Stamps every message whose last byte is within the first `written` bytes with `tsc`.
  void stamp_written(std::uint64_t written, std::uint64_t tsc) noexcept {
    while (has_written(written)) slots_[stamped_++ & mask_].written_tsc = tsc;
    if (handed_ < stamped_) handed_ = stamped_;
  }
  // Calls fn(entry) for each stamped message, oldest first, and forgets it.
  // Returns how many.
  template <typename Fn>
  std::size_t take_stamped(Fn&& fn) noexcept {
    std::size_t n = 0;
    for (; taken_ != stamped_; ++n) fn(static_cast<const Entry&>(slots_[taken_++ & mask_]));
    return n;
  }

  // Forgets the messages ending beyond `queued` (cut from the output unwritten).
  void drop_beyond(std::uint64_t queued) noexcept {
    while (tail_ != stamped_ && slots_[(tail_ - 1) & mask_].end > queued) --tail_;
    if (handed_ > tail_) handed_ = tail_;
  }
  // Forgets the messages never written (the connection is gone); stamped ones stay to be taken.
  void drop_unstamped() noexcept { tail_ = handed_ = stamped_; }
  // A new connection: offsets start at 0 again.
  void clear() noexcept { taken_ = stamped_ = handed_ = tail_ = 0; }

 private:
  std::unique_ptr<Entry[]> slots_;
  std::size_t mask_ = 0;
  std::uint64_t taken_ = 0;    // next to deliver
  std::uint64_t stamped_ = 0;  // next to stamp
  std::uint64_t handed_ = 0;   // next to hand over
  std::uint64_t tail_ = 0;     // next free
};

}  // namespace nanotick::proto
