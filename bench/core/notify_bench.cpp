// Thread notification: one-way wake-up latency from a producer posting to a
// consumer thread waking, for the ways one thread can wake another on Linux,
// beside our BlockingIdle / BackoffIdle / YieldIdle, with busy-spin as floor.
//
// Method (as in the published comparison this reproduces): producer pinned to
// cpu_a, consumer to cpu_b. The producer writes its TSC into a shared slot, then
// posts; the consumer reads the TSC (rdtscp) as soon as its wait returns and
// records the difference (the TSC is invariant and synchronised across cores
// here; the machine header says so). Two modes:
//   every 1 ms     the producer sleeps to a 1 ms deadline between posts, so a
//                  blocking consumer is really asleep when the post comes;
//   back-to-back   the producer posts as soon as the consumer acknowledged the
//                  previous post (the consumer may not have gone to sleep yet).
// Then, with Google Benchmark, the producer-side cost of one post when nobody is
// asleep (the common case for a busy agent).
//
// Peers: std::condition_variable (+mutex), POSIX semaphore, POSIX message queue,
// eventfd, raw futex, std::atomic wait/notify. Linked: librt (mq_*).
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <semaphore.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "common/bench_util.hpp"
#include "common/wakeup.hpp"
#include "core/compiler.hpp"
#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {
namespace {

using core::BusySpinIdle;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "notify_bench: %s failed: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Returns once `word` holds `want`; while it holds another value `seen`,
// block(seen) sleeps until the word may have changed.
template <typename Block>
void wait_for_value(std::atomic<std::uint32_t>& word, std::uint32_t want, Block block) {
  for (;;) {
    const std::uint32_t seen = word.load(std::memory_order_acquire);
    if (seen == want) {
      return;
    }
    block(seen);
  }
}

// ---- Mechanisms -------------------------------------------------------------
// Each has post(n) (producer: announce post number n) and wait(n) (consumer:
// return once post n has arrived). Posts are numbered from 1 and the producer
// never posts n+1 before the consumer acknowledged n.

// A sequence number polled with one of our idle strategies. With BusySpinIdle
// this is the busy-spin floor; with BlockingIdle the producer also signals.
template <typename Idle>
class PolledSequence {
 public:
  template <typename... IdleArgs>
  explicit PolledSequence(IdleArgs&&... idle_args) : idle_(std::forward<IdleArgs>(idle_args)...) {}

  void post(std::uint64_t n) {
    seq_.store(n, std::memory_order_release);
    if constexpr (core::WakeableIdleStrategy<Idle>) {
      idle_.signal();
    }
  }
  void wait(std::uint64_t n) {
    while (seq_.load(std::memory_order_acquire) < n) {
      idle_.idle(0);
    }
    idle_.reset();
  }

 private:
  alignas(core::kCacheLine) std::atomic<std::uint64_t> seq_{0};
  Idle idle_;
};

// FUTEX_WAKE on every post; FUTEX_WAIT while the word is unchanged.
class RawFutex {
 public:
  void post(std::uint64_t n) {
    word_.store(static_cast<std::uint32_t>(n), std::memory_order_release);
    futex(word_, FUTEX_WAKE_PRIVATE, 1);
  }
  void wait(std::uint64_t n) {
    wait_for_value(word_, static_cast<std::uint32_t>(n),
                   [this](std::uint32_t seen) { futex(word_, FUTEX_WAIT_PRIVATE, seen); });
  }

 private:
  alignas(core::kCacheLine) std::atomic<std::uint32_t> word_{0};
};

class AtomicWaitNotify {
 public:
  void post(std::uint64_t n) {
    word_.store(static_cast<std::uint32_t>(n), std::memory_order_release);
    word_.notify_one();
  }
  void wait(std::uint64_t n) {
    wait_for_value(word_, static_cast<std::uint32_t>(n),
                   [this](std::uint32_t seen) { word_.wait(seen, std::memory_order_acquire); });
  }

