#include "proto/md_packet.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::proto {

PacketWriter::PacketWriter(Channel channel, std::size_t mtu)
    : channel_(channel), mtu_(mtu), buffer_(std::make_unique<std::uint8_t[]>(mtu)) {
  if (mtu < kMinMtu || mtu > kMaxMtu)
    throw std::invalid_argument("market data mtu must be in [" + std::to_string(kMinMtu) + ", " +
                                std::to_string(kMaxMtu) + "], got " + std::to_string(mtu));
  if (channel != Channel::kIncremental && channel != Channel::kSnapshot)
    throw std::invalid_argument("market data channel must be 1 (incremental) or 2 (snapshot)");
}

std::span<const std::uint8_t> PacketWriter::finish() noexcept {
  const PacketHeader h{static_cast<std::uint16_t>(used_), channel_, kProtocolVersion, count_, 0, first_seq_};
  std::memcpy(buffer_.get(), &h, sizeof h);
  const std::span<const std::uint8_t> out(buffer_.get(), used_);
  used_ = sizeof(PacketHeader);
  count_ = 0;
  return out;
}

std::span<const std::uint8_t> PacketWriter::heartbeat(std::uint64_t next_seq) noexcept {
  first_seq_ = next_seq;
  return finish();
}

PacketError parse_packet(std::span<const std::uint8_t> datagram, Channel channel, PacketHeader& header) noexcept {
  if (datagram.size() < sizeof(PacketHeader)) return PacketError::kTooShort;
  std::memcpy(&header, datagram.data(), sizeof header);
  if (header.length != datagram.size()) return PacketError::kLengthMismatch;
  if (header.version != kProtocolVersion) return PacketError::kBadVersion;
  if (header.channel != channel) return PacketError::kWrongChannel;
  std::size_t at = sizeof(PacketHeader);
  for (std::uint16_t i = 0; i < header.count; ++i) {
    if (datagram.size() - at < sizeof(MdMsgHeader)) return PacketError::kTruncatedMessage;
    MdMsgHeader mh;
    std::memcpy(&mh, datagram.data() + at, sizeof mh);
    if (!md_type_on_channel(mh.type, channel)) return PacketError::kUnknownMessageType;
    if (mh.length != md_message_length(mh.type)) return PacketError::kBadMessageLength;
    if (datagram.size() - at < mh.length) return PacketError::kTruncatedMessage;
    at += mh.length;
  }
  if (at != datagram.size()) return PacketError::kCountMismatch;
  return PacketError::kNone;
}

std::string_view to_string(PacketError e) noexcept {
  switch (e) {
    case PacketError::kNone: return "none";
    case PacketError::kTooShort: return "shorter than a packet header";
    case PacketError::kLengthMismatch: return "header length differs from the datagram size";
    case PacketError::kBadVersion: return "unsupported version";
    case PacketError::kWrongChannel: return "wrong channel";
    case PacketError::kTruncatedMessage: return "message runs past the end of the packet";
    case PacketError::kBadMessageLength: return "message length differs from its type's";
    case PacketError::kUnknownMessageType: return "unknown message type for this channel";
    case PacketError::kCountMismatch: return "messages do not match the count";
  }
  return "unknown";
}

std::string_view to_string(MdMsgType t) noexcept {
  switch (t) {
    case MdMsgType::kAddOrder: return "AddOrder";
    case MdMsgType::kModifyOrder: return "ModifyOrder";
    case MdMsgType::kDeleteOrder: return "DeleteOrder";
    case MdMsgType::kTrade: return "Trade";
    case MdMsgType::kTopOfBook: return "TopOfBook";
    case MdMsgType::kInstrumentState: return "InstrumentState";
    case MdMsgType::kSnapshotStart: return "SnapshotStart";
    case MdMsgType::kSnapshotOrder: return "SnapshotOrder";
    case MdMsgType::kSnapshotEnd: return "SnapshotEnd";
  }
  return "unknown";
}

}  // namespace nanotick::proto
