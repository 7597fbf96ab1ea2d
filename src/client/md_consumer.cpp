// MdConsumerConfig::validate, to_string(RecoveryReason), the counters' labels
// (md_consumer_types.hpp), and the layout facts md_consumer.hpp and
// instrument_recovery.hpp rely on.
#include "client/md_consumer.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

#include "client/md_consumer_types.hpp"
#include "client/recovery_buffer.hpp"
#include "proto/market_data.hpp"

namespace nanotick::client {

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
static_assert(offsetof(proto::MdInstrumentState, instrument) == 4 &&
              offsetof(proto::MdInstrumentState, instrument_seq) == sizeof(proto::MdInstrumentState) - 8);
// The recovery buffer's entries hold any incremental message.
static_assert(RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdModifyOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdDeleteOrder) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdTrade) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdTopOfBook) &&
              RecoveryBuffer::kMaxMessageBytes >= sizeof(proto::MdInstrumentState));

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

void place_md_consumer_counters(core::CountersFile& file, MdConsumerCounters& c) {
  file.place(c.packets[0], "md.packets.incremental");
  file.place(c.packets[1], "md.packets.snapshot");
  file.place(c.heartbeats[0], "md.heartbeats.incremental");
  file.place(c.heartbeats[1], "md.heartbeats.snapshot");
  for (std::size_t e = 1; e < c.invalid.size(); ++e)
    file.place(c.invalid[e], "md.invalid." + std::string(proto::to_string(static_cast<proto::PacketError>(e))));
  const std::pair<core::Counter*, const char*> named[] = {
      {&c.bad_seq, "md.bad_seq"},
      {&c.duplicates, "md.duplicates"},
      {&c.snapshot_duplicates, "md.snapshot_duplicates"},
      {&c.snapshot_channel_restarts, "md.snapshot_channel_restarts"},
      {&c.held, "md.held"},
      {&c.reordered, "md.reordered"},
      {&c.gaps, "md.gaps"},
      {&c.messages_lost, "md.messages_lost"},
      {&c.snapshot_gaps, "md.snapshot_gaps"},
      {&c.instrument_seq_jumps, "md.instrument_seq_jumps"},
      {&c.unknown_instrument, "md.unknown_instrument"},
      {&c.skipped_in_snapshot, "md.skipped_in_snapshot"},
      {&c.buffered, "md.buffered"},
      {&c.buffer_restarts, "md.buffer_restarts"},
      {&c.buffer_overflows, "md.buffer_overflows"},
      {&c.snapshots_used, "md.snapshots.used"},
      {&c.snapshots_ignored_live, "md.snapshots.ignored_live"},
      {&c.snapshots_too_old, "md.snapshots.too_old"},
      {&c.snapshots_incomplete, "md.snapshots.incomplete"},
      {&c.snapshots_malformed, "md.snapshots.malformed"},
      {&c.snapshots_before_start, "md.snapshots.before_start"},
      {&c.snapshots_unloadable, "md.snapshots.unloadable"},
      {&c.audits, "md.audits"},
      {&c.audit_mismatches, "md.audit_mismatches"},
      {&c.book_rejects, "md.book_rejects"},
      {&c.top_of_book_mismatches, "md.top_of_book_mismatches"},
      {&c.replay_failures, "md.replay_failures"},
  };
  for (const auto& [counter, label] : named) file.place(*counter, label);
  for (std::size_t r = 0; r < c.recoveries_started.size(); ++r) {
    const std::string k = "md.recoveries." + std::string(to_string(static_cast<RecoveryReason>(r)));
    file.place(c.recoveries_started[r], k + ".started");
    file.place(c.recoveries_completed[r], k + ".completed");
  }
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

}  // namespace nanotick::client
