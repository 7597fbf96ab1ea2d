// DatagramRing: the dedicated layout's hop from the receiver thread to the
// engine thread. Order, contents and receive stamps survive; a full ring or
// an oversized datagram is dropped and counted, never blocks.
#include "client/datagram_ring.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace nt = nanotick::client;
namespace np = nanotick::proto;

namespace {

struct Collect {
  struct Got {
    np::Channel channel;
    std::vector<std::uint8_t> bytes;
    std::uint64_t rx_tsc;
  };
  std::vector<Got> got;
  void on_datagram(np::Channel c, std::span<const std::uint8_t> b, nt::TimeNs, std::uint64_t rx) {
    got.push_back({c, {b.begin(), b.end()}, rx});
  }
};

TEST(DatagramRing, HandsDatagramsOverInOrderWithTheirChannelAndStamp) {
  nt::DatagramRing ring;
  const std::vector<std::uint8_t> a{1, 2, 3}, b(nt::kMaxDatagramBytes, 7);
  ASSERT_TRUE(ring.push(np::Channel::kIncremental, a, 100));
  ASSERT_TRUE(ring.push(np::Channel::kSnapshot, b, 200));
  Collect c;
  EXPECT_EQ(ring.pop_into(c, 0, 64), 2);
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(c.got[0].channel, np::Channel::kIncremental);
  EXPECT_EQ(c.got[0].bytes, a);
  EXPECT_EQ(c.got[0].rx_tsc, 100u);
  EXPECT_EQ(c.got[1].channel, np::Channel::kSnapshot);
  EXPECT_EQ(c.got[1].bytes, b);
  EXPECT_EQ(ring.pop_into(c, 0, 64), 0);
}

TEST(DatagramRing, DropsAndCountsWhenFullOrTooLong) {
  nt::DatagramRing ring;
  const std::vector<std::uint8_t> one{9};
  for (std::size_t i = 0; i < nt::DatagramRing::kSlots; ++i) ASSERT_TRUE(ring.push(np::Channel::kIncremental, one, i));
  EXPECT_FALSE(ring.push(np::Channel::kIncremental, one, 0));
  EXPECT_EQ(ring.full_drops(), 1u);
  const std::vector<std::uint8_t> big(nt::kMaxDatagramBytes + 1, 1);
  Collect c;
  EXPECT_EQ(ring.pop_into(c, 0, 10), 10);  // at most `max` per call
  EXPECT_FALSE(ring.push(np::Channel::kIncremental, big, 0));
  EXPECT_EQ(ring.too_long(), 1u);
  EXPECT_EQ(c.got[9].rx_tsc, 9u);
}

TEST(DatagramRing, CarriesEveryDatagramAcrossThreads) {
  nt::DatagramRing ring;
  constexpr std::uint64_t kCount = 200'000;
  std::thread producer([&] {
    std::uint8_t bytes[8];
    for (std::uint64_t i = 0; i < kCount;) {
      std::memcpy(bytes, &i, sizeof i);
      if (ring.push(np::Channel::kIncremental, bytes, i)) ++i;  // retry when full
    }
  });
  struct Check {
    std::uint64_t next = 0;
    bool ok = true;
    void on_datagram(np::Channel, std::span<const std::uint8_t> b, nt::TimeNs, std::uint64_t rx) {
      std::uint64_t v;
      std::memcpy(&v, b.data(), sizeof v);
      ok = ok && v == next && rx == next && b.size() == 8;
      ++next;
    }
  } check;
  while (check.next < kCount) (void)ring.pop_into(check, 0, 64);
  producer.join();
  EXPECT_TRUE(check.ok);
}

}  // namespace
