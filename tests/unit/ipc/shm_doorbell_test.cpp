// Doorbells of shared-memory order-entry sessions (ipc/shm_stream.hpp): a
// reader asleep in a BlockingIdle that watches its control socket (the
// "block" idle strategy) wakes within milliseconds of the peer's publish, in
// another process too, though its sleep's timeout is 5 s; a writer rings no
// doorbell while the reader is awake or polls, and one per sleep however many
// writes it makes; a peer that lies about its word or never reads its
// doorbell costs a system call per write at most, never a blocked write or a
// stuck reader. Timing assertions are generous upper bounds far below the
// sleep's timeout.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/idle_strategy.hpp"
#include "ipc/fd_passing.hpp"
#include "ipc/shm_listener.hpp"
#include "ipc/shm_segment.hpp"
#include "ipc/shm_session_layout.hpp"
#include "ipc/shm_stream.hpp"

namespace nc = nanotick::core;
namespace ni = nanotick::ipc;
namespace nn = nanotick::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kSleepTimeout = 5s;  // the sleeper's timeout: a wake-up must come long before it
constexpr auto kWokeWithin = 1s;    // generous on a loaded 2-core machine, far below the timeout

std::string socket_path(const char* tag) {
  static int serial = 0;
  return "/tmp/nt-bell-" + std::to_string(::getpid()) + "-" + tag + "-" + std::to_string(++serial) + ".sock";
}

std::optional<ni::ShmStream> accept_within(ni::ShmListener& l) {
  const auto deadline = Clock::now() + 2s;
  while (Clock::now() < deadline) {
    if (auto s = l.accept()) return s;
    std::this_thread::sleep_for(100us);
  }
  return std::nullopt;
}

struct Session {
  ni::ShmStream exchange;
  ni::ShmStream client;
};

Session connect_pair(ni::ShmListener& l) {
  Session s;
  std::thread t([&] { s.client = ni::shm_connect(l.path(), 2000ms); });
  auto ex = accept_within(l);
  t.join();
  EXPECT_TRUE(ex.has_value());
  if (ex) s.exchange = std::move(*ex);
  return s;
}

