// EpollPoller with real loopback sockets: tokens come back with readiness,
// level- versus edge-triggered reporting, modify/remove, the fixed event array
// (more ready sockets than slots) and no allocation per wait.
#include "net/epoll.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "net/tcp.hpp"
#include "support/allocation_counter.hpp"

namespace nn = nanotick::net;
using namespace std::chrono_literals;

namespace {

const nn::SocketAddress kAnyLoopbackPort = nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed);
constexpr int kWaitMs = 2000;  // bounds every blocking wait, so a broken poller fails instead of hanging

// A connected pair; the server side is accepted once the poller says so.
struct Connection {
  nn::TcpStream client;
  nn::TcpStream server;
};

Connection connect(nn::TcpListener& listener) {
  Connection c;
  c.client = nn::tcp_connect(listener.local_address(), 2000ms);
  for (int i = 0; i < 200 && !c.server.valid(); ++i) {
    if (std::optional<nn::TcpStream> s = listener.accept()) c.server = std::move(*s);
    else std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(c.server.valid()) << "no connection accepted within 2 s";
  return c;
}

void send_byte(nn::TcpStream& s) {
  const std::uint8_t b = 0x5A;
  ASSERT_EQ(s.write_some({&b, 1}).bytes, 1u);
}

std::set<std::uint64_t> tokens(std::span<const nn::ReadyEvent> events) {
  std::set<std::uint64_t> out;
  for (const nn::ReadyEvent& e : events) out.insert(e.token);
  return out;
}

TEST(EpollPoller, ShouldReturnNothingWhenNothingIsReady) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  ASSERT_FALSE(poller.add(listener.fd(), nn::Interest::kRead, 1));
  EXPECT_TRUE(poller.wait(0).empty());
  EXPECT_TRUE(poller.wait(20).empty());
}

TEST(EpollPoller, ShouldReportAPendingConnectionWithItsToken) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  constexpr std::uint64_t kToken = 0xABCD'0000'0000'0001ull;
  ASSERT_FALSE(poller.add(listener.fd(), nn::Interest::kRead, kToken));
  const nn::TcpStream client = nn::tcp_connect(listener.local_address(), 2000ms);
  const auto ready = poller.wait(kWaitMs);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].token, kToken);
  EXPECT_TRUE(ready[0].readable());
  EXPECT_TRUE(listener.accept().has_value());
}

TEST(EpollPoller, ShouldKeepReportingUnreadInputWhenLevelTriggered) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  Connection c = connect(listener);
  ASSERT_FALSE(poller.add(c.server.fd(), nn::Interest::kRead, 42));
  send_byte(c.client);
  ASSERT_EQ(poller.wait(kWaitMs).size(), 1u);
  const auto again = poller.wait(0);
  ASSERT_EQ(again.size(), 1u) << "level-triggered: still readable while unread";
  EXPECT_EQ(again[0].token, 42u);
  std::uint8_t buf[8];
  ASSERT_EQ(c.server.read_some(buf).bytes, 1u);
  EXPECT_TRUE(poller.wait(0).empty()) << "drained: no longer readable";
}

TEST(EpollPoller, ShouldReportOncePerChangeWhenEdgeTriggered) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  Connection c = connect(listener);
  ASSERT_FALSE(poller.add(c.server.fd(), nn::Interest::kRead, 9, nn::Trigger::kEdge));
  send_byte(c.client);
  ASSERT_EQ(poller.wait(kWaitMs).size(), 1u);
  EXPECT_TRUE(poller.wait(0).empty()) << "edge-triggered: reported once although unread";
  send_byte(c.client);
  const auto ready = poller.wait(kWaitMs);
  ASSERT_EQ(ready.size(), 1u) << "new input is a new edge";
  EXPECT_EQ(ready[0].token, 9u);
}

