// MdConsumerConfig::validate and to_string(RecoveryReason)
// (md_consumer_types.hpp), and the layout facts md_consumer.hpp and
// instrument_recovery.hpp rely on.
#include "trading/md_consumer.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "proto/market_data.hpp"
#include "trading/md_consumer_types.hpp"
#include "trading/recovery_buffer.hpp"

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

}  // namespace nanotick::trading
