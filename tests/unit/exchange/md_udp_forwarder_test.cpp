// MdUdpForwarder (market_data.udp_sender = "aux") over real multicast on
// 127.0.0.1 and a real market data ring: a publisher sharing in with
// ring_only sends no datagram itself; the forwarder sends every packet of the
// ring, byte for byte and in order, heartbeats included; one that was lapped
// counts what it never sent and goes on from the oldest packet left (a
// receiver sees the gap in the sequence numbers); off, it does nothing; and
// forwarding does not allocate. Groups 239.255.78.40-49, kernel-picked ports.
#include "exchange/marketdata/md_udp_forwarder.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exchange/marketdata/md_publisher.hpp"
#include "ipc/md_ring_server.hpp"
#include "ipc/md_ring_subscriber.hpp"
#include "net/udp_multicast.hpp"
#include "proto/md_packet.hpp"
#include "support/allocation_counter.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;
namespace np = nanotick::proto;
namespace ni = nanotick::ipc;

namespace {

using Bytes = std::vector<std::uint8_t>;

// A receiver joined to `group` and the config of a publisher sending there.
struct Group {
  explicit Group(const char* group, std::uint32_t mtu = 256)
      : receiver({nn::parse_ipv4("127.0.0.1"), {nn::parse_ipv4(group), 0}, 1 << 20}) {
    config.interface = "127.0.0.1";
    config.incremental = receiver.local_address().to_string();
    config.ttl = 0;
    config.mtu = mtu;
    config.heartbeat_ms = 60'000;
  }
  // Every datagram that arrives within `wait_ms` of the previous one.
  std::vector<Bytes> received(int wait_ms = 100) {
    std::vector<Bytes> out;
    Bytes buf(65536);
    for (;;) {
      pollfd p{receiver.fd(), POLLIN, 0};
      if (::poll(&p, 1, wait_ms) != 1) return out;
      const nn::RecvResult r = receiver.recv(buf);
      EXPECT_EQ(r.status, nn::RecvStatus::kDatagram);
      if (r.status != nn::RecvStatus::kDatagram) return out;
      out.emplace_back(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(r.bytes));
    }
  }
  nn::UdpMulticastReceiver receiver;
  nx::MarketDataConfig config;
};

ne::MdEvent add(ne::Seq seq) {
  ne::MdEvent e{};
  e.seq = seq;
  e.instrument_seq = seq;
  e.instrument = 1;
  e.type = ne::MdType::kAdd;
  e.side = ne::Side::kBuy;
  e.order_id = seq;
  e.price = 100;
  e.qty = 1;
  return e;
}

std::string socket_path(const char* name) {
  return "/tmp/nt-fwd-" + std::string(name) + "-" + std::to_string(::getpid()) + ".sock";
}

std::uint64_t first_seq(const Bytes& packet) {
  np::PacketHeader h{};
  EXPECT_EQ(np::parse_packet(packet, np::Channel::kIncremental, h), np::PacketError::kNone);
  return h.first_seq;
}

TEST(MdUdpForwarder, ShouldSendEveryPacketOfTheRingInOrderWhileThePublisherSendsNone) {
  Group group("239.255.78.40");
  nx::MdRing snapshots;
  ni::MdRingServer ring(socket_path("order"), 256);
  nx::MdPublisher pub(group.config, snapshots);
  pub.share_in(ring, /*ring_only=*/true);
  nx::MdUdpForwarder forwarder(group.config, &ring);
  ASSERT_TRUE(forwarder.on());
  // An in-process reader beside the forwarder: what the ring holds.
  ni::MdRing::Reader check = ring.make_reader();

  for (ne::Seq s = 1; s <= 100; ++s) {
    pub.on_md(add(s));
    if (s % 9 == 0) pub.flush();
  }
  pub.flush();
  ASSERT_GT(pub.packets(), 10u);
  EXPECT_TRUE(group.received(50).empty()) << "the publisher sent a datagram itself";

  int sent = 0;
  while (const int n = forwarder.do_work()) {
    EXPECT_LE(n, nx::MdUdpForwarder::kPacketsPerWork);
    sent += n;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(sent), pub.packets());
  EXPECT_EQ(forwarder.packets(), pub.packets());
  EXPECT_EQ(forwarder.lost_packets(), 0u);
  EXPECT_EQ(forwarder.send_drops(), 0u);

  const std::vector<Bytes> udp = group.received();
  ASSERT_EQ(udp.size(), pub.packets());
  ni::MdRingPacket record{};
  std::uint64_t next = 1;
  for (const Bytes& datagram : udp) {
    ASSERT_EQ(check.try_read_prefix(record, ni::MdRingPacket::record_bytes).status, ni::MdRing::ReadStatus::kOk);
    EXPECT_EQ(datagram, Bytes(record.packet().begin(), record.packet().end()));
    EXPECT_EQ(first_seq(datagram), next) << "in order, none missing";
    np::PacketHeader h{};
    (void)np::parse_packet(datagram, np::Channel::kIncremental, h);
    next += h.count;
  }
  EXPECT_EQ(next, 101u);
}

TEST(MdUdpForwarder, ShouldCountWhatALappedForwarderNeverSentAndGoOnFromTheOldestLeft) {
  Group group("239.255.78.41");
  nx::MdRing snapshots;
  ni::MdRingServer ring(socket_path("lapped"), 16);
  nx::MdPublisher pub(group.config, snapshots);
  pub.share_in(ring, true);
  nx::MdUdpForwarder forwarder(group.config, &ring);
  for (ne::Seq s = 1; s <= 40; ++s) {  // one packet per event: 40 packets into 16 slots
    pub.on_md(add(s));
    pub.flush();
  }
  ASSERT_EQ(pub.packets(), 40u);
  while (forwarder.do_work() != 0) {
  }
  EXPECT_EQ(forwarder.lost_packets() + forwarder.packets(), 40u) << "every packet counted once";
  EXPECT_GE(forwarder.lost_packets(), 24u);
  const std::vector<Bytes> udp = group.received();
  ASSERT_EQ(udp.size(), forwarder.packets());
  ASSERT_FALSE(udp.empty());
  EXPECT_EQ(first_seq(udp.front()), forwarder.lost_packets() + 1) << "a receiver sees the gap";
  EXPECT_EQ(first_seq(udp.back()), 40u);

  // Caught up: the next packet goes out as usual.
  pub.on_md(add(41));
  pub.flush();
  EXPECT_EQ(forwarder.do_work(), 1);
  const std::vector<Bytes> more = group.received();
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(first_seq(more[0]), 41u);
}

TEST(MdUdpForwarder, ShouldDoNothingWhenOff) {
  Group group("239.255.78.42");
  nx::MdUdpForwarder off(group.config, nullptr);
  EXPECT_FALSE(off.on());
  EXPECT_EQ(off.do_work(), 0);
  EXPECT_TRUE(group.received(20).empty());
}

TEST(MdUdpForwarder, ShouldNotAllocateWhileForwarding) {
  Group group("239.255.78.43");
  nx::MdRing snapshots;
  ni::MdRingServer ring(socket_path("alloc"), 64);
  nx::MdPublisher pub(group.config, snapshots);
  pub.share_in(ring, true);
  nx::MdUdpForwarder forwarder(group.config, &ring);
  const nanotick::test::AllocationScope scope;
  for (ne::Seq s = 1; s <= 200; ++s) {
    pub.on_md(add(s));
    if (s % 5 == 0) pub.flush();
    (void)forwarder.do_work();
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GT(forwarder.packets(), 0u);
}

}  // namespace
