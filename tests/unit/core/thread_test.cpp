#include "core/thread.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <string>

using namespace nanotick::core;

namespace {
int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  return 0;
}
}  // namespace

TEST(NamedThread, ShouldNameAndPinItselfBeforeTheConstructorReturns) {
  const int cpu = first_allowed_cpu();
  std::atomic<bool> ran{false};
  std::string seen_name;
  int seen_cpu = -1;
  {
    NamedThread t("nt-test-worker-long-name", cpu, [&] {
      char buf[16] = {};
      pthread_getname_np(pthread_self(), buf, sizeof buf);
      seen_name = buf;
      seen_cpu = sched_getcpu();
      ran.store(true, std::memory_order_release);
    });
    EXPECT_FALSE(t.pin_error()) << t.pin_error().message();
    t.join();
  }
  EXPECT_TRUE(ran.load(std::memory_order_acquire));
  EXPECT_EQ(seen_name, "nt-test-worker-");  // truncated to the kernel's 15 chars
  EXPECT_EQ(seen_cpu, cpu);
}

TEST(NamedThread, ShouldReportAPinningFailureAndStillRun) {
  std::atomic<bool> ran{false};
  NamedThread t("bad-pin", CPU_SETSIZE - 1, [&] { ran.store(true, std::memory_order_release); });
  EXPECT_TRUE(t.pin_error());
  t.join();
  EXPECT_TRUE(ran.load(std::memory_order_acquire));
}

TEST(PinCurrentThread, ShouldRejectANegativeCpu) {
  EXPECT_EQ(pin_current_thread(-1), std::make_error_code(std::errc::invalid_argument));
}

TEST(NamedThread, ShouldJoinInItsDestructor) {
  std::atomic<int> counter{0};
  {
    NamedThread t("joiner", -1, [&] { counter.fetch_add(1, std::memory_order_relaxed); });
  }
  EXPECT_EQ(counter.load(std::memory_order_relaxed), 1);
  EXPECT_GE(allowed_cpu_count(), 1);
}
