// Building and checking market data packets, docs/PROTOCOL.md §2.1-2.2.
// PacketWriter fills one packet up to the MTU with consecutive messages;
// parse_packet() validates a received datagram completely (header, every
// message's length and type, the count) before anything reads it, so a
// consumer only ever iterates over checked bytes. Not thread-safe: one
// writer/reader per thread; parse_packet is stateless.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "proto/market_data.hpp"

namespace nanotick::proto {

// The longest market data message (every one ends with its u64 instrument_seq).
inline constexpr std::size_t kMaxMdMessageLength =
    std::max({sizeof(MdOrder), sizeof(MdModifyOrder), sizeof(MdDeleteOrder), sizeof(MdTrade), sizeof(MdTopOfBook),
              sizeof(MdSnapshotBound)});
// So a message always fits an empty packet: a writer never has to split one.
static_assert(sizeof(PacketHeader) + kMaxMdMessageLength <= kMinMtu);

class PacketWriter {
 public:
  // Throws std::invalid_argument unless kMinMtu <= mtu <= kMaxMtu.
  PacketWriter(Channel channel, std::size_t mtu);

  bool empty() const noexcept { return count_ == 0; }
  std::uint16_t count() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return used_; }
  std::size_t mtu() const noexcept { return mtu_; }

  // Appends message `m` whose sequence number is `seq` (the first message of
  // a packet sets its first_seq; the others must follow +1). Returns false,
  // changing nothing, if the packet has no room: finish() it and retry.
  template <typename M>
  bool append(const M& m, std::uint64_t seq) noexcept {
    static_assert(sizeof(M) % 8 == 0, "market data messages keep 8-byte alignment");
    if (used_ + sizeof(M) > mtu_) return false;
    if (count_ == 0) first_seq_ = seq;
    std::memcpy(buffer_.get() + used_, &m, sizeof(M));
    used_ += sizeof(M);
    ++count_;
    return true;
  }

  // The finished packet (header filled in); the writer is empty afterwards and
  // the span stays valid until the next append/heartbeat.
  std::span<const std::uint8_t> finish() noexcept;
  // A heartbeat packet announcing `next_seq`. Precondition: empty().
  std::span<const std::uint8_t> heartbeat(std::uint64_t next_seq) noexcept;

 private:
  Channel channel_;
  std::size_t mtu_;
  std::size_t used_ = sizeof(PacketHeader);
  std::uint16_t count_ = 0;
  std::uint64_t first_seq_ = 0;
  std::unique_ptr<std::uint8_t[]> buffer_;
};

enum class PacketError : std::uint8_t {
  kNone = 0,
  kTooShort,            // shorter than a packet header
  kLengthMismatch,      // header length differs from the datagram's size
  kBadVersion,
  kWrongChannel,        // not the channel this socket listens to
  kTruncatedMessage,    // a message header or body runs past the end
  kBadMessageLength,    // a message's length is not its type's fixed length
  kUnknownMessageType,  // unknown type, or a type of the other channel
  kCountMismatch,       // the messages do not add up to count / fill the packet exactly
};
std::string_view to_string(PacketError e) noexcept;

// Validates `datagram` completely as a packet of `channel`. On kNone, `header`
// holds its header and every message in it is safe to read (for_each_message).
PacketError parse_packet(std::span<const std::uint8_t> datagram, Channel channel, PacketHeader& header) noexcept;

// Calls fn(MdMsgType, const std::uint8_t* message, std::uint64_t seq) for each
// message of a packet that parse_packet() accepted.
template <typename Fn>
void for_each_message(std::span<const std::uint8_t> packet, const PacketHeader& header, Fn&& fn) {
  std::size_t at = sizeof(PacketHeader);
  for (std::uint16_t i = 0; i < header.count; ++i) {
    MdMsgHeader mh;
    std::memcpy(&mh, packet.data() + at, sizeof mh);
    fn(mh.type, packet.data() + at, header.first_seq + i);
    at += mh.length;
  }
}

// Copies a message of type M out of a checked packet.
template <typename M>
M read_md(const std::uint8_t* bytes) noexcept {
  M m;
  std::memcpy(&m, bytes, sizeof(M));
  return m;
}

}  // namespace nanotick::proto
