// BlockingIdle watching descriptors (watch(): the "block" idle strategy of an
// agent that reads sockets): a socket's input wakes the sleeper, input that
// was read no longer does (it sleeps its whole timeout, also through an epoll
// set of the agent's own that nobody waits on), signal() still wakes it
// through the eventfd and costs no system call while it is awake, and a
// runner hands the agent's wait_fds() to it. The only timing assertions are
// lower bounds ("slept at least its timeout") and generous upper bounds
// ("woke long before a timeout it was never meant to reach").
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "core/agent.hpp"
#include "core/agent_runner.hpp"
#include "core/idle_strategy.hpp"

namespace nanotick::core {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Far longer than any wake-up on a loaded machine, far shorter than ctest's timeout.
constexpr auto kNeverReached = 20s;

// A connected pair of non-blocking stream sockets.
struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0); }
  ~SocketPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void send_byte() const { EXPECT_EQ(::write(fds[1], "x", 1), 1); }
  // Reads everything pending on the watched end; returns the bytes read.
  long drain() const {
    char buffer[64];
    long total = 0;
    for (long n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) total += n;
    return total;
  }
  int watched() const { return fds[0]; }
};

Clock::duration time_one_wait(BlockingIdle& idle) {
  const auto start = Clock::now();
  static_cast<void>(idle.wait());
  return Clock::now() - start;
}

TEST(BlockingIdleWatch, ShouldWakeWhenAWatchedSocketGetsInput) {
  SocketPair pair;
  BlockingIdle idle(kNeverReached);
  const int fd = pair.watched();
  idle.watch({&fd, 1});
  EXPECT_TRUE(idle.watching());
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);  // usually after the sleep began; either way it must end it
    pair.send_byte();
  });
  const auto slept = time_one_wait(idle);
  writer.join();
  EXPECT_LT(slept, kNeverReached / 2) << "input on a watched socket did not wake the sleeper";
  EXPECT_EQ(pair.drain(), 1);
}

TEST(BlockingIdleWatch, ShouldSleepItsWholeTimeoutOnceTheInputWasRead) {
  SocketPair pair;
  BlockingIdle idle(50ms);
  const int fd = pair.watched();
  idle.watch({&fd, 1});
  pair.send_byte();
  EXPECT_LT(time_one_wait(idle), kNeverReached);  // readable: returns at once
  EXPECT_EQ(pair.drain(), 1);
  // Level-triggered, but nothing is left: a sleeper that kept waking here would spin.
  EXPECT_GE(time_one_wait(idle), 45ms);
}

TEST(BlockingIdleWatch, ShouldSeeThroughAnEpollSetOfTheAgentsOwnThatNobodyWaitsOn) {
  // An agent whose sockets come and go (a reconnecting client) hands over an
  // epoll set it only adds to and never waits on itself: its readiness must
  // follow the sockets' both ways.
  SocketPair pair;
  const int inner = ::epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(inner, 0);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ASSERT_EQ(::epoll_ctl(inner, EPOLL_CTL_ADD, pair.watched(), &ev), 0);
  BlockingIdle waker(kNeverReached);  // must be woken by the input: a timeout would take far longer
  waker.watch({&inner, 1});
  BlockingIdle sleeper(50ms);  // must sleep its whole timeout once the input was read
  sleeper.watch({&inner, 1});

  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    pair.send_byte();
  });
  EXPECT_LT(time_one_wait(waker), kNeverReached / 2) << "input behind the nested epoll set did not wake the sleeper";
  writer.join();
  EXPECT_EQ(pair.drain(), 1);
  EXPECT_GE(time_one_wait(sleeper), 45ms) << "the nested set stayed ready after its input was read";
  EXPECT_GE(time_one_wait(sleeper), 45ms);
  ::close(inner);
}

TEST(BlockingIdleWatch, ShouldStillWakeOnASignalAndReportIt) {
  SocketPair pair;
  BlockingIdle idle(kNeverReached);
  const int fd = pair.watched();
  idle.watch({&fd, 1});
  idle.signal();  // pending before the wait: consumed at once, no sleep
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
  std::thread producer([&] {
    std::this_thread::sleep_for(20ms);
    idle.signal();
  });
  const auto start = Clock::now();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
  EXPECT_LT(Clock::now() - start, kNeverReached / 2);
  producer.join();
}