 private:
  alignas(core::kCacheLine) std::atomic<std::uint32_t> word_{0};
};

class CondVar {
 public:
  void post(std::uint64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seq_ = n;
    }
    cv_.notify_one();  // outside the lock: the woken thread need not block on it
  }
  void wait(std::uint64_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return seq_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t seq_ = 0;
};

class PosixSemaphore {
 public:
  PosixSemaphore() {
    if (::sem_init(&sem_, 0, 0) != 0) {
      throw std::runtime_error(std::string("sem_init: ") + std::strerror(errno));
    }
  }
  ~PosixSemaphore() { ::sem_destroy(&sem_); }
  PosixSemaphore(const PosixSemaphore&) = delete;
  PosixSemaphore& operator=(const PosixSemaphore&) = delete;

  void post(std::uint64_t /*n*/) {
    if (::sem_post(&sem_) != 0) {
      die("sem_post");
    }
  }
  void wait(std::uint64_t /*n*/) {
    while (::sem_wait(&sem_) != 0) {
      if (errno != EINTR) {
        die("sem_wait");
      }
    }
  }

 private:
  sem_t sem_{};
};

// The shared EventFd (common/wakeup.hpp) with the post(n)/wait(n) interface
// of the other mechanisms: a post on every call, a read per wake-up.
class EventFdMechanism {
 public:
  void post(std::uint64_t /*n*/) { fd_.post(); }
  void wait(std::uint64_t /*n*/) { fd_.wait(); }

 private:
  EventFd fd_;
};

class PosixMessageQueue {
 public:
  PosixMessageQueue() {
    const std::string name = "/nanotick-notify-" + std::to_string(::getpid());
    mq_attr attr{};
    attr.mq_maxmsg = 4;
    attr.mq_msgsize = sizeof(std::uint64_t);
    queue_ = ::mq_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
    if (queue_ == static_cast<mqd_t>(-1)) {
      throw std::runtime_error("mq_open(" + name + "): " + std::strerror(errno) +
                               " (POSIX message queues unavailable here)");
    }
    ::mq_unlink(name.c_str());  // the descriptor stays valid; nothing is left behind
  }
  ~PosixMessageQueue() { ::mq_close(queue_); }
  PosixMessageQueue(const PosixMessageQueue&) = delete;
  PosixMessageQueue& operator=(const PosixMessageQueue&) = delete;

  void post(std::uint64_t n) {
    char message[sizeof n];
    std::memcpy(message, &n, sizeof n);
    while (::mq_send(queue_, message, sizeof message, 0) != 0) {
      if (errno != EINTR) {
        die("mq_send");
      }
    }
  }
  void wait(std::uint64_t /*n*/) {
    char message[sizeof(std::uint64_t)];
    while (::mq_receive(queue_, message, sizeof message, nullptr) < 0) {
      if (errno != EINTR) {
        die("mq_receive");
      }
    }
  }

