// AgentRunner on real threads (hooks on the agent thread, clean stop and join,
// failures reported) and BlockingIdle's no-lost-wake-up guarantee under many
// signal/idle rounds. Runs under TSan. Waits are handshakes on atomics, never
// sleeps; no timing assertions. Round counts come from NANOTICK_STRESS_ITEMS.
#include "core/agent_runner.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/stress.hpp"

namespace nanotick::core {
namespace {

using namespace std::chrono_literals;

// Rounds: NANOTICK_STRESS_ITEMS, else 20,000 (sanitizers too).
std::uint64_t stress_items() { return nanotick::test::stress_items(20'000, 20'000); }

// Yields until pred() holds: the test thread waits for the agent thread
// without sleeping for a guessed time.
template <typename Pred>
void wait_until(Pred pred) {
  while (!pred()) {
    std::this_thread::yield();
  }
}

// Records which thread ran each hook; counts everything.
class ProbeAgent {
 public:
  explicit ProbeAgent(int work_per_cycle = 0) : work_(work_per_cycle) {}

  int do_work() {
    if (std::this_thread::get_id() != start_thread_) {
      wrong_thread_.store(true, std::memory_order_relaxed);
    }
    const auto n = cycles_.fetch_add(1, std::memory_order_release) + 1;
    if (throw_at_ != 0 && n == throw_at_) {
      throw std::runtime_error("probe agent failed at cycle " + std::to_string(n));
    }
    return work_;
  }
  std::string_view role_name() const { return "probe"; }
  void on_start() {
    start_thread_ = std::this_thread::get_id();
    starts_.fetch_add(1, std::memory_order_release);
    if (throw_on_start_) {
      throw std::runtime_error("probe agent cannot start");
    }
  }
  void on_close() {
    close_thread_ = std::this_thread::get_id();
    closes_.fetch_add(1, std::memory_order_release);
    if (throw_on_close_) {
      throw std::runtime_error("probe agent cannot close");
    }
  }

  std::uint64_t cycles() const { return cycles_.load(std::memory_order_acquire); }
  int starts() const { return starts_.load(std::memory_order_acquire); }
  int closes() const { return closes_.load(std::memory_order_acquire); }
  // Read after the runner joined (the join orders these plain fields).
  std::thread::id start_thread() const { return start_thread_; }
  std::thread::id close_thread() const { return close_thread_; }
  bool wrong_thread() const { return wrong_thread_.load(std::memory_order_relaxed); }

  void throw_at_cycle(std::uint64_t n) { throw_at_ = n; }
  void set_throw_on_start() { throw_on_start_ = true; }
  void set_throw_on_close() { throw_on_close_ = true; }

