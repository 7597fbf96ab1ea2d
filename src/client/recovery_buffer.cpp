#include "client/recovery_buffer.hpp"

#include <algorithm>
#include <cstring>

namespace nanotick::client {

RecoveryBuffer::RecoveryBuffer(std::uint32_t capacity, std::uint32_t instruments)
    : entries_(capacity), lists_(instruments) {
  for (std::uint32_t i = 0; i < capacity; ++i) entries_[i].next = i + 1 < capacity ? i + 1 : kNil;
  free_head_ = capacity > 0 ? 0 : kNil;
}

bool RecoveryBuffer::push(InstrumentId inst, const std::uint8_t* message, std::size_t length, std::uint64_t seq,
                          std::uint64_t instrument_seq) noexcept {
  if (free_head_ == kNil) return false;
  const std::uint32_t i = free_head_;
  Entry& e = entries_[i];
  free_head_ = e.next;
  std::memcpy(e.bytes.data(), message, std::min(length, kMaxMessageBytes));
  e.seq = seq;
  e.instrument_seq = instrument_seq;
  e.next = kNil;
  List& l = lists_[inst];
  if (l.tail != kNil) {
    entries_[l.tail].next = i;
  } else {
    l.head = i;
  }
  l.tail = i;
  ++l.size;
  ++used_;
  return true;
}

void RecoveryBuffer::clear(InstrumentId inst) noexcept {
  List& l = lists_[inst];
  if (l.head == kNil) return;
  // The whole list goes onto the free list at once.
  entries_[l.tail].next = free_head_;
  free_head_ = l.head;
  used_ -= l.size;
  l = List{};
}

}  // namespace nanotick::client