TEST(BlockingIdleWatch, ShouldRingNothingForSignalsWhileAwake) {
  // Signals while the agent is awake are one exchange on the state word:
  // had any of them rung the eventfd, the wait after consuming them would
  // find it readable and return at once instead of sleeping its timeout.
  SocketPair pair;
  BlockingIdle idle(50ms);
  const int fd = pair.watched();
  idle.watch({&fd, 1});
  for (int i = 0; i < 1000; ++i) idle.signal();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::signalled);
  const auto start = Clock::now();
  EXPECT_EQ(idle.wait(), BlockingIdle::WaitResult::timed_out);
  EXPECT_GE(Clock::now() - start, 45ms) << "a signal to an awake agent rang the eventfd";
}

TEST(BlockingIdleWatch, ShouldRefuseASecondWatchAndABadDescriptor) {
  SocketPair pair;
  const int fd = pair.watched();
  BlockingIdle idle(1ms);
  idle.watch({&fd, 1});
  EXPECT_THROW(idle.watch({&fd, 1}), std::logic_error);
  BlockingIdle other(1ms);
  const int closed = 1 << 20;  // no such descriptor
  try {
    other.watch({&closed, 1});
    FAIL() << "watching a descriptor that does not exist was accepted";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(closed)), std::string::npos) << e.what();
  }
  EXPECT_FALSE(other.watching());
}

TEST(WaitFds, ShouldSkipAbsentDescriptorsAndRefuseTooMany) {
  WaitFds fds;
  fds.add(-1);
  EXPECT_TRUE(fds.empty());
  for (std::size_t i = 0; i < WaitFds::kCapacity; ++i) fds.add(static_cast<int>(i));
  EXPECT_EQ(fds.fds().size(), WaitFds::kCapacity);
  EXPECT_THROW(fds.add(99), std::length_error);
}

// Reads a socket; says which descriptor it waits on.
struct SocketReader {
  int fd;
  std::atomic<int> bytes{0};
  std::string_view role_name() const noexcept { return "socket-reader"; }
  int do_work() noexcept {
    char c;
    if (::read(fd, &c, 1) == 1) {
      bytes.fetch_add(1, std::memory_order_release);
      return 1;
    }
    return 0;
  }
  void wait_fds(WaitFds& out) { out.add(fd); }
};

struct Quiet {
  std::string_view role_name() const noexcept { return "quiet"; }
  int do_work() noexcept { return 0; }
};

TEST(BlockingIdleWatch, ShouldCollectACompositesDescriptorsInOrder) {
  SocketReader a{3}, b{4};
  Quiet q;
  CompositeAgent both{a, q, b};
  WaitFds fds;
  agent_wait_fds(both, fds);
  ASSERT_EQ(fds.fds().size(), 2u);
  EXPECT_EQ(fds.fds()[0], 3);
  EXPECT_EQ(fds.fds()[1], 4);
  static_assert(AgentWithWaitFds<CompositeAgent<SocketReader&, Quiet&>>);
  static_assert(!AgentWithWaitFds<Quiet>);
}

TEST(BlockingIdleWatch, ShouldLetARunnerSleepOnItsAgentsSocketAndStopAtOnce) {
  SocketPair pair;
  SocketReader reader{pair.watched()};
  // A timeout it must never need: the socket and the stop both wake it.
  AgentRunner<SocketReader, BlockingIdle> runner(reader, RunnerOptions{}, std::chrono::nanoseconds(kNeverReached));
  runner.start();
  EXPECT_TRUE(runner.idle_strategy().watching());
  for (int i = 1; i <= 3; ++i) {
    std::this_thread::sleep_for(10ms);  // let it fall asleep
    pair.send_byte();
    const auto deadline = Clock::now() + kNeverReached / 2;
    while (reader.bytes.load(std::memory_order_acquire) < i && Clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    ASSERT_EQ(reader.bytes.load(std::memory_order_acquire), i) << "the runner slept through its socket's input";
  }
  const auto start = Clock::now();
  runner.stop();
  EXPECT_LT(Clock::now() - start, kNeverReached / 2) << "stop() waited for the timeout";
}

}  // namespace
}  // namespace nanotick::core