bool readable_now(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

const std::vector<std::uint8_t> kMessage{1, 2, 3, 4, 5, 6, 7, 8};

// `sleeper` arms its doorbell and sleeps (5 s timeout) on its control socket
// while `writer` publishes after `delay` from another thread; returns how
// long after the publish it woke.
Clock::duration sleep_until_written(ni::ShmStream& sleeper, ni::ShmStream& writer, std::chrono::milliseconds delay) {
  nc::BlockingIdle idle(kSleepTimeout);
  const int fd = sleeper.fd();
  idle.watch({&fd, 1});
  sleeper.enable_doorbell();
  EXPECT_FALSE(sleeper.arm_doorbell()) << "nothing published yet";
  std::atomic<std::int64_t> written_at{0};
  std::thread t([&] {
    std::this_thread::sleep_for(delay);
    written_at.store(Clock::now().time_since_epoch().count());
    EXPECT_EQ(writer.write_some(kMessage).bytes, kMessage.size());
  });
  const auto start = Clock::now();
  do {
    (void)idle.wait();
  } while (!sleeper.input_pending() && Clock::now() - start < 2 * kSleepTimeout);
  const auto woke = Clock::now();
  t.join();
  sleeper.disarm_doorbell();
  std::vector<std::uint8_t> buf(64);
  const nn::IoResult r = sleeper.read_some(buf);
  EXPECT_EQ(r.bytes, kMessage.size());
  EXPECT_FALSE(readable_now(fd)) << "the doorbell's byte was read off the control socket";
  return woke - Clock::time_point(Clock::duration(written_at.load()));
}

TEST(ShmDoorbell, ASleepingClientShouldWakeWhenTheExchangeWrites) {
  ni::ShmListener listener(socket_path("client"), 4096);
  Session s = connect_pair(listener);
  ASSERT_TRUE(s.client.valid() && s.exchange.valid());
  const auto latency = sleep_until_written(s.client, s.exchange, 50ms);
  EXPECT_LT(latency, kWokeWithin) << "slept " << std::chrono::duration<double, std::milli>(latency).count() << " ms";
  EXPECT_EQ(s.exchange.doorbells_rung(), 1u);
}

TEST(ShmDoorbell, ASleepingExchangeShouldWakeWhenAClientWrites) {
  ni::ShmListener listener(socket_path("exchange"), 4096);
  Session s = connect_pair(listener);
  ASSERT_TRUE(s.client.valid() && s.exchange.valid());
  const auto latency = sleep_until_written(s.exchange, s.client, 50ms);
  EXPECT_LT(latency, kWokeWithin) << "slept " << std::chrono::duration<double, std::milli>(latency).count() << " ms";
  EXPECT_EQ(s.client.doorbells_rung(), 1u);
}

TEST(ShmDoorbell, ASleepingClientProcessShouldWakeWhenTheExchangeWrites) {
  ni::ShmListener listener(socket_path("fork"), 4096);
  int armed[2];
  ASSERT_EQ(::pipe(armed), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 10;
    try {
      ::close(armed[0]);
      ni::ShmStream c = ni::shm_connect(listener.path(), 2000ms);
      nc::BlockingIdle idle(kSleepTimeout);
      const int fd = c.fd();
      idle.watch({&fd, 1});
      c.enable_doorbell();
      if (c.arm_doorbell()) ::_exit(11);
      if (::write(armed[1], "a", 1) != 1) ::_exit(12);
      const auto start = Clock::now();
      (void)idle.wait();  // the parent writes at once: one wake-up, long before the timeout
      const auto slept = Clock::now() - start;
      c.disarm_doorbell();
      std::vector<std::uint8_t> buf(64);
      code = c.read_some(buf).bytes != kMessage.size() ? 13 : slept >= kWokeWithin ? 14 : 0;
    } catch (...) {
      code = 15;
    }
    ::_exit(code);
  }
  ::close(armed[1]);
  auto ex = accept_within(listener);
  ASSERT_TRUE(ex.has_value());
  char byte = 0;
  ASSERT_EQ(::read(armed[0], &byte, 1), 1) << "the client armed its doorbell";
  ::close(armed[0]);
  ASSERT_EQ(ex->write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(ex->doorbells_rung(), 1u);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "13: data missing, 14: woke only after " << kWokeWithin.count() << " s";
}

TEST(ShmDoorbell, AWriterShouldRingOnlyASleepingReaderAndOncePerSleep) {
  ni::ShmListener listener(socket_path("count"), 1 << 16);
  Session s = connect_pair(listener);
  ASSERT_TRUE(s.client.valid() && s.exchange.valid());
  std::vector<std::uint8_t> buf(1 << 16);
  // The client polls (doorbell never enabled): no ring.
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(s.exchange.write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(s.exchange.doorbells_rung(), 0u);
  (void)s.client.read_some(buf);
  // Enabled, awake: no ring.
  s.client.enable_doorbell();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(s.exchange.write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(s.exchange.doorbells_rung(), 0u);
  EXPECT_TRUE(s.client.arm_doorbell()) << "input pending: no sleep";
  s.client.disarm_doorbell();
  (void)s.client.read_some(buf);
  // Asleep: one ring however many writes before it wakes.
  EXPECT_FALSE(s.client.arm_doorbell());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(s.exchange.write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(s.exchange.doorbells_rung(), 1u);
  EXPECT_TRUE(readable_now(s.client.fd()));
  s.client.disarm_doorbell();
  EXPECT_FALSE(readable_now(s.client.fd())) << "disarm read the byte";
  EXPECT_FALSE(s.client.peer_gone());
  // Awake again: no ring.
  for (int i = 0; i < 100; ++i) ASSERT_EQ(s.exchange.write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(s.exchange.doorbells_rung(), 1u);
  // The end rings a sleeper too.
  (void)s.client.read_some(buf);
  EXPECT_FALSE(s.client.arm_doorbell());
  s.exchange.shutdown_write();
  EXPECT_EQ(s.exchange.doorbells_rung(), 2u);
  s.client.disarm_doorbell();
  EXPECT_EQ(s.client.read_some(buf).status, nn::IoStatus::kClosed);
}

// A client that maps its segment by hand and lies: holds its word asleep
// forever and never reads its control socket.
TEST(ShmDoorbell, ALyingClientShouldCostASystemCallPerWriteAtMostNeverABlock) {
  ni::ShmListener listener(socket_path("liar"), 4096);
  nn::Fd control(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, listener.path().data(), listener.path().size());
  ASSERT_EQ(::connect(control.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto ex = accept_within(listener);
  ASSERT_TRUE(ex.has_value());
  ni::ShmHello hello{};
  ni::Received r = ni::receive_with_fd(control.get(), {reinterpret_cast<std::uint8_t*>(&hello), sizeof hello});
  ASSERT_EQ(r.error, 0);
  ni::ShmSegment segment = ni::ShmSegment::map(std::move(r.fd), hello.segment_bytes);
  auto* layout = reinterpret_cast<ni::ShmSessionLayout*>(segment.data());
  std::atomic_ref<std::uint64_t> client_word(layout->client_doorbell.value);
  std::atomic_ref<std::uint64_t> exchange_word(layout->exchange_doorbell.value);
  std::atomic_ref<std::uint64_t> head(layout->to_client.head);
  std::atomic_ref<std::uint64_t> tail(layout->to_client.tail);

  constexpr int kWrites = 20000;  // far more doorbell bytes than the control socket holds
  const auto start = Clock::now();
  for (int i = 0; i < kWrites; ++i) {
    client_word.store(ni::kDoorbellAsleep);
    ASSERT_EQ(ex->write_some(kMessage).bytes, kMessage.size()) << "write " << i;
    head.store(tail.load());  // "consumed", so the ring never fills
  }
  EXPECT_EQ(ex->doorbells_rung() + ex->doorbells_full(), static_cast<std::uint64_t>(kWrites));
  EXPECT_GT(ex->doorbells_full(), 0u) << "the socket filled: EAGAIN, not a blocked send";
  EXPECT_LT(Clock::now() - start, 20s);

  // The liar rewrites the exchange's word: a wasted recv, nothing worse.
  ex->enable_doorbell();
  EXPECT_FALSE(ex->arm_doorbell());
  exchange_word.store(ni::kDoorbellRung);
  ex->disarm_doorbell();
  EXPECT_FALSE(ex->peer_gone());
  exchange_word.store(12345);  // nonsense: treated as awake
  client_word.store(777);      // likewise: no ring
  const std::uint64_t rung = ex->doorbells_rung() + ex->doorbells_full();
  ASSERT_EQ(ex->write_some(kMessage).bytes, kMessage.size());
  EXPECT_EQ(ex->doorbells_rung() + ex->doorbells_full(), rung);
  EXPECT_FALSE(ex->arm_doorbell());
  ex->disarm_doorbell();
}

}  // namespace
