// The market data ring with real processes' tools: a memfd segment mapped by
// a reader in another process (fork), UNIX sockets and SCM_RIGHTS, kill -9:
// every packet carried, a lapped reader told what it lost, the socket file's
// mode and lifecycle, the readers' cap, a reader that talks on its control
// socket, an exchange that dies under its reader and one that restarts on the
// same path. The attacker's and the hostile exchange's tests are in
// md_ring_hostile_test.cpp. Every wait is bounded (a failing test ends).
#include "unit/ipc/md_ring_test_tools.hpp"

using namespace nanotick::test::md_ring;

namespace {

TEST(MdRing, ShouldCarryEveryPacketToAReaderInAnotherProcess) {
  const std::string path = socket_path("fork");
  ni::MdRingServer server(path, 4096);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  constexpr std::uint64_t kPackets = 3000;  // fewer than the slots: nothing may be lost
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {  // the reader: exit code 0 = every packet, in order, intact
    Sub sub(path);
    if (connect(sub, nullptr) != Sub::Step::kConnected) ::_exit(2);
    const char go = 1;
    if (::write(ready[1], &go, 1) != 1) ::_exit(3);
    std::uint64_t next = 0;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (next < kPackets && std::chrono::steady_clock::now() < deadline) {
      const Sub::Read r = sub.read();
      if (r == Sub::Read::kEmpty) continue;
      if (r != Sub::Read::kPacket) ::_exit(4);
      if (span_bytes(sub.packet()) != packet(next, length_of(next))) ::_exit(5);
      ++next;
    }
    ::_exit(next == kPackets ? 0 : 6);
  }
  char go = 0;
  ASSERT_TRUE(within([&] {
    (void)server.poll_connections();
    pollfd p{ready[0], POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && ::read(ready[0], &go, 1) == 1;
  }));
  EXPECT_EQ(server.readers(), 1u);
  for (std::uint64_t k = 0; k < kPackets; ++k) server.publish(packet(k, length_of(k)));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader exit " << WEXITSTATUS(status);
  EXPECT_EQ(server.packets(), kPackets);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(MdRing, ShouldTellALappedReaderExactlyHowManyPacketsItLost) {
  const std::string path = socket_path("lap");
  ni::MdRingServer server(path, 16);
  Sub sub(path);
  ASSERT_EQ(connect(sub, &server), Sub::Step::kConnected);
  EXPECT_EQ(sub.slots(), 16u);
  for (std::uint64_t k = 0; k < 50; ++k) server.publish(packet(k, length_of(k)));
  ASSERT_EQ(sub.read(), Sub::Read::kLapped);
  EXPECT_EQ(sub.lost(), 50u - 16u);
  for (std::uint64_t k = 34; k < 50; ++k) {
    ASSERT_EQ(sub.read(), Sub::Read::kPacket) << k;
    EXPECT_EQ(span_bytes(sub.packet()), packet(k, length_of(k))) << k;
  }
  EXPECT_EQ(sub.read(), Sub::Read::kEmpty);
  server.publish(packet(99, 10));
  ASSERT_EQ(sub.read(), Sub::Read::kPacket);
  EXPECT_EQ(span_bytes(sub.packet()), packet(99, 10));
}

TEST(MdRing, ShouldStartAReaderAtTheNextPacketPublished) {
  const std::string path = socket_path("next");
  ni::MdRingServer server(path, 16);
  for (std::uint64_t k = 0; k < 5; ++k) server.publish(packet(k, 20));
  Sub sub(path);
  ASSERT_EQ(connect(sub, &server), Sub::Step::kConnected);
  EXPECT_EQ(sub.read(), Sub::Read::kEmpty);
  server.publish(packet(5, 20));
  ASSERT_EQ(sub.read(), Sub::Read::kPacket);
  EXPECT_EQ(span_bytes(sub.packet()), packet(5, 20));
}

TEST(MdRing, ShouldMakeItsSocketOwnerOnlyReplaceAStaleOneAndRemoveItOnExit) {
  const std::string path = socket_path("file");
  const sockaddr_un addr = ni::unix_socket_address(path, "test");
  {  // a killed exchange's socket file: bound, never unlinked
    nn::Fd dead(::socket(AF_UNIX, SOCK_STREAM, 0));
    ASSERT_EQ(::bind(dead.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(dead.get(), 1), 0);
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  {
    ni::MdRingServer server(path, 16);
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // A second exchange on the same path: refused, naming it; the first keeps it.
    try {
      ni::MdRingServer second(path, 16);
      ADD_FAILURE() << "a second server took a live server's path";
    } catch (const nn::SocketError& e) {
      EXPECT_NE(std::string(e.what()).find("market_data.shm_path " + path + " is in use"), std::string::npos)
          << e.what();
    }
    Sub sub(path);
    EXPECT_EQ(connect(sub, &server), Sub::Step::kConnected);
  }
  EXPECT_NE(::stat(path.c_str(), &st), 0) << "the socket file outlived its server";
  // A file that is not a socket is never replaced.
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  EXPECT_THROW(ni::MdRingServer(path, 16), nn::SocketError);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ::unlink(path.c_str());
  // Bad settings are start-up errors naming the key.
  try {
    ni::MdRingServer bad(socket_path("slots"), 1000);
    ADD_FAILURE() << "1000 slots accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("market_data.shm_ring_packets"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ni::MdRingServer(std::string(108, 'x'), 16), std::invalid_argument);
}

TEST(MdRing, ShouldRefuseReadersBeyondItsCapAndLetThemInWhenOneLeaves) {
  const std::string path = socket_path("cap");
  ni::MdRingServer server(path, 16);
  std::vector<std::unique_ptr<Sub>> subs;
  for (std::size_t i = 0; i < ni::MdRingServer::kMaxReaders; ++i) {
    subs.push_back(std::make_unique<Sub>(path));
    ASSERT_EQ(connect(*subs.back(), &server), Sub::Step::kConnected) << i;
  }
  EXPECT_EQ(server.readers(), ni::MdRingServer::kMaxReaders);
  Sub extra(path);
  EXPECT_EQ(connect(extra, &server), Sub::Step::kRefused);
  EXPECT_EQ(extra.refusal(), ni::MdRingRefusal::kClosed);
  EXPECT_EQ(extra.state(), Sub::State::kClosed);
  EXPECT_EQ(server.connections_refused(), 1u);
  subs.front()->close();
  ASSERT_TRUE(within([&] {
    (void)server.poll_connections();
    return server.readers() == ni::MdRingServer::kMaxReaders - 1;
  }));
  EXPECT_EQ(server.readers_gone(), 1u);
  EXPECT_EQ(connect(extra, &server), Sub::Step::kConnected);
  EXPECT_EQ(server.connections_accepted(), ni::MdRingServer::kMaxReaders + 1);
}

TEST(MdRing, ShouldDropAReaderThatTalksOnItsControlSocket) {
  const std::string path = socket_path("talk");
  ni::MdRingServer server(path, 16);
  nn::Fd control(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un addr = ni::unix_socket_address(path, "test");
  ASSERT_EQ(::connect(control.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_TRUE(within([&] {
    (void)server.poll_connections();
    return server.readers() == 1;
  }));
  const char chatter[] = "let me write";
  ASSERT_EQ(::send(control.get(), chatter, sizeof chatter, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof chatter));
  ASSERT_TRUE(within([&] {
    (void)server.poll_connections();
    return server.readers() == 0;
  }));
  EXPECT_EQ(server.readers_misbehaved(), 1u);
  EXPECT_EQ(server.readers_gone(), 0u);
}

// The exchange in a child process: serves one reader, publishes `count`
// packets once it is in, then waits to be killed.
pid_t fork_exchange(const std::string& path, std::uint64_t count) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  try {
    ni::MdRingServer server(path, 64);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (server.readers() == 0 && std::chrono::steady_clock::now() < deadline) (void)server.poll_connections();
    std::this_thread::sleep_for(20ms);  // the reader maps the ring after its hello
    for (std::uint64_t k = 0; k < count; ++k) server.publish(packet(k, length_of(k)));
    for (;;) ::pause();
  } catch (...) {
    ::_exit(7);
  }
}

TEST(MdRing, AReaderShouldSeeItsExchangeKilledAndReadTheNextOneOnTheSamePath) {
  const std::string path = socket_path("kill");
  Child child{fork_exchange(path, 10)};
  const pid_t exchange = child.pid;
  ASSERT_NE(exchange, -1);
  Sub sub(path);
  ASSERT_TRUE(within([&] { return sub.start_connect() == 0; }));
  ASSERT_EQ(connect(sub, nullptr), Sub::Step::kConnected);
  std::uint64_t got = 0;
  ASSERT_TRUE(within([&] {
    if (sub.read() == Sub::Read::kPacket) {
      EXPECT_EQ(span_bytes(sub.packet()), packet(got, length_of(got)));
      ++got;
    }
    return got == 10;
  }));
  EXPECT_FALSE(sub.exchange_gone());
  ASSERT_EQ(::kill(exchange, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(exchange, &status, 0), exchange);
  child.pid = -1;
  ASSERT_TRUE(within([&] { return sub.exchange_gone(); }));
  EXPECT_EQ(sub.read(), Sub::Read::kEmpty);  // the dead ring says nothing new
  sub.close();
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << "kill -9 leaves the socket file";
  EXPECT_NE(sub.start_connect(), 0) << "nobody listens on the dead exchange's file";
  // The next exchange replaces the stale file; the reader maps its new ring.
  ni::MdRingServer next(path, 16);
  ASSERT_EQ(connect(sub, &next), Sub::Step::kConnected);
  EXPECT_EQ(sub.slots(), 16u);
  next.publish(packet(777, 33));
  ASSERT_EQ(sub.read(), Sub::Read::kPacket);
  EXPECT_EQ(span_bytes(sub.packet()), packet(777, 33));
}

}  // namespace
