// The market data consumer's recovery buffer (docs/TRADER.md "Market data
// sequence logic"): the incremental messages of instruments waiting for a
// snapshot, replayed on top of it once it is loaded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "client/client_types.hpp"

namespace nanotick::client {

// The incremental messages of instruments in recovery: one pool of
// fixed-size entries shared by all instruments, a FIFO list per instrument.
// Capacity fixed at construction; nothing allocates afterwards. Not
// thread-safe.
class RecoveryBuffer {
 public:
  static constexpr std::size_t kMaxMessageBytes = 48;  // the longest incremental message (Trade, TopOfBook)
  static constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();

  struct Entry {
    std::array<std::uint8_t, kMaxMessageBytes> bytes{};
    std::uint64_t seq = 0;
    std::uint64_t instrument_seq = 0;
    std::uint32_t next = kNil;
  };

  RecoveryBuffer(std::uint32_t capacity, std::uint32_t instruments);

  // Appends a message (length <= kMaxMessageBytes) to the instrument's list.
  // false, changing nothing, when the pool is full.
  [[nodiscard]] bool push(InstrumentId inst, const std::uint8_t* message, std::size_t length, std::uint64_t seq,
                          std::uint64_t instrument_seq) noexcept;
  // Frees the instrument's messages.
  void clear(InstrumentId inst) noexcept;
  bool empty(InstrumentId inst) const noexcept { return lists_[inst].head == kNil; }
  std::uint32_t size(InstrumentId inst) const noexcept { return lists_[inst].size; }
  // Precondition: !empty(inst).
  std::uint64_t last_instrument_seq(InstrumentId inst) const noexcept {
    return entries_[lists_[inst].tail].instrument_seq;
  }
  std::uint32_t used() const noexcept { return used_; }
  std::uint32_t capacity() const noexcept { return static_cast<std::uint32_t>(entries_.size()); }

  // Calls fn(const Entry&) for the instrument's messages in arrival order,
  // then frees them all.
  template <typename Fn>
  void drain(InstrumentId inst, Fn&& fn) {
    for (std::uint32_t i = lists_[inst].head; i != kNil; i = entries_[i].next)
      fn(static_cast<const Entry&>(entries_[i]));
    clear(inst);
  }

 private:
  struct List {
    std::uint32_t head = kNil;
    std::uint32_t tail = kNil;
    std::uint32_t size = 0;
  };
  std::vector<Entry> entries_;
  std::vector<List> lists_;
  std::uint32_t free_head_ = kNil;
  std::uint32_t used_ = 0;
};

}  // namespace nanotick::client
