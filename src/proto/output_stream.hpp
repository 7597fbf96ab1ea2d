// One session's outgoing order-entry stream (both ends: the exchange's
// sessions and the trading client): whole messages queued in a fixed buffer,
// written by the transport as it takes them, with the stream offsets that
// say which messages have left (WrittenStamps) and where the first unwritten
// message boundary is.
//
// Why the boundary: a transport may take part of a message. The rest of that
// message must still go before anything is cut from the stream (a client
// must never read half a message followed by a Logout: PROTOCOL.md §1.5), so
// drop_unwritten() keeps it and whole_messages_within() counts it first.
//
// Offsets count from the start of the connection (reset() at each new one).
// Fixed capacity, allocated once; nothing allocates afterwards. Not
// thread-safe: the session's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/byte_buffer.hpp"
#include "proto/written_stamps.hpp"

namespace nanotick::proto {

class OutputStream {
 public:
  // `stamp_slots`: messages that may wait for their write with a stamp (0: none).
  OutputStream(std::size_t bytes, std::size_t stamp_slots) : out_(bytes) { stamps_.allocate(stamp_slots); }

  // Queues one whole message (its header's length is its size); false when it does not fit.
  template <typename M>
  bool append(const M& m) noexcept {
    return out_.append(&m, sizeof m);
  }
  // The unwritten bytes, oldest first: what the transport writes next.
  std::span<const std::uint8_t> pending() const noexcept { return out_.readable(); }
  bool empty() const noexcept { return out_.empty(); }
  std::size_t size() const noexcept { return out_.size(); }
  std::size_t capacity() const noexcept { return out_.capacity(); }
  // Stream offset just past the last queued byte (where a message queued now ends).
  std::uint64_t queued_end() const noexcept { return written_ + out_.size(); }
  // Bytes written since the connection started.
  std::uint64_t written() const noexcept { return written_; }

  // The transport took the first `n` pending bytes.
  void wrote(std::size_t n) noexcept {
    note_boundary(n);
    out_.consume(n);
    written_ += n;
  }

  // How many of the pending bytes to write so that no more than `room` go and
  // only whole messages start: the rest of a message partly written, then
  // whole messages while they fit. (Never less than that rest: a message
  // started is always finished.)
  std::size_t whole_messages_within(std::uint64_t room) const noexcept {
    const std::span<const std::uint8_t> bytes = out_.readable();
    if (bytes.size() <= room) return bytes.size();
    std::size_t n = head_rest_;
    while (n < bytes.size()) {
      const std::uint16_t length = length_at(bytes, n);
      if (n + length > room) break;
      n += length;
    }
    return n;
  }

  // Drops the messages not yet written, finishing a partly written one first
  // so the reader still reads whole messages; their stamps go too. Returns
  // how many messages were dropped (the caller gives their seqs back).
  std::uint32_t drop_unwritten() noexcept {
    const std::span<const std::uint8_t> bytes = out_.readable();
    std::uint32_t dropped = 0;
    for (std::size_t at = head_rest_; at < bytes.size(); at += length_at(bytes, at)) ++dropped;
    out_.truncate(head_rest_);
    stamps_.drop_beyond(queued_end());
    return dropped;
  }

  // A new connection: nothing queued, offsets from 0.
  void reset() noexcept {
    out_.clear();
    written_ = 0;
    head_rest_ = 0;
    stamps_.clear();
  }
  // The connection is gone: what was not written never will be (stamped
  // messages stay to be taken).
  void discard() noexcept {
    out_.clear();
    head_rest_ = 0;
    stamps_.drop_unstamped();
  }

  WrittenStamps& stamps() noexcept { return stamps_; }
  const WrittenStamps& stamps() const noexcept { return stamps_; }

 private:
  static std::uint16_t length_at(std::span<const std::uint8_t> bytes, std::size_t at) noexcept {
    std::uint16_t length;  // every message starts with its u16 length (PROTOCOL.md §1.1)
    std::memcpy(&length, bytes.data() + at, sizeof length);
    return length;
  }

  // Keeps head_rest_ right after `n` of the pending bytes were written.
  void note_boundary(std::size_t n) noexcept {
    const std::span<const std::uint8_t> bytes = out_.readable();
    if (n == bytes.size()) {  // the usual case: everything went
      head_rest_ = 0;
      return;
    }
    if (n < head_rest_) {
      head_rest_ -= static_cast<std::uint32_t>(n);
      return;
    }
    std::size_t at = head_rest_;  // a message boundary; only whole messages follow it
    while (at < n) at += length_at(bytes, at);
    head_rest_ = static_cast<std::uint32_t>(at - n);
  }

  core::ByteBuffer out_;
  WrittenStamps stamps_;
  std::uint64_t written_ = 0;
  std::uint32_t head_rest_ = 0;  // unwritten bytes of the first pending message when a write stopped inside it
};

}  // namespace nanotick::proto
