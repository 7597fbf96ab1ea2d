// UDP multicast on 127.0.0.1 with TTL 0 (never leaves the host): delivery,
// order within a burst, several receivers per group, group filtering on a
// shared port, truncated datagram detection, config validation and no
// allocation per send/recv. Each test uses its own group in 239.255.77.0/24
// and a kernel-picked port, so parallel runs do not hear each other.
#include "net/udp_multicast.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/socket_error.hpp"
#include "support/allocation_counter.hpp"

namespace nn = nanotick::net;

namespace {

const nn::Ipv4Address kLoopback = nn::parse_ipv4("127.0.0.1");

nn::SocketAddress group(const char* ip, std::uint16_t port = 0) { return {nn::parse_ipv4(ip), port}; }

nn::UdpMulticastSender sender_to(const nn::UdpMulticastReceiver& r) {
  return nn::UdpMulticastSender({kLoopback, r.local_address(), 0});
}

// The next datagram, waiting up to 2 s for it (a failing test must end).
nn::RecvResult receive(nn::UdpMulticastReceiver& r, std::span<std::uint8_t> buffer) {
  pollfd p{r.fd(), POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) return {};
  return r.recv(buffer);
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string text_of(std::span<const std::uint8_t> b, std::size_t n) {
  return {reinterpret_cast<const char*>(b.data()), n};
}

TEST(UdpMulticast, ShouldDeliverOnLoopbackWithTtlZero) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.1"), 1 << 20});
  ASSERT_NE(receiver.local_address().port, 0);
  EXPECT_EQ(receiver.local_address().ip.to_string(), "239.255.77.1");
  nn::UdpMulticastSender sender = sender_to(receiver);
  EXPECT_EQ(sender.local_address().ip, kLoopback);
  EXPECT_EQ(sender.group(), receiver.local_address());

  std::uint8_t buf[64];
  EXPECT_EQ(receiver.recv(buf).status, nn::RecvStatus::kNothing) << "non-blocking: nothing sent yet";
  ASSERT_TRUE(sender.send(bytes_of("tick 1")));
  const nn::RecvResult r = receive(receiver, buf);
  ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
  EXPECT_EQ(r.bytes, 6u);
  EXPECT_EQ(r.datagram_bytes, 6u);
  EXPECT_EQ(text_of(buf, r.bytes), "tick 1");
  EXPECT_EQ(sender.sent(), 1u);
  EXPECT_EQ(receiver.received(), 1u);
  EXPECT_EQ(receiver.recv(buf).status, nn::RecvStatus::kNothing);
}

TEST(UdpMulticast, ShouldDeliverABurstCompleteAndInOrder) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.2"), 1 << 20});
  nn::UdpMulticastSender sender = sender_to(receiver);
  constexpr std::uint32_t kCount = 200;
  std::vector<std::uint8_t> packet(1400);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    std::memcpy(packet.data(), &i, sizeof i);
    ASSERT_TRUE(sender.send(packet)) << "datagram " << i << ", errno " << sender.last_error();
  }
  std::vector<std::uint8_t> buf(2048);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const nn::RecvResult r = receive(receiver, buf);
    ASSERT_EQ(r.status, nn::RecvStatus::kDatagram) << "datagram " << i;
    ASSERT_EQ(r.bytes, packet.size());
    std::uint32_t seq = 0;
    std::memcpy(&seq, buf.data(), sizeof seq);
    ASSERT_EQ(seq, i);
  }
}

TEST(UdpMulticast, ShouldDetectADatagramLargerThanTheBuffer) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.3"), 1 << 20});
  nn::UdpMulticastSender sender = sender_to(receiver);
  std::vector<std::uint8_t> big(1000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i);
  ASSERT_TRUE(sender.send(big));
  ASSERT_TRUE(sender.send(bytes_of("next")));

  std::uint8_t small[100];
  const nn::RecvResult r = receive(receiver, small);
  EXPECT_EQ(r.status, nn::RecvStatus::kTruncated);
  EXPECT_EQ(r.bytes, sizeof small);
  EXPECT_EQ(r.datagram_bytes, 1000u);
  EXPECT_EQ(std::memcmp(small, big.data(), sizeof small), 0);
  EXPECT_EQ(receiver.truncated(), 1u);

  const nn::RecvResult next = receive(receiver, small);
  ASSERT_EQ(next.status, nn::RecvStatus::kDatagram) << "the truncated datagram was consumed, the next one is whole";
  EXPECT_EQ(text_of(small, next.bytes), "next");
}

TEST(UdpMulticast, ShouldTellAnEmptyDatagramFromNothing) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.4"), 1 << 20});
  nn::UdpMulticastSender sender = sender_to(receiver);
  ASSERT_TRUE(sender.send({}));
  std::uint8_t buf[16];
  const nn::RecvResult r = receive(receiver, buf);
  EXPECT_EQ(r.status, nn::RecvStatus::kDatagram);
  EXPECT_EQ(r.bytes, 0u);
}

TEST(UdpMulticast, ShouldGiveEveryReceiverOfTheGroupItsOwnCopy) {
  nn::UdpMulticastReceiver first({kLoopback, group("239.255.77.5"), 1 << 20});
  nn::UdpMulticastReceiver second({kLoopback, first.local_address(), 1 << 20});
  EXPECT_EQ(second.local_address(), first.local_address());
  nn::UdpMulticastSender sender = sender_to(first);
  ASSERT_TRUE(sender.send(bytes_of("both")));
  for (nn::UdpMulticastReceiver* r : {&first, &second}) {
    std::uint8_t buf[16];
    const nn::RecvResult got = receive(*r, buf);
    ASSERT_EQ(got.status, nn::RecvStatus::kDatagram);
    EXPECT_EQ(text_of(buf, got.bytes), "both");
  }
}

