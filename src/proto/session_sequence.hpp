// A session's sequence numbers both ways (PROTOCOL.md §1.4 rules 6-7): each
// side numbers its messages from 1 per connection, and the receiver expects
// exactly the next one. What a gap or a repeat costs differs by end (the
// exchange rejects the message and keeps the session; the trading client
// logs out and reconnects); the numbering does not. Not thread-safe.
#pragma once

#include <cstdint>

namespace nanotick::proto {

enum class SeqCheck : std::uint8_t {
  kExpected,  // the next one: process it, then accept()
  kGap,       // beyond the next one: some were never received
  kRepeat,    // before the next one: already received
};

class SessionSequence {
 public:
  // A new connection: both sides start at 1.
  void reset() noexcept { next_out_ = expected_in_ = 1; }

  SeqCheck check(std::uint32_t seq) const noexcept {
    return seq == expected_in_ ? SeqCheck::kExpected : seq > expected_in_ ? SeqCheck::kGap : SeqCheck::kRepeat;
  }
  // The expected message was consumed (processed or rejected by content).
  void accept() noexcept { ++expected_in_; }
  std::uint32_t expected_in() const noexcept { return expected_in_; }

  // The seq our next message carries; sent() once it is queued.
  std::uint32_t next_out() const noexcept { return next_out_; }
  void sent() noexcept { ++next_out_; }
  // `n` queued messages were dropped unwritten: their seqs go to the next ones.
  void unsend(std::uint32_t n) noexcept { next_out_ -= n; }

 private:
  std::uint32_t next_out_ = 1;
  std::uint32_t expected_in_ = 1;
};

}  // namespace nanotick::proto
