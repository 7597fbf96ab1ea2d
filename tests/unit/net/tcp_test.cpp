// TCP on 127.0.0.1 with real sockets: ephemeral listen, connect, partial reads
// and writes under small kernel buffers (8 MiB arrive whole and in order),
// peer close and reset, no SIGPIPE, and the start-up errors (refused, timed
// out, address in use) naming the address and the fix.
#include "net/tcp.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "net/socket_error.hpp"
#include "support/allocation_counter.hpp"

namespace nn = nanotick::net;
using namespace std::chrono_literals;

namespace {

const nn::SocketAddress kAnyLoopbackPort = nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed);

bool wait_for(int fd, short events, int timeout_ms = 2000) {
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

// Accepts the next connection, waiting up to 2 s (a failing test must end).
nn::TcpStream accept_one(nn::TcpListener& listener) {
  EXPECT_TRUE(wait_for(listener.fd(), POLLIN)) << "no connection to accept within 2 s";
  std::optional<nn::TcpStream> s = listener.accept();
  EXPECT_TRUE(s.has_value()) << "accept errors: " << listener.accept_errors();
  return s ? std::move(*s) : nn::TcpStream{};
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

struct Pair {
  nn::TcpListener listener{kAnyLoopbackPort};
  nn::TcpStream client = nn::tcp_connect(listener.local_address(), 2000ms);
  nn::TcpStream server = accept_one(listener);
};

TEST(TcpListener, ShouldReportTheEphemeralPortItBound) {
  nn::TcpListener listener(kAnyLoopbackPort);
  EXPECT_EQ(listener.local_address().ip.to_string(), "127.0.0.1");
  EXPECT_NE(listener.local_address().port, 0);
  EXPECT_FALSE(listener.accept().has_value()) << "nothing pending yet";
  EXPECT_EQ(listener.accept_errors(), 0u);
}

TEST(Tcp, ShouldConnectAcceptAndExchangeBytes) {
  Pair p;
  ASSERT_TRUE(p.client.valid());
  ASSERT_TRUE(p.server.valid());
  EXPECT_EQ(p.client.peer_address(), p.listener.local_address());
  EXPECT_EQ(p.server.peer_address(), p.client.local_address());
  EXPECT_EQ(p.server.local_address(), p.listener.local_address());

  for (const nn::TcpStream* s : {&p.client, &p.server}) {
    int nodelay = 0;
    socklen_t len = sizeof nodelay;
    ASSERT_EQ(::getsockopt(s->fd(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    EXPECT_NE(nodelay, 0) << "TCP_NODELAY must be on";
  }

  std::uint8_t buf[64];
  EXPECT_EQ(p.server.read_some(buf).status, nn::IoStatus::kWouldBlock) << "non-blocking: nothing sent yet";
  const nn::IoResult w = p.client.write_some(bytes_of("logon"));
  EXPECT_EQ(w.status, nn::IoStatus::kOk);
  EXPECT_EQ(w.bytes, 5u);
  ASSERT_TRUE(wait_for(p.server.fd(), POLLIN));
  const nn::IoResult r = p.server.read_some(buf);
  ASSERT_EQ(r.status, nn::IoStatus::kOk);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf), r.bytes), "logon");

  const nn::IoResult empty = p.server.read_some(std::span<std::uint8_t>{});
  EXPECT_EQ(empty.status, nn::IoStatus::kOk) << "an empty buffer is not end of stream";
  EXPECT_EQ(empty.bytes, 0u);
}

// Writes 8 MiB through a small send buffer (and a modest receive buffer: a
// tiny one stalls TCP on zero-window probes), one thread alternating
// non-blocking writes and reads: writes must come back partial and
// would-block, and every byte must arrive once, in order.
TEST(Tcp, ShouldCarryEveryByteInOrderThroughPartialWrites) {
  Pair p;
  EXPECT_GT(p.client.set_send_buffer_bytes(4096), 0);
  EXPECT_GT(p.server.set_receive_buffer_bytes(65536), 0);

  constexpr std::size_t kTotal = 8u << 20;
  std::vector<std::uint8_t> out(kTotal);
  for (std::size_t i = 0; i < kTotal; ++i) out[i] = static_cast<std::uint8_t>((i * 131u) ^ (i >> 11));
  std::vector<std::uint8_t> in;
  in.reserve(kTotal);

  std::size_t written = 0;
  std::size_t partial_writes = 0;
  std::size_t would_block = 0;
  std::uint8_t chunk[3000];  // odd size: reads split writes at arbitrary points
  const auto deadline = std::chrono::steady_clock::now() + 4s;
  while (in.size() < kTotal && std::chrono::steady_clock::now() < deadline) {
    if (written < kTotal) {
      const std::span<const std::uint8_t> rest(out.data() + written, kTotal - written);
      const nn::IoResult w = p.client.write_some(rest);
      ASSERT_TRUE(w.status == nn::IoStatus::kOk || w.status == nn::IoStatus::kWouldBlock)
          << nn::to_string(w.status) << " errno " << w.error;
      if (w.status == nn::IoStatus::kWouldBlock) ++would_block;
      if (w.status == nn::IoStatus::kOk && w.bytes < rest.size()) ++partial_writes;
      written += w.bytes;
    }
    const nn::IoResult r = p.server.read_some(chunk);
    ASSERT_TRUE(r.status == nn::IoStatus::kOk || r.status == nn::IoStatus::kWouldBlock)
        << nn::to_string(r.status) << " errno " << r.error;
    in.insert(in.end(), chunk, chunk + r.bytes);
  }
  ASSERT_EQ(in.size(), kTotal) << "transfer did not finish within 4 s";
  EXPECT_EQ(written, kTotal);
  EXPECT_GT(partial_writes, 0u);
  EXPECT_GT(would_block, 0u);
  EXPECT_TRUE(in == out) << "bytes lost, duplicated or reordered";
}

TEST(Tcp, ShouldReportAnOrderlyPeerCloseAsClosed) {
  Pair p;
  ASSERT_EQ(p.client.write_some(bytes_of("bye")).bytes, 3u);
  p.client.close();
  ASSERT_TRUE(wait_for(p.server.fd(), POLLIN));
  std::uint8_t buf[16];
  const nn::IoResult data = p.server.read_some(buf);
  EXPECT_EQ(data.bytes, 3u) << "data sent before the close is still delivered";
  const nn::IoResult eof = p.server.read_some(buf);
  EXPECT_EQ(eof.status, nn::IoStatus::kClosed);
  EXPECT_EQ(eof.error, 0);
}

TEST(Tcp, ShouldReportAResetPeerAsClosed) {
  Pair p;
  const linger abort_on_close{1, 0};  // close() sends RST
  ASSERT_EQ(::setsockopt(p.client.fd(), SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close), 0);
  p.client.close();
  ASSERT_TRUE(wait_for(p.server.fd(), POLLIN));
  std::uint8_t buf[16];
  const nn::IoResult r = p.server.read_some(buf);
  EXPECT_EQ(r.status, nn::IoStatus::kClosed);
  EXPECT_EQ(r.error, ECONNRESET);
}

// Without MSG_NOSIGNAL the second write would raise SIGPIPE and kill the test.
TEST(Tcp, ShouldReportWritesToAGonePeerAsClosedWithoutSigpipe) {
  Pair p;
  p.client.close();
  ASSERT_TRUE(wait_for(p.server.fd(), POLLIN));
  nn::IoResult w{};
  for (int i = 0; i < 100 && w.status != nn::IoStatus::kClosed; ++i) {
    w = p.server.write_some(bytes_of("are you there?"));  // the first one draws an RST
    ASSERT_NE(w.status, nn::IoStatus::kError) << "errno " << w.error;
    if (w.status != nn::IoStatus::kClosed) (void)wait_for(p.server.fd(), POLLERR | POLLHUP, 100);
  }
  EXPECT_EQ(w.status, nn::IoStatus::kClosed);
  EXPECT_TRUE(w.error == EPIPE || w.error == ECONNRESET) << "errno " << w.error;
}

TEST(Tcp, ShouldNotAllocateOnReadsWritesAndAccepts) {
  Pair p;
  std::uint8_t buf[256] = {};
  const nanotick::test::AllocationScope scope;
  for (int i = 0; i < 100; ++i) {
    (void)p.client.write_some(buf);
    (void)p.server.read_some(buf);
    (void)p.listener.accept();
  }
  EXPECT_EQ(scope.count(), 0u);
}

TEST(TcpConnect, ShouldNameTheAddressWhenRefused) {
  nn::SocketAddress closed_port;
  {
    nn::TcpListener listener(kAnyLoopbackPort);
    closed_port = listener.local_address();
  }  // nothing listens there any more
  try {
    (void)nn::tcp_connect(closed_port, 2000ms);
    FAIL() << "connect to a closed port succeeded";
  } catch (const nn::SocketError& e) {
    EXPECT_EQ(e.code(), std::errc::connection_refused);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot connect to " + closed_port.to_string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is the server running"), std::string::npos) << msg;
  }
}