// Two groups on one port (as a feed's incremental and snapshot channels could
// be): each receiver hears only its own group.
TEST(UdpMulticast, ShouldHearOnlyItsOwnGroupOnASharedPort) {
  nn::UdpMulticastReceiver a({kLoopback, group("239.255.77.6"), 1 << 20});
  const std::uint16_t port = a.local_address().port;
  nn::UdpMulticastReceiver b({kLoopback, group("239.255.77.7", port), 1 << 20});
  nn::UdpMulticastSender to_a = sender_to(a);
  nn::UdpMulticastSender to_b = sender_to(b);
  ASSERT_TRUE(to_b.send(bytes_of("for b")));  // first: a would see it before its own if not filtered
  ASSERT_TRUE(to_a.send(bytes_of("for a")));
  std::uint8_t buf[16];
  nn::RecvResult r = receive(a, buf);
  ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
  EXPECT_EQ(text_of(buf, r.bytes), "for a");
  r = receive(b, buf);
  ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
  EXPECT_EQ(text_of(buf, r.bytes), "for b");
  EXPECT_EQ(a.recv(buf).status, nn::RecvStatus::kNothing);
  EXPECT_EQ(b.recv(buf).status, nn::RecvStatus::kNothing);
}

TEST(UdpMulticast, ShouldReportTheReceiveBufferTheKernelGranted) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.8"), 256 * 1024});
  EXPECT_EQ(receiver.receive_buffer_requested(), 256 * 1024);
  // Linux doubles the request for its bookkeeping; a cap (rmem_max) may lower it.
  EXPECT_GT(receiver.receive_buffer_granted(), 0);
  EXPECT_LE(receiver.receive_buffer_granted(), 2 * 256 * 1024);
}

TEST(UdpMulticast, ShouldNotAllocatePerSendOrReceive) {
  nn::UdpMulticastReceiver receiver({kLoopback, group("239.255.77.9"), 1 << 20});
  nn::UdpMulticastSender sender = sender_to(receiver);
  std::uint8_t buf[256] = {};
  std::size_t received = 0;
  const nanotick::test::AllocationScope scope;
  for (int i = 0; i < 50; ++i) {
    (void)sender.send(buf);
    received += receiver.recv(buf).status == nn::RecvStatus::kDatagram ? 1 : 0;
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(sender.sent(), 50u);
  EXPECT_GT(received, 0u);
}

template <typename Fn>
std::string invalid_argument_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(UdpMulticastSender, ShouldRejectABadConfigNamingTheProblem) {
  const nn::SocketAddress g = group("239.255.77.10", 9300);
  EXPECT_NE(invalid_argument_of([&] {
              nn::UdpMulticastSender s({kLoopback, g, -1});
            }).find("ttl must be 0..255"),
            std::string::npos);
  EXPECT_NE(invalid_argument_of([&] {
              nn::UdpMulticastSender s({kLoopback, g, 256});
            }).find("got 256"),
            std::string::npos);
  const std::string unicast = invalid_argument_of([&] {
    nn::UdpMulticastSender s({kLoopback, group("10.0.0.1", 9300), 0});
  });
  EXPECT_NE(unicast.find("10.0.0.1:9300 is not a multicast group"), std::string::npos) << unicast;
  EXPECT_NE(invalid_argument_of([&] {
              nn::UdpMulticastSender s({kLoopback, group("239.255.77.10"), 0});
            }).find("port"),
            std::string::npos);
  EXPECT_NE(invalid_argument_of([&] {
              nn::UdpMulticastSender s({nn::parse_ipv4("239.1.1.1"), g, 0});
            }).find("interface 239.1.1.1 is a multicast address"),
            std::string::npos);
  nn::UdpMulticastSender ok({kLoopback, g, 255});
  EXPECT_NE(ok.fd(), -1);
}

TEST(UdpMulticastSender, ShouldExplainAnInterfaceThatIsNotLocal) {
  try {
    nn::UdpMulticastSender s({nn::parse_ipv4("192.0.2.1"), group("239.255.77.11", 9300), 0});  // TEST-NET-1
    FAIL() << "bound to a non-local interface";
  } catch (const nn::SocketError& e) {
    EXPECT_NE(std::string(e.what()).find("192.0.2.1 is not an address of this host"), std::string::npos) << e.what();
  }
}

TEST(UdpMulticastReceiver, ShouldRejectABadConfigNamingTheProblem) {
  const std::string unicast = invalid_argument_of([] {
    nn::UdpMulticastReceiver r({kLoopback, group("127.0.0.1", 9300), 1 << 20});
  });
  EXPECT_NE(unicast.find("127.0.0.1:9300 is not a multicast group"), std::string::npos) << unicast;
  EXPECT_NE(invalid_argument_of([] {
              nn::UdpMulticastReceiver r({kLoopback, group("239.255.77.12"), 0});
            }).find("SO_RCVBUF must be > 0"),
            std::string::npos);
  try {
    nn::UdpMulticastReceiver r({nn::parse_ipv4("192.0.2.1"), group("239.255.77.12"), 1 << 20});
    FAIL() << "joined on a non-local interface";
  } catch (const nn::SocketError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot join the group"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("192.0.2.1 is not an address of this host"), std::string::npos) << e.what();
  }
}

}  // namespace