 private:
  mqd_t queue_;
};

// ---- Harness ----------------------------------------------------------------

enum class Mode { every_1ms, back_to_back };

struct Counts {
  std::uint64_t warmup;
  std::uint64_t samples;
};

// Written by the producer (stamp) and the consumer (acked), each on its own line.
struct Shared {
  alignas(core::kCacheLine) std::atomic<std::uint64_t> stamp{0};  // producer TSC at post
  alignas(core::kCacheLine) std::atomic<std::uint64_t> acked{0};  // last post consumed
};

void add_1ms(timespec& t) {
  t.tv_nsec += 1'000'000;
  if (t.tv_nsec >= 1'000'000'000) {
    t.tv_nsec -= 1'000'000'000;
    ++t.tv_sec;
  }
}

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

bool g_consumer_pin_warned = false;  // main thread only

struct RunResult {
  core::LatencyHistogram ns;
  std::uint64_t negative = 0;  // consumer TSC before producer TSC (clamped to 0)
};

// Runs one mechanism in one mode; the calling thread (pinned to cpu_a) produces.
template <typename Mech, typename... MechArgs>
RunResult measure(const Args& args, Mode mode, Counts counts, MechArgs&&... mech_args) {
  Mech mech(std::forward<MechArgs>(mech_args)...);
  Shared shared;
  RunResult result;
  const auto& clock = core::TscClock::global();
  const bool tsc = clock.uses_tsc();
  const std::uint64_t total = counts.warmup + counts.samples;

  core::NamedThread consumer("notify-consumer", args.cpu_b, [&] {
    for (std::uint64_t n = 1; n <= total; ++n) {
      mech.wait(n);
      const std::uint64_t woke = tsc ? core::rdtscp() : clock.now();
      const std::uint64_t posted = shared.stamp.load(std::memory_order_acquire);
      if (n > counts.warmup) {
        auto ticks = static_cast<std::int64_t>(woke - posted);
        if (ticks < 0) {
          ++result.negative;
          ticks = 0;
        }
        result.ns.record(static_cast<std::uint64_t>(clock.to_ns(ticks)));
      }
      shared.acked.store(n, std::memory_order_release);
    }
  });
  if (consumer.pin_error() && !g_consumer_pin_warned) {
    g_consumer_pin_warned = true;
    std::fprintf(stderr, "warning: could not pin the consumer to CPU %d: %s (numbers will be noisier)\n", args.cpu_b,
                 consumer.pin_error().message().c_str());
  }

  timespec deadline{};
  ::clock_gettime(CLOCK_MONOTONIC, &deadline);
  for (std::uint64_t n = 1; n <= total; ++n) {
    if (mode == Mode::every_1ms) {
      add_1ms(deadline);
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      if (before(deadline, now)) {
        deadline = now;  // fell behind (a slow consumer or a busy machine): don't burst
      } else {
        while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
        }
      }
    }
    while (shared.acked.load(std::memory_order_acquire) != n - 1) {
      BusySpinIdle::pause();
    }
    shared.stamp.store(tsc ? core::rdtsc() : clock.now(), std::memory_order_release);
    mech.post(n);
  }
  consumer.join();
  return result;
}

struct Table {
  std::vector<LatencyRow> rows;
  std::vector<std::string> notes;
};

template <typename Mech, typename... MechArgs>
void add_row(Table& table, const char* name, const Args& args, Mode mode, Counts counts, MechArgs&&... mech_args) {
  try {
    RunResult r = measure<Mech>(args, mode, counts, std::forward<MechArgs>(mech_args)...);
    if (r.negative > 0) {
      table.notes.push_back(std::string(name) + ": " + std::to_string(r.negative) +
                            " samples had the consumer's TSC behind the producer's (counted as 0)");
    }
    table.rows.push_back(LatencyRow{name, std::move(r.ns)});
  } catch (const std::exception& e) {
    table.notes.push_back(std::string(name) + ": skipped, " + e.what());
  }
}

void run_latency_table(const Args& args, Mode mode, Counts counts, const char* title) {
  using namespace std::chrono_literals;
  Table table;
  add_row<PolledSequence<core::BusySpinIdle>>(table, "busy-spin", args, mode, counts);
  // A long timeout, so that every wake-up is a signal; then none at all (a timed
  // FUTEX_WAIT arms a kernel timer, which costs a little on every sleep).
  add_row<PolledSequence<core::BlockingIdle>>(table, "nanotick BlockingIdle (100 ms timeout)", args, mode, counts,
                                              100ms);
  add_row<PolledSequence<core::BlockingIdle>>(table, "nanotick BlockingIdle (no timeout)", args, mode, counts,
                                              core::BlockingIdle::kNoTimeout);
  add_row<PolledSequence<core::BackoffIdle>>(table, "nanotick BackoffIdle (default)", args, mode, counts);
  add_row<PolledSequence<core::YieldIdle>>(table, "nanotick YieldIdle (sched_yield)", args, mode, counts);
  add_row<RawFutex>(table, "futex (raw syscall)", args, mode, counts);
  add_row<AtomicWaitNotify>(table, "std::atomic wait/notify", args, mode, counts);
  add_row<EventFdMechanism>(table, "eventfd", args, mode, counts);
  add_row<PosixSemaphore>(table, "POSIX semaphore", args, mode, counts);
  add_row<CondVar>(table, "std::condition_variable", args, mode, counts);
  add_row<PosixMessageQueue>(table, "POSIX message queue", args, mode, counts);

  print_latency_table(title, table.rows, "busy-spin");
  for (const auto& note : table.notes) {
    std::printf("- %s\n", note.c_str());
  }
  if (!table.notes.empty()) {
    std::printf("\n");
  }
  std::fflush(stdout);
}

