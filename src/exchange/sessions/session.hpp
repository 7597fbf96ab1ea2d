// One order-entry connection's state in the gateway (PROTOCOL.md §1.4): the
// stream (TCP or shared memory: the link), its logon state, rate limit and fixed input buffer, and the session
// core both ends of order entry share (proto/: sequence numbers, the
// heartbeat and silence rule, the framed output stream with its written
// stamps). Allocated once per slot, reused for every connection the slot
// carries. Not thread-safe: the gateway's thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "core/byte_buffer.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/sessions/token_bucket.hpp"
#include "ipc/stream_link.hpp"
#include "proto/output_stream.hpp"
#include "proto/session_liveness.hpp"
#include "proto/session_sequence.hpp"

namespace nanotick::exchange {

enum class SessionState : std::uint8_t {
  kFree,           // slot unused
  kAwaitingLogon,  // connected, nothing accepted yet
  kActive,         // logged on
  kClosing,        // output flushed then write side shut; draining input until EOF or a deadline
};

struct Session {
  // Answers that may wait for their write with a stamp pending, at least:
  // every first answer waits there with its ack latency's start (the receive
  // TSC its report brought back, OrderGateway::on_report).
  static constexpr std::size_t kMinStampSlots = 256;

  // `stamp_slots`: answers that may wait for their write with a stamp
  // pending (raised to kMinStampSlots).
  Session(std::size_t slot_index, std::size_t input_bytes, std::size_t output_bytes, std::size_t stamp_slots)
      : index(slot_index),
        in(input_bytes),
        out(output_bytes, stamp_slots < kMinStampSlots ? kMinStampSlots : stamp_slots) {}

  const std::size_t index;  // slot number: the epoll token
  ipc::StreamLink link;
  SessionState state = SessionState::kFree;
  std::uint16_t generation = 0;  // bumped per connection on this slot (event ids)
  std::uint32_t client_id = 0;
  const ClientConfig* client = nullptr;
  proto::SessionSequence seq;
  proto::SessionLiveness liveness;
  std::uint64_t close_deadline_ns = 0;  // kClosing: give up waiting for the peer's EOF
  // When the first byte of the message now incomplete in `in` was read (0:
  // none is). Kept per read, not per message: run_timers closes the session
  // once it is older than partial_message_timeout_ms.
  std::uint64_t partial_since_ns = 0;
  std::uint64_t output_stalled_ns = 0;  // when the socket last took nothing while output waited (0 = draining)
  bool write_interest = false;          // EPOLLOUT registered (output pending)
  bool output_held_back = false;  // output waits for the kernel's queue to drain below our cap (no EPOLLOUT: see
                                  // OrderGateway::bytes_to_write)
  std::uint64_t kernel_room = 0;  // bytes we may still hand to the kernel before asking it how much it holds
  bool write_shut = false;  // kClosing: our side of the stream is shut
  bool input_blocked = false;  // input waits: sequencer ring full, or our output backed up
  bool first_after_logon = false;  // no message since the LogonAck yet: a ReportsRequest may come (§1.8)
  TokenBucket rate;
  core::ByteBuffer in;
  // Answers, each waiting in `out.stamps()` for its write with its
  // recipient's key, its cause's and, for an order's first answer, the
  // order's receive TSC (ack latency).
  proto::OutputStream out;
};

}  // namespace nanotick::exchange
