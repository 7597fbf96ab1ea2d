#include "trading/md_consumer.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::trading {

// MdConsumer reads every incremental message's instrument at offset 4 and
// its instrument_seq from its last 8 bytes, whatever the type.
static_assert(offsetof(proto::MdOrder, instrument) == 4 &&
              offsetof(proto::MdOrder, instrument_seq) == sizeof(proto::MdOrder) - 8);
static_assert(offsetof(proto::MdModifyOrder, instrument) == 4 &&
              offsetof(proto::MdModifyOrder, instrument_seq) == sizeof(proto::MdModifyOrder) - 8);
static_assert(offsetof(proto::MdDeleteOrder, instrument) == 4 &&
              offsetof(proto::MdDeleteOrder, instrument_seq) == sizeof(proto::MdDeleteOrder) - 8);
static_assert(offsetof(proto::MdTrade, instrument) == 4 &&
              offsetof(proto::MdTrade, instrument_seq) == sizeof(proto::MdTrade) - 8);
static_assert(offsetof(proto::MdTopOfBook, instrument) == 4 &&
              offsetof(proto::MdTopOfBook, instrument_seq) == sizeof(proto::MdTopOfBook) - 8);
// The recovery buffer's entries hold any incremental message.
static_assert(RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdModifyOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdDeleteOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdTrade) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdTopOfBook));

void MdConsumerConfig::validate() const {
  if (reorder_packets > kMaxReorderPackets)
    throw std::invalid_argument("md consumer: reorder_packets: must be <= " + std::to_string(kMaxReorderPackets) +
                                " (each held packet reserves 64 KiB), got " + std::to_string(reorder_packets));
  if (reorder_ns > kMaxReorderNs)
    throw std::invalid_argument("md consumer: reorder_ns: must be <= " + std::to_string(kMaxReorderNs) +
                                " (a longer window stalls every instrument behind one lost packet), got " +
                                std::to_string(reorder_ns));
  if (buffer_messages == 0)
    throw std::invalid_argument(
        "md consumer: buffer_messages: must be > 0 (instruments in recovery buffer their messages), got 0");
  if (buffer_messages > kMaxBufferMessages)
    throw std::invalid_argument("md consumer: buffer_messages: must be <= " + std::to_string(kMaxBufferMessages) +
                                ", got " + std::to_string(buffer_messages));
}

std::string_view to_string(RecoveryReason r) noexcept {
  switch (r) {
    case RecoveryReason::kLateJoin: return "late join";
    case RecoveryReason::kSeqJump: return "instrument seq jump";
    case RecoveryReason::kBookReject: return "book refused a message";
    case RecoveryReason::kTopOfBookMismatch: return "top of book mismatch";
    case RecoveryReason::kAuditMismatch: return "snapshot audit mismatch";
  }
  return "unknown";
}

// ---- ReorderWindow ----------------------------------------------------------------------

ReorderWindow::ReorderWindow(std::uint32_t capacity) {
  slots_.resize(capacity);
  // Value-initialised: the pages are touched now, not on the first loss.
  for (Slot& s : slots_) s.data = std::make_unique<std::uint8_t[]>(kMaxPacketBytes);
}

void ReorderWindow::hold(std::span<const std::uint8_t> packet, const proto::PacketHeader& header, TimeNs now,
                         std::uint64_t rx_tsc) noexcept {
  Slot& s = slots_[count_++];
  std::memcpy(s.data.get(), packet.data(), packet.size());
  s.meta = Held{header, rx_tsc, now};
}

std::uint32_t ReorderWindow::find(std::uint64_t first_seq) const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i)
    if (slots_[i].meta.header.first_seq == first_seq) return i;
  return kNone;
}

std::uint32_t ReorderWindow::find_at_or_before(std::uint64_t seq) const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i)
    if (slots_[i].meta.header.first_seq <= seq) return i;
  return kNone;
}

std::uint64_t ReorderWindow::lowest_first_seq() const noexcept {
  std::uint64_t lowest = slots_[0].meta.header.first_seq;
  for (std::uint32_t i = 1; i < count_; ++i) lowest = std::min(lowest, slots_[i].meta.header.first_seq);
  return lowest;
}

TimeNs ReorderWindow::oldest_arrival() const noexcept {
  TimeNs oldest = slots_[0].meta.arrived;
  for (std::uint32_t i = 1; i < count_; ++i) oldest = std::min(oldest, slots_[i].meta.arrived);
  return oldest;
}

void ReorderWindow::release(std::uint32_t i) noexcept {
  --count_;
  if (i != count_) std::swap(slots_[i], slots_[count_]);
}

// ---- RecoveryBuffer ---------------------------------------------------------------------

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

}  // namespace nanotick::trading