// ---- Producer-side post cost (Google Benchmark) -------------------------------

class CollectingReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& /*context*/) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration || run.real_accumulated_time <= 0) {
        continue;
      }
      rows.push_back(
          ThroughputRow{run.benchmark_name(), static_cast<double>(run.iterations) / run.real_accumulated_time});
    }
  }
  std::vector<ThroughputRow> rows;
};

void register_post_cost_benchmarks() {
  benchmark::RegisterBenchmark("busy-spin (atomic store)", [](benchmark::State& state) {
    PolledSequence<core::BusySpinIdle> mech;
    std::uint64_t n = 0;
    for (auto _ : state) {
      mech.post(++n);
    }
  });
  benchmark::RegisterBenchmark("nanotick BlockingIdle::signal", [](benchmark::State& state) {
    core::BlockingIdle idle;
    for (auto _ : state) {
      idle.signal();
    }
  });
  benchmark::RegisterBenchmark("futex FUTEX_WAKE (raw syscall)", [](benchmark::State& state) {
    RawFutex mech;
    std::uint64_t n = 0;
    for (auto _ : state) {
      mech.post(++n);
    }
  });
  benchmark::RegisterBenchmark("std::atomic notify_one", [](benchmark::State& state) {
    AtomicWaitNotify mech;
    std::uint64_t n = 0;
    for (auto _ : state) {
      mech.post(++n);
    }
  });
  benchmark::RegisterBenchmark("eventfd write", [](benchmark::State& state) {
    EventFdMechanism mech;
    for (auto _ : state) {
      mech.post(0);
    }
  });
  benchmark::RegisterBenchmark("sem_post", [](benchmark::State& state) {
    PosixSemaphore mech;  // fresh per run: the count stays far below SEM_VALUE_MAX
    for (auto _ : state) {
      mech.post(0);
    }
  });
  benchmark::RegisterBenchmark("std::condition_variable (lock, set, notify_one)", [](benchmark::State& state) {
    CondVar mech;
    std::uint64_t n = 0;
    for (auto _ : state) {
      mech.post(++n);
    }
  });
}

void run_post_cost_table(const Args& args) {
  register_post_cost_benchmarks();
  std::vector<std::string> storage = {"notify_bench",
                                      args.quick ? "--benchmark_min_time=0.01" : "--benchmark_min_time=0.2"};
  std::vector<char*> argv;
  for (auto& s : storage) {
    argv.push_back(s.data());
  }
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_throughput_table("Producer-side cost of one post while nobody sleeps (one thread)", reporter.rows,
                         "busy-spin (atomic store)");
  std::printf(
      "- A POSIX message queue is left out here: without a receiver it fills after mq_maxmsg "
      "posts and mq_send blocks.\n\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace nanotick::bench

int main(int argc, char** argv) {
  using namespace nanotick::bench;
  const Args args = parse_args(argc, argv);
  print_machine_header("notify_bench: thread wake-up latency (producer post -> consumer awake)");
  pin_or_warn(args.cpu_a);

  const Counts periodic = args.quick ? Counts{5, 20} : Counts{50, 2'000};
  const Counts back_to_back = args.quick ? Counts{100, 500} : Counts{1'000, 20'000};
  std::printf(
      "Producer on CPU %d, consumer on CPU %d. Every 1 ms: %llu posts (+%llu warm-up) per "
      "mechanism; back-to-back: %llu posts (+%llu warm-up). A spinning or yielding consumer keeps "
      "its whole CPU busy while it waits: on a 2-core machine that is half the machine.\n\n",
      args.cpu_a, args.cpu_b, static_cast<unsigned long long>(periodic.samples),
      static_cast<unsigned long long>(periodic.warmup), static_cast<unsigned long long>(back_to_back.samples),
      static_cast<unsigned long long>(back_to_back.warmup));
  std::fflush(stdout);

  run_latency_table(args, Mode::every_1ms, periodic, "Wake-up latency, one post every 1 ms");
  run_latency_table(args, Mode::back_to_back, back_to_back,
                    "Wake-up latency, back-to-back (post as soon as the previous one was seen)");
  run_post_cost_table(args);
  return 0;
}
