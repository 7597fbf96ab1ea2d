// Unit tests for incremental_md_key (trading/md_feed.hpp): the telemetry md
// key of a datagram is the first_seq of an incremental packet with messages,
// and 0 for a heartbeat, the snapshot channel, or a datagram shorter than a
// packet header (never read past its end).
#include "client/md_feed.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace np = nanotick::proto;
namespace ntr = nanotick::client;

namespace {

std::vector<std::uint8_t> packet(np::Channel header_channel, std::uint16_t count, std::uint64_t first_seq,
                                 std::size_t extra = 40) {
  np::PacketHeader h{};
  h.length = static_cast<std::uint16_t>(sizeof h + extra);
  h.channel = header_channel;
  h.version = 1;
  h.count = count;
  h.first_seq = first_seq;
  std::vector<std::uint8_t> bytes(sizeof h + extra, 0xAB);
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

TEST(IncrementalMdKey, ShouldBeTheFirstSeqOfAnIncrementalPacketWithMessages) {
  const auto p = packet(np::Channel::kIncremental, 3, 123456789);
  EXPECT_EQ(ntr::incremental_md_key(np::Channel::kIncremental, p), 123456789u);
}

TEST(IncrementalMdKey, ShouldBeZeroForAHeartbeatOrTheSnapshotChannel) {
  EXPECT_EQ(ntr::incremental_md_key(np::Channel::kIncremental, packet(np::Channel::kIncremental, 0, 77, 0)), 0u);
  EXPECT_EQ(ntr::incremental_md_key(np::Channel::kSnapshot, packet(np::Channel::kSnapshot, 2, 77)), 0u);
  // Read on the incremental socket but saying otherwise: not an incremental packet.
  EXPECT_EQ(ntr::incremental_md_key(np::Channel::kIncremental, packet(np::Channel::kSnapshot, 2, 77)), 0u);
}

TEST(IncrementalMdKey, ShouldBeZeroForADatagramShorterThanAHeader) {
  const auto p = packet(np::Channel::kIncremental, 3, 99, 0);
  for (std::size_t n = 0; n < sizeof(np::PacketHeader); ++n)
    EXPECT_EQ(ntr::incremental_md_key(np::Channel::kIncremental, std::span<const std::uint8_t>(p.data(), n)), 0u) << n;
  EXPECT_EQ(ntr::incremental_md_key(np::Channel::kIncremental, std::span<const std::uint8_t>(p)), 99u);
}

}  // namespace
