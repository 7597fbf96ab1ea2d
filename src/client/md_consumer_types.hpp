// The market data consumer's vocabulary (md_consumer.hpp): its config, why
// an instrument enters recovery, and its counters. A header of its own
// because the consumer's parts -- the incremental sequencer, the snapshot
// assembler and the per-instrument recovery -- all count into the same
// MdConsumerCounters and must not include each other or the consumer.
// Plain values: thread-safe, except that the counters have one writer (the
// consumer's thread) and any readers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/client_types.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/time_units.hpp"
#include "proto/md_packet.hpp"

namespace nanotick::client {

struct MdConsumerConfig {
  std::uint32_t reorder_packets = 8;  // packets held ahead of a hole (0: a hole is a gap at once)
  TimeNs reorder_ns = 200'000;        // how long the oldest held packet waits for its hole
  std::uint32_t buffer_messages = 65536;  // incrementals buffered for instruments in recovery, all together

  // Largest allowed values: each held packet reserves 64 KiB, each buffered
  // message 72 bytes, and a window longer than a second stalls every
  // instrument behind one lost packet for that long.
  static constexpr std::uint32_t kMaxReorderPackets = 1024;
  static constexpr TimeNs kMaxReorderNs = core::kNsPerSec;
  static constexpr std::uint32_t kMaxBufferMessages = 1u << 24;

  // Throws std::invalid_argument "md consumer: <field>: <problem>".
  void validate() const;
};

// Why an instrument entered recovery.
enum class RecoveryReason : std::uint8_t {
  kLateJoin = 0,          // the consumer started: no book yet
  kSeqJump = 1,           // its instrument_seq jumped (messages lost in a gap)
  kBookReject = 2,        // the book refused one of its messages
  kTopOfBookMismatch = 3, // a TopOfBook differed from the book's best levels
  kAuditMismatch = 4,     // a snapshot of the same moment disagreed (seq or order count)
};
inline constexpr std::size_t kRecoveryReasons = static_cast<std::size_t>(RecoveryReason::kAuditMismatch) + 1;
std::string_view to_string(RecoveryReason r) noexcept;

inline constexpr std::size_t kPacketErrors = static_cast<std::size_t>(proto::PacketError::kCountMismatch) + 1;

// Single writer (the consumer's thread); any thread may read.
struct MdConsumerCounters {
  std::array<core::Counter, 2> packets;  // valid packets by channel (0 incremental, 1 snapshot), heartbeats included
  std::array<core::Counter, 2> heartbeats;  // of which heartbeats
  std::array<core::Counter, kPacketErrors> invalid;  // dropped datagrams by proto::PacketError (kNone unused)
  core::Counter bad_seq;  // valid layout but first_seq 0, or first_seq + count overflows
  core::Counter duplicates;  // incremental packets already applied or already held
  core::Counter snapshot_duplicates;  // snapshot packets already seen
  core::Counter snapshot_channel_restarts;  // the snapshot channel's seq started over (exchange restart)
  core::Counter held;  // incremental packets held ahead of a hole
  core::Counter reordered;  // held packets applied in order once their hole filled
  core::Counter gaps;  // holes given up (window full or expired)
  core::Counter messages_lost;  // global seqs skipped by those gaps
  core::Counter snapshot_gaps;  // holes in the snapshot channel's seq
  core::Counter instrument_seq_jumps;  // live instruments whose next message did not follow on
  core::Counter unknown_instrument;  // messages naming an instrument outside the table (ignored)
  core::Counter skipped_in_snapshot;  // messages the loaded snapshot already reflected
  core::Counter buffered;  // messages buffered for instruments in recovery
  core::Counter buffer_restarts;  // a recovering instrument's buffer lost contiguity and restarted
  core::Counter buffer_overflows;  // a message found the buffer full: its instrument's buffer dropped
  std::array<core::Counter, kRecoveryReasons> recoveries_started;  // by RecoveryReason
  std::array<core::Counter, kRecoveryReasons> recoveries_completed;  // by the reason that started them
  core::Counter snapshots_used;
  core::Counter snapshots_ignored_live;  // complete or not, of an instrument that did not need one
  core::Counter snapshots_too_old;  // did not reach what the buffer misses: wait for a later one
  core::Counter snapshots_incomplete;  // abandoned: a hole in the snapshot channel
  core::Counter snapshots_malformed;  // Start / Order / End that do not agree (abandoned)
  core::Counter snapshots_before_start;  // complete before the incremental channel started (not usable)
  core::Counter snapshots_unloadable;  // more orders than the instrument's capacity, or load() refused
  core::Counter audits;  // live instruments checked against a snapshot of the same moment
  core::Counter audit_mismatches;
  core::Counter book_rejects;  // incremental messages the book refused (by result: books().rejected(),
                               // except trades, checked before they reach it)
  core::Counter top_of_book_mismatches;
  core::Counter replay_failures;  // a buffered message refused after a snapshot load: wait for another
};

// The counters into `file` as "md.*" (by their names in Trader::summary()
// where it had them). Start-up only.
void place_md_consumer_counters(core::CountersFile& file, MdConsumerCounters& c);

}  // namespace nanotick::client
