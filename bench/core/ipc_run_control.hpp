// ipc_bench: the options, the stop flag (signals, the run's deadline), and the
// RAII resources every run owns (descriptors, shared mappings, unique names).
// Part of ipc_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/interprocess/managed_shared_memory.hpp>
#include <boost/lockfree/spsc_queue.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/bench_util.hpp"
#include "common/child_process.hpp"
#include "common/rdtsc_timer.hpp"
#include "common/wakeup.hpp"
#include "core/compiler.hpp"
#include "core/histogram.hpp"
#include "core/spsc_ring.hpp"
#include "core/thread.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {
namespace {

namespace bip = boost::interprocess;

constexpr std::size_t kRingCapacity = 4096;
constexpr long kMqDepth = 10;                               // the default fs.mqueue.msg_max: no privilege needed
constexpr std::uint64_t kLossyIdleNs = core::ns_from_ms(20U);  // UDP: sender done, nothing for this long = lost
constexpr std::chrono::milliseconds kReapTimeout{2000};

// ---- options (parse_options(), at the end) ----------------------------------------

struct Options {
  bool quick = false;
  int cpu_a = 0;  // parent: pinger, throughput receiver
  int cpu_b = 1;  // child: ponger, throughput sender
  std::uint64_t messages = 0;
  int repeats = 3;
  std::vector<std::string> only;  // empty: every transport
};

// ---- stop flag ----------------------------------------------------------------
// Set by the signal handlers (and by the parent before it abandons a thread
// peer); read by every wait loop of the run in progress. Lock-free atomics are
// async-signal-safe.

enum StopReason : int { kRunning = 0, kTimedOut = 1, kPeerDied = 2, kInterrupted = 3, kAbandoned = 4 };
std::atomic<int> g_stop{kRunning};
std::atomic<bool> g_interrupted{false};  // SIGINT/SIGTERM: stays set for the rest of the program
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

NT_ALWAYS_INLINE bool stopped() noexcept { return g_stop.load(std::memory_order_relaxed) != kRunning; }

void raise_stop(int reason) noexcept {
  int expected = kRunning;  // keep the first reason: it is the cause
  g_stop.compare_exchange_strong(expected, reason, std::memory_order_relaxed);
}

void on_alarm(int /*sig*/) { raise_stop(kTimedOut); }
void on_child(int /*sig*/) { raise_stop(kPeerDied); }
void on_interrupt(int /*sig*/) {
  g_interrupted.store(true, std::memory_order_relaxed);
  raise_stop(kInterrupted);
}

const char* stop_text(int reason) {
  switch (reason) {
    case kTimedOut: return "timed out (the run's deadline passed)";
    case kPeerDied: return "the child process died";
    case kInterrupted: return "interrupted (SIGINT/SIGTERM)";
    case kAbandoned: return "abandoned";
    default: return "stopped";
  }
}

// No SA_RESTART: the signals must interrupt a blocking read, recv, futex wait
// or mq_receive so that its loop sees the stop flag.
void install_signal_handlers() {
  const auto install = [](int sig, void (*handler)(int), int flags) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(sig, &sa, nullptr) != 0) die_errno("sigaction");
  };
  install(SIGALRM, on_alarm, 0);
  install(SIGCHLD, on_child, SA_NOCLDSTOP);
  install(SIGINT, on_interrupt, 0);
  install(SIGTERM, on_interrupt, 0);
  install(SIGPIPE, SIG_IGN, 0);  // a write to a dead peer returns EPIPE instead of killing us
}

// Starts a run: clears the previous run's reason, arms a one-shot deadline.
class RunDeadline {
 public:
  explicit RunDeadline(std::uint64_t ns) {
    g_stop.store(g_interrupted.load(std::memory_order_relaxed) ? kInterrupted : kRunning, std::memory_order_relaxed);
    itimerval v{};
    v.it_value.tv_sec = static_cast<time_t>(ns / core::kNsPerSec);
    v.it_value.tv_usec = static_cast<suseconds_t>((ns % core::kNsPerSec) / core::kNsPerUs);
    ::setitimer(ITIMER_REAL, &v, nullptr);
  }
  ~RunDeadline() {
    const itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
  }
  RunDeadline(const RunDeadline&) = delete;
  RunDeadline& operator=(const RunDeadline&) = delete;
};

// ---- resources ------------------------------------------------------------------

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const noexcept { return fd_; }
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

[[noreturn]] void throw_errno(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

UniqueFd checked_fd(int fd, const char* what) {
  if (fd < 0) throw_errno(what);
  return UniqueFd(fd);
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) throw_errno("fcntl(O_NONBLOCK)");
}

// A T constructed in its own MAP_SHARED anonymous mapping, made before fork():
// parent and child then see the same pages at the same address.
template <typename T>
class SharedObject {
 public:
  SharedObject() {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw_errno("mmap(MAP_SHARED | MAP_ANONYMOUS, " + std::to_string(sizeof(T)) + " bytes)");
    object_ = new (p) T();
  }
  ~SharedObject() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  T& operator*() const noexcept { return *object_; }
  T* operator->() const noexcept { return object_; }

 private:
  T* object_ = nullptr;
};

// Names no other run (of this or another process) uses: pid and a counter.
std::string unique_name(std::string_view prefix) {
  static unsigned counter = 0;
  return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

}  // namespace
}  // namespace nanotick::bench