 private:
  int work_;
  std::atomic<std::uint64_t> cycles_{0};
  std::atomic<int> starts_{0};
  std::atomic<int> closes_{0};
  std::atomic<bool> wrong_thread_{false};
  std::thread::id start_thread_;
  std::thread::id close_thread_;
  std::uint64_t throw_at_ = 0;
  bool throw_on_start_ = false;
  bool throw_on_close_ = false;
};

TEST(AgentRunner, ShouldCallHooksOnceOnTheAgentThread) {
  ProbeAgent agent;
  {
    AgentRunner<ProbeAgent, YieldIdle> runner(agent, {"probe-runner", -1});
    runner.start();
    EXPECT_EQ(agent.starts(), 1);  // start() returns after on_start completed
    EXPECT_TRUE(runner.is_running());
    wait_until([&] { return agent.cycles() >= 100; });
    runner.stop();
    EXPECT_FALSE(runner.is_running());
    EXPECT_FALSE(runner.has_failed());
  }
  EXPECT_EQ(agent.starts(), 1);
  EXPECT_EQ(agent.closes(), 1);
  EXPECT_NE(agent.start_thread(), std::this_thread::get_id());
  EXPECT_EQ(agent.close_thread(), agent.start_thread());
  EXPECT_FALSE(agent.wrong_thread());
}

TEST(AgentRunner, ShouldRunACompositeOnOneThread) {
  ProbeAgent a(1);
  ProbeAgent b(0);
  CompositeAgent both{a, b};
  AgentRunner<decltype(both), BusySpinIdle> runner(both);
  EXPECT_EQ(runner.name(), "[probe,probe]");
  runner.start();
  wait_until([&] { return b.cycles() >= 50; });
  runner.stop();
  EXPECT_EQ(a.start_thread(), b.start_thread());
  EXPECT_EQ(a.closes(), 1);
  EXPECT_EQ(b.closes(), 1);
  EXPECT_FALSE(a.wrong_thread() || b.wrong_thread());
  EXPECT_GE(a.cycles(), b.cycles());  // a runs first in every cycle
}

class ConfiguredRunner : public ::testing::TestWithParam<IdleKind> {};

TEST_P(ConfiguredRunner, ShouldStartDoWorkAndStopCleanly) {
  ProbeAgent agent;
  IdleConfig config;
  config.kind = GetParam();
  config.backoff.max_spins = 10;
  config.backoff.max_yields = 2;
  config.backoff.max_park = 100us;
  config.block_timeout = BlockingIdle::kNoTimeout;  // only stop() can wake it
  auto runner = make_agent_runner(agent, {"cfg-runner", -1}, config);
  EXPECT_EQ(runner.kind(), GetParam());
  EXPECT_EQ(runner.waker().is_active(), GetParam() == IdleKind::block);

  runner.start();
  wait_until([&] { return agent.cycles() >= 3 || (GetParam() == IdleKind::block && agent.cycles() >= 1); });
  runner.stop();
  EXPECT_FALSE(runner.is_running());
  EXPECT_FALSE(runner.has_failed());
  EXPECT_EQ(agent.starts(), 1);
  EXPECT_EQ(agent.closes(), 1);
}

INSTANTIATE_TEST_SUITE_P(EveryIdleKind, ConfiguredRunner,
                         ::testing::Values(IdleKind::spin, IdleKind::yield, IdleKind::backoff, IdleKind::block),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

TEST(AgentRunner, ShouldWakeABlockedAgentForEveryPublishedItem) {
  // The agent consumes a counter the producer bumps; it sleeps with no timeout,
  // so a lost wake-up would leave it asleep and this test would never finish.
  struct Consumer {
    int do_work() {
      const auto available = published->load(std::memory_order_acquire);
      if (available == seen) {
        return 0;
      }
      seen = available;
      consumed->store(seen, std::memory_order_release);
      return 1;
    }
    std::string_view role_name() const { return "consumer"; }
    const std::atomic<std::uint64_t>* published;
    std::atomic<std::uint64_t>* consumed;
    std::uint64_t seen = 0;
  };
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> consumed{0};
  Consumer consumer{&published, &consumed};
  AgentRunner<Consumer, BlockingIdle> runner(consumer, {}, BlockingIdle::kNoTimeout);
  const IdleWaker waker = runner.waker();
  runner.start();

  const std::uint64_t items = stress_items();
  for (std::uint64_t i = 1; i <= items; ++i) {
    published.store(i, std::memory_order_release);
    waker.wake();
    if (i % 4 == 0) {  // sometimes let the agent drain and go to sleep
      wait_until([&] { return consumed.load(std::memory_order_acquire) == i; });
    }
  }
  wait_until([&] { return consumed.load(std::memory_order_acquire) == items; });
  runner.stop();
}

TEST(AgentRunner, ShouldReportAnExceptionFromDoWorkOnJoin) {
  ProbeAgent agent(1);
  agent.throw_at_cycle(3);
  AgentRunner<ProbeAgent, BusySpinIdle> runner(agent);
  runner.start();
  try {
    runner.join();  // no stop request: the failure itself ends the loop
    FAIL() << "join() should rethrow the agent's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "probe agent failed at cycle 3");
  }
  EXPECT_TRUE(runner.has_failed());
  EXPECT_FALSE(runner.is_running());
  EXPECT_NE(runner.error(), nullptr);
  EXPECT_EQ(agent.cycles(), 3u);
  EXPECT_EQ(agent.closes(), 1);  // closed on the agent thread despite the failure
  EXPECT_NO_THROW(runner.stop());  // reported once
}

TEST(AgentRunner, ShouldRethrowAnOnStartFailureFromStart) {
  ProbeAgent agent;
  agent.set_throw_on_start();
  AgentRunner<ProbeAgent, BlockingIdle> runner(agent, {}, BlockingIdle::kNoTimeout);
  EXPECT_THROW(runner.start(), std::runtime_error);
  EXPECT_TRUE(runner.has_failed());
  EXPECT_EQ(agent.cycles(), 0u);
  EXPECT_EQ(agent.closes(), 1);
}

TEST(AgentRunner, ShouldReportAnOnCloseFailureFromStop) {
  ProbeAgent agent;
  agent.set_throw_on_close();
  AgentRunner<ProbeAgent, YieldIdle> runner(agent);
  runner.start();
  EXPECT_THROW(runner.stop(), std::runtime_error);
  EXPECT_EQ(agent.closes(), 1);
}

TEST(AgentRunner, ShouldPrintAnUncollectedFailureWhenDestroyed) {
  ProbeAgent agent;
  agent.throw_at_cycle(1);
  testing::internal::CaptureStderr();
  {
    AgentRunner<ProbeAgent, BusySpinIdle> runner(agent, {"doomed", -1});
    runner.start();
    wait_until([&] { return runner.has_failed(); });
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("agent runner 'doomed'"), std::string::npos) << err;
  EXPECT_NE(err.find("probe agent failed at cycle 1"), std::string::npos) << err;
}

TEST(AgentRunner, ShouldRejectASecondStart) {
  ProbeAgent agent;
  AgentRunner<ProbeAgent, YieldIdle> runner(agent);
  runner.start();
  EXPECT_THROW(runner.start(), std::logic_error);
  runner.stop();
  EXPECT_THROW(runner.start(), std::logic_error);
  EXPECT_EQ(agent.starts(), 1);
}

TEST(AgentRunner, ShouldFailToStartWhenItCannotPin) {
  ProbeAgent agent;
  AgentRunner<ProbeAgent, BlockingIdle> runner(agent, {"unpinnable", 100'000}, BlockingIdle::kNoTimeout);
  try {
    runner.start();
    FAIL() << "start() should report the pinning failure";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot pin to CPU 100000"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(runner.is_running());
  EXPECT_EQ(agent.closes(), agent.starts());  // the thread ran down cleanly
}

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) {
        cpus.push_back(cpu);
      }
    }
  }
  return cpus;
}

// One consumer, `producers` producers; each producer publishes an item, signals,
// and waits for the consumer's acknowledgement, so the consumer keeps racing
// between "found nothing" and "go to sleep" while signals arrive. Consumer and
// producers are pinned to different CPUs (when there are two) so that they
// really overlap instead of taking turns on one CPU.
//
// The verdict does not depend on timing: wait() says whether it consumed a
// signal. A wait that ends without one (the 1 s timeout) while an item is
// pending means the item's signal was lost. The first loss ends the run so
// that a broken implementation fails fast instead of paying a timeout per round.
void run_lost_wakeup_rounds(int producers, std::uint64_t rounds) {
  struct alignas(kCacheLine) Slot {
    std::atomic<std::uint64_t> published{0};
    std::atomic<std::uint64_t> acked{0};
  };
  std::vector<Slot> slots(static_cast<std::size_t>(producers));
  BlockingIdle idle(1s);
  std::atomic<bool> lost{false};
  std::uint64_t sleeps = 0;
  const std::vector<int> cpus = allowed_cpus();
  const int consumer_cpu = cpus.size() >= 2 ? cpus[0] : -1;
  const int producer_cpu = cpus.size() >= 2 ? cpus[1] : -1;

  std::thread consumer([&] {
    if (consumer_cpu >= 0) {
      static_cast<void>(pin_current_thread(consumer_cpu));
    }
    std::vector<std::uint64_t> seen(slots.size(), 0);
    std::uint64_t remaining = rounds * slots.size();
    while (remaining > 0) {
      int work = 0;
      for (std::size_t p = 0; p < slots.size(); ++p) {
        const auto value = slots[p].published.load(std::memory_order_acquire);
        if (value != seen[p]) {
          remaining -= value - seen[p];
          seen[p] = value;
          slots[p].acked.store(value, std::memory_order_release);
          ++work;
        }
      }
      if (work == 0) {
        ++sleeps;
        if (idle.wait() == BlockingIdle::WaitResult::timed_out) {
          // A wait may also end without a signal on a spurious wake-up (EINTR,
          // which TSan's signal handling makes common), and a producer may
          // publish right after it returned. Neither is a lost wake-up: then
          // the producer's signal is still ahead of us, so one more wait must
          // return `signalled` (at once, or as soon as the producer signals).
          // A truly lost wake-up leaves nothing pending: those waits time out
          // (a few tries, since each can itself end spuriously).
          bool pending = false;
          for (std::size_t p = 0; p < slots.size(); ++p) {
            pending = pending || slots[p].published.load(std::memory_order_acquire) != seen[p];
          }
          int tries = 0;
          while (pending && tries < 3 && idle.wait() == BlockingIdle::WaitResult::timed_out) {
            ++tries;
          }
          if (tries == 3) {
            lost.store(true, std::memory_order_release);
            return;
          }
        }
      }
    }
  });

  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      if (producer_cpu >= 0) {
        static_cast<void>(pin_current_thread(producer_cpu));
      }
      Slot& slot = slots[static_cast<std::size_t>(p)];
      for (std::uint64_t r = 1; r <= rounds; ++r) {
        slot.published.store(r, std::memory_order_release);
        idle.signal();
        // Spin briefly (yield if it takes long), then wait a varying number of
        // pauses so the next signal lands at every point of the consumer's
        // check -> CAS -> FUTEX_WAIT path.
        for (std::uint32_t spins = 0; slot.acked.load(std::memory_order_acquire) != r; ++spins) {
          if (lost.load(std::memory_order_acquire)) {
            return;
          }
          if (spins < 2'000) {
            BusySpinIdle::pause();
          } else {
            std::this_thread::yield();
          }
        }
        for (std::uint64_t jitter = (r * 7'919 + static_cast<std::uint64_t>(p)) % 256; jitter > 0; --jitter) {
          BusySpinIdle::pause();
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  consumer.join();
  EXPECT_FALSE(lost.load(std::memory_order_acquire))
      << "an item was pending after a wait that consumed no signal: a wake-up was lost";
  EXPECT_GT(sleeps, 0u);
}

TEST(BlockingIdle, ShouldNotLoseWakeUpsFromOneProducer) { run_lost_wakeup_rounds(1, stress_items()); }

TEST(BlockingIdle, ShouldNotLoseWakeUpsFromSeveralProducers) { run_lost_wakeup_rounds(3, stress_items() / 3 + 1); }

}  // namespace
}  // namespace nanotick::core
