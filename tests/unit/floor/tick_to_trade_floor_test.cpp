// TickToTradeFloor over real sockets on loopback: datagrams sent with
// net::UdpMulticastSender to the floor's group (its own group in
// 239.255.96.0/24, kernel-picked port, interface 127.0.0.1, TTL 0: never
// leaves the host) are each answered with one 64-byte write that the sink
// reads; what queued up before start() is dropped, not counted; the hop
// times are sane; bad set-ups are refused. Every wait is bounded (5 s).
#include "floor/tick_to_trade_floor.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "net/udp_multicast.hpp"
#include "support/wait.hpp"

namespace nf = nanotick::floors;
namespace nn = nanotick::net;
namespace nc = nanotick::core;

namespace {

const nn::Ipv4Address kLoopback = nn::parse_ipv4("127.0.0.1");

nf::TickToTradeFloorSetup setup_for(const char* group, nc::IdleKind idle = nc::IdleKind::backoff) {
  // The sink waits like the peer when it blocks (both asleep in epoll_wait), else backs off.
  return {kLoopback, {nn::parse_ipv4(group), 0},
          idle,      idle == nc::IdleKind::block ? nc::IdleKind::block : nc::IdleKind::backoff,
          -1,        -1};
}

using nanotick::testing::wait_for;

void send(nn::UdpMulticastSender& s, std::size_t bytes, std::uint8_t fill) {
  std::array<std::uint8_t, 1400> d{};
  d.fill(fill);
  ASSERT_TRUE(s.send(std::span<const std::uint8_t>(d.data(), bytes))) << "send failed, errno " << s.last_error();
}

void check_answers_every_datagram(nc::IdleKind idle, const char* group) {
  constexpr std::uint64_t kStale = 3;
  constexpr std::uint64_t kDatagrams = 300;
  nf::TickToTradeFloor floor(setup_for(group, idle));
  ASSERT_NE(floor.group().port, 0);
  nn::UdpMulticastSender sender({kLoopback, floor.group(), 0});
  for (std::uint64_t i = 0; i < kStale; ++i) send(sender, 80, 0xee);  // before start(): not the window's
  floor.start();
  ASSERT_TRUE(wait_for([&] { return floor.recording(); }));
  for (std::uint64_t i = 0; i < kDatagrams; ++i) {
    send(sender, 40 + (i % 10) * 130, static_cast<std::uint8_t>(i));  // 40 .. 1210 bytes
    if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(wait_for([&] { return floor.live().count() >= kDatagrams; }))
      << "answered " << floor.live().count() << " of " << kDatagrams;
  floor.stop();
  const nf::TickToTradeFloorResult& r = floor.result();
  EXPECT_EQ(floor.failure(), nullptr);
  EXPECT_EQ(r.datagrams, kDatagrams) << "the stale datagrams were counted, or some were lost";
  EXPECT_EQ(r.hop_ns.count(), kDatagrams);
  EXPECT_EQ(r.bytes_sunk, kDatagrams * nf::TickToTradeFloor::kOrderBytes) << "the sink must read 64 B per datagram";
  EXPECT_EQ(r.short_writes, 0u);
  EXPECT_EQ(r.write_errors, 0u);
  EXPECT_EQ(r.sink_errors, 0u);
  EXPECT_EQ(r.recv_errors, 0u);
  EXPECT_EQ(r.truncated, 0u);
  // Times taken by the clock, not made up: above zero, far below a second
  // (no tighter bound: tests assert behaviour, not speed).
  EXPECT_GT(r.hop_ns.min(), 0u);
  EXPECT_LT(r.hop_ns.percentile(50), 1'000'000u);
  EXPECT_LT(r.hop_ns.max(), 1'000'000'000u);
  EXPECT_GT(r.seconds, 0.0);
  EXPECT_EQ(floor.live().count(), kDatagrams);
  EXPECT_EQ(floor.live().p50_ns(), r.hop_ns.percentile(50)) << "the last publish is the final histogram's";
}

TEST(TickToTradeFloor, AnswersEveryDatagramWithOneOrderTheSinkReadsBackoff) {
  check_answers_every_datagram(nc::IdleKind::backoff, "239.255.96.1");
}

TEST(TickToTradeFloor, AnswersEveryDatagramWithOneOrderTheSinkReadsSpin) {
  check_answers_every_datagram(nc::IdleKind::spin, "239.255.96.2");
}

TEST(TickToTradeFloor, AnswersEveryDatagramWithOneOrderTheSinkReadsBlock) {
  check_answers_every_datagram(nc::IdleKind::block, "239.255.96.6");
}

TEST(TickToTradeFloor, NothingSentNothingCounted) {
  nf::TickToTradeFloor floor(setup_for("239.255.96.3"));
  floor.start();
  ASSERT_TRUE(wait_for([&] { return floor.recording(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  floor.stop();
  EXPECT_EQ(floor.result().datagrams, 0u);
  EXPECT_EQ(floor.result().hop_ns.count(), 0u);
  EXPECT_EQ(floor.result().bytes_sunk, 0u);
  floor.stop();  // idempotent
}

TEST(TickToTradeFloor, BadSetupsAreRefused) {
  EXPECT_THROW(nf::TickToTradeFloor(setup_for("127.0.0.9")), std::invalid_argument);  // not a group
  nf::TickToTradeFloor floor(setup_for("239.255.96.5"));
  floor.start();
  EXPECT_THROW(floor.start(), std::logic_error);
}

}  // namespace
