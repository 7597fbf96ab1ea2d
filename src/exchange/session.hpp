// One order-entry connection's state in the gateway (PROTOCOL.md §1.4): the
// stream, its logon state, both sequence numbers, timers, rate limit and its
// fixed input and output buffers (allocated once per slot, reused for every
// connection the slot carries). Not thread-safe: the gateway's thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "core/byte_buffer.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/token_bucket.hpp"
#include "net/tcp.hpp"

namespace nanotick::exchange {

enum class SessionState : std::uint8_t {
  kFree,           // slot unused
  kAwaitingLogon,  // connected, nothing accepted yet
  kActive,         // logged on
  kClosing,        // output flushed then write side shut; draining input until EOF or a deadline
};

struct Session {
  Session(std::size_t slot_index, std::size_t input_bytes, std::size_t output_bytes)
      : index(slot_index), in(input_bytes), out(output_bytes) {}

  const std::size_t index;  // slot number: the epoll token
  net::TcpStream stream;
  SessionState state = SessionState::kFree;
  std::uint16_t generation = 0;  // bumped per connection on this slot (event ids)
  std::uint32_t client_id = 0;
  const ClientConfig* client = nullptr;
  std::uint32_t expected_seq = 1;  // next seq the client must send
  std::uint32_t next_out_seq = 1;  // seq of our next message
  std::uint32_t out_head_rest = 0; // unwritten bytes of `out`'s first message when a write stopped inside it
  std::uint32_t heartbeat_ms = 0;
  std::uint64_t connected_ns = 0;
  std::uint64_t last_in_ns = 0;
  std::uint64_t last_out_ns = 0;
  std::uint64_t close_deadline_ns = 0;  // kClosing: give up waiting for the peer's EOF
  std::uint64_t output_stalled_ns = 0;  // when the socket last took nothing while output waited (0 = draining)
  bool write_interest = false;          // EPOLLOUT registered (output pending)
  bool write_shut = false;              // kClosing: our side of the stream is shut
  bool input_blocked = false;           // input waits: sequencer ring full, or our output backed up
  TokenBucket rate;
  core::ByteBuffer in;
  core::ByteBuffer out;
  // Acknowledgement latency (TCP read -> response written): receive TSC of
  // the last kAckSlots order messages by seq, and the answers waiting in
  // `out` to be written.
  static constexpr std::size_t kAckSlots = 256;
  std::array<std::uint64_t, kAckSlots> received_tsc{};
  std::array<std::uint32_t, kAckSlots> received_seq{};
  std::array<std::uint64_t, kAckSlots> unwritten_ack_tsc{};
  std::size_t unwritten_acks = 0;
};

}  // namespace nanotick::exchange
