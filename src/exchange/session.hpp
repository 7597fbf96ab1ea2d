// One order-entry connection's state in the gateway (PROTOCOL.md §1.4): the
// stream, its logon state, both sequence numbers, timers, rate limit and its
// fixed input and output buffers (allocated once per slot, reused for every
// connection the slot carries). Not thread-safe: the gateway's thread owns it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "core/byte_buffer.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/token_bucket.hpp"
#include "net/tcp.hpp"

namespace nanotick::exchange {

// Telemetry (ex_tcp_write, docs/TELEMETRY.md): the answers queued in a
// session's output and not yet written, each with the offset in the
// connection's output stream of its last byte and its two keys, oldest first.
// When the writes pass an answer's end it is stamped. A fixed ring, allocated
// only when the gateway stamps answers; a full ring refuses (the caller counts
// the answer as unstamped). Not thread-safe: the gateway's thread.
class AnswerStamps {
 public:
  // Start-up: room for at least `capacity` answers (a power of two); 0 leaves it disabled.
  void allocate(std::size_t capacity) {
    if (capacity == 0) return;
    std::size_t n = 1;
    while (n < capacity) n <<= 1;
    slots_ = std::make_unique<Slot[]>(n);
    mask_ = n - 1;
  }
  bool enabled() const noexcept { return slots_ != nullptr; }
  bool push(std::uint64_t end, std::uint64_t key, std::uint64_t aux) noexcept {
    if (!enabled() || tail_ - head_ > mask_) return false;
    slots_[tail_++ & mask_] = Slot{end, key, aux};
    return true;
  }
  // Whether the oldest answer's last byte is within the first `written` bytes.
  bool has_written(std::uint64_t written) const noexcept {
    return head_ != tail_ && slots_[head_ & mask_].end <= written;
  }
  // Calls fn(key, aux) for each answer written completely, oldest first, and forgets it.
  template <typename Fn>
  void take_written(std::uint64_t written, Fn&& fn) noexcept {
    while (has_written(written)) {
      const Slot& slot = slots_[head_++ & mask_];
      fn(slot.key, slot.aux);
    }
  }
  // Forgets the answers ending beyond `queued` (dropped unwritten).
  void drop_beyond(std::uint64_t queued) noexcept {
    while (tail_ != head_ && slots_[(tail_ - 1) & mask_].end > queued) --tail_;
  }
  void clear() noexcept { head_ = tail_ = 0; }

 private:
  struct Slot {
    std::uint64_t end;
    std::uint64_t key;
    std::uint64_t aux;
  };
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0;
  std::uint64_t head_ = 0;
  std::uint64_t tail_ = 0;
};

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
  bool output_held_back = false;  // output waits for the kernel's queue to drain below our cap (no EPOLLOUT: see
                                  // OrderGateway::bytes_to_write)
  std::uint64_t kernel_room = 0;  // bytes we may still hand to the kernel before asking it how much it holds
  bool write_shut = false;  // kClosing: our side of the stream is shut
  bool input_blocked = false;  // input waits: sequencer ring full, or our output backed up
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
  std::size_t ready_acks = 0;  // of those, already counted as handed to send()
  // Bytes of `out` written to this connection so far: with out.size(), the
  // stream offset the answer stamps are kept in.
  std::uint64_t out_written = 0;
  AnswerStamps answer_stamps;
};

}  // namespace nanotick::exchange