// A listener whose accept queue is full drops new SYNs, so a further connect
// gets no answer: the timeout must end it with a clear error.
TEST(TcpConnect, ShouldTimeOutWhenTheServerDoesNotAnswer) {
  nn::TcpListener listener(kAnyLoopbackPort, 1);
  std::vector<nn::TcpStream> queued;
  std::string timeout_message;
  for (int i = 0; i < 8 && timeout_message.empty(); ++i) {
    try {
      queued.push_back(nn::tcp_connect(listener.local_address(), 200ms));
    } catch (const nn::SocketError& e) {
      EXPECT_EQ(e.code(), std::errc::timed_out);
      timeout_message = e.what();
    }
  }
  ASSERT_FALSE(timeout_message.empty()) << "every connect succeeded: the accept queue never filled";
  EXPECT_NE(timeout_message.find("cannot connect to " + listener.local_address().to_string()), std::string::npos)
      << timeout_message;
  EXPECT_NE(timeout_message.find("no answer within 200 ms"), std::string::npos) << timeout_message;
}

TEST(TcpConnect, ShouldRejectPortZeroAndANonPositiveTimeout) {
  EXPECT_THROW((void)nn::tcp_connect(kAnyLoopbackPort, 100ms), std::invalid_argument);
  const nn::SocketAddress somewhere = nn::parse_socket_address("127.0.0.1:9");
  EXPECT_THROW((void)nn::tcp_connect(somewhere, 0ms), std::invalid_argument);
}