TEST(EpollPoller, ShouldFollowModifyAndRemove) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  Connection c = connect(listener);
  ASSERT_FALSE(poller.add(c.server.fd(), nn::Interest::kRead, 1));
  EXPECT_TRUE(poller.wait(0).empty());

  ASSERT_FALSE(poller.modify(c.server.fd(), nn::Interest::kWrite, 2));
  auto ready = poller.wait(kWaitMs);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].token, 2u);
  EXPECT_TRUE(ready[0].writable());
  EXPECT_FALSE(ready[0].readable());

  ASSERT_FALSE(poller.modify(c.server.fd(), nn::Interest::kRead, 3));
  EXPECT_TRUE(poller.wait(0).empty()) << "no longer interested in writable";
  send_byte(c.client);
  ready = poller.wait(kWaitMs);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].token, 3u) << "the token given to modify";

  ASSERT_FALSE(poller.remove(c.server.fd()));
  EXPECT_TRUE(poller.wait(0).empty()) << "removed: unread input no longer reported";
}

TEST(EpollPoller, ShouldReturnTheErrnoOfAFailedRegistration) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  ASSERT_FALSE(poller.add(listener.fd(), nn::Interest::kRead, 1));
  EXPECT_EQ(poller.add(listener.fd(), nn::Interest::kRead, 1), std::errc::file_exists);
  ASSERT_FALSE(poller.remove(listener.fd()));
  EXPECT_EQ(poller.remove(listener.fd()), std::errc::no_such_file_or_directory);
  EXPECT_EQ(poller.modify(listener.fd(), nn::Interest::kRead, 1), std::errc::no_such_file_or_directory);
  EXPECT_EQ(poller.add(-1, nn::Interest::kRead, 1), std::errc::bad_file_descriptor);
}

TEST(EpollPoller, ShouldReportAPeerCloseAsReadable) {
  nn::EpollPoller poller(8);
  nn::TcpListener listener(kAnyLoopbackPort);
  Connection c = connect(listener);
  ASSERT_FALSE(poller.add(c.server.fd(), nn::Interest::kRead, 5));
  c.client.close();
  const auto ready = poller.wait(kWaitMs);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_TRUE(ready[0].readable());
  std::uint8_t buf[8];
  EXPECT_EQ(c.server.read_some(buf).status, nn::IoStatus::kClosed);
}

// Three ready sockets, two slots: each wait returns at most two, and the
// third is not lost: it comes on the next wait.
TEST(EpollPoller, ShouldHandOutMoreReadySocketsThanSlotsOverSeveralWaits) {
  nn::EpollPoller poller(2);
  nn::TcpListener listener(kAnyLoopbackPort);
  std::vector<Connection> conns;
  for (std::uint64_t token = 1; token <= 3; ++token) {
    conns.push_back(connect(listener));
    ASSERT_FALSE(poller.add(conns.back().server.fd(), nn::Interest::kRead, token));
    send_byte(conns.back().client);
  }
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 200 && seen.size() < 3; ++i) {
    const auto ready = poller.wait(10);
    ASSERT_LE(ready.size(), 2u);
    for (const nn::ReadyEvent& e : ready) {
      seen.insert(e.token);
      std::uint8_t buf[8];
      (void)conns[e.token - 1].server.read_some(buf);  // drain, so the others get their turn
    }
  }
  EXPECT_EQ(seen, (std::set<std::uint64_t>{1, 2, 3}));
}

TEST(EpollPoller, ShouldNotAllocatePerWait) {
  nn::EpollPoller poller(16);
  nn::TcpListener listener(kAnyLoopbackPort);
  Connection c = connect(listener);
  ASSERT_FALSE(poller.add(c.server.fd(), nn::Interest::kReadWrite, 1));
  const nanotick::test::AllocationScope scope;
  std::size_t events = 0;
  for (int i = 0; i < 100; ++i) events += poller.wait(0).size();
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_EQ(events, 100u);
  EXPECT_EQ(tokens(poller.wait(0)), (std::set<std::uint64_t>{1}));
}

TEST(EpollPoller, ShouldRejectAnEventArrayOutsideItsBounds) {
  EXPECT_THROW(nn::EpollPoller(0), std::invalid_argument);
  EXPECT_THROW(nn::EpollPoller(nn::EpollPoller::kMaxEventsLimit + 1), std::invalid_argument);
  EXPECT_EQ(nn::EpollPoller(1).max_events(), 1u);
}

}  // namespace