TEST(TcpListener, ShouldExplainAnAddressInUse) {
  nn::TcpListener first(kAnyLoopbackPort);
  const std::string port = std::to_string(first.local_address().port);
  try {
    nn::TcpListener second(first.local_address());
    FAIL() << "two listeners on one port";
  } catch (const nn::SocketError& e) {
    EXPECT_EQ(e.code(), std::errc::address_in_use);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cannot listen on 127.0.0.1:" + port), std::string::npos) << msg;
    EXPECT_NE(msg.find("Address already in use"), std::string::npos) << msg;
    EXPECT_NE(msg.find("stop that process"), std::string::npos) << msg;
    EXPECT_NE(msg.find("choose another port"), std::string::npos) << msg;
  }
}

TEST(TcpListener, ShouldExplainAnAddressThatIsNotLocal) {
  try {
    nn::TcpListener listener(nn::parse_socket_address("192.0.2.1:0", nn::PortZero::kAllowed));  // TEST-NET-1
    FAIL() << "bound a non-local address";
  } catch (const nn::SocketError& e) {
    EXPECT_EQ(e.code(), std::errc::address_not_available);
    EXPECT_NE(std::string(e.what()).find("is not an address of this host"), std::string::npos) << e.what();
  }
  EXPECT_THROW(nn::TcpListener(kAnyLoopbackPort, 0), std::invalid_argument);
}

}  // namespace
