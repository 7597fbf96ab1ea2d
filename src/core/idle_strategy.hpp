// Idle strategies: what an agent thread does when a duty cycle found no work.
//
// Every strategy has `void idle(int work_count)` (called after each do_work();
// work_count > 0 means "work was done, don't idle") and `void reset()`. They are
// plain classes chosen as a template parameter of the runner, so the call in the
// duty-cycle loop is static and inlined; the name-to-type switch happens once at
// start-up (parse_idle_kind + visit_idle_kind / make_agent_runner).
//
//   spin     BusySpinIdle  pause instruction; lowest latency, burns a whole core
//   (none)   NoOpIdle      nothing at all; for invokers and composed agents
//   yield    YieldIdle     sched_yield(); gives the core away if someone else wants it
//   backoff  BackoffIdle   spin N -> yield M -> park with doubling sleep up to a max
//   block    BlockingIdle  sleep in the kernel on what the agent waits for -- a futex a
//                          producer signals, and the agent's sockets and doorbells
//                          (epoll, when it names some: watch()) -- or a timeout
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/compiler.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace nanotick::core {

// What every idle strategy offers to the runner.
template <typename S>
concept IdleStrategy = requires(S& s, int work_count) {
  s.idle(work_count);
  s.reset();
};

// Idle strategies that sleep until a producer wakes them (the runner's stop()
// also calls signal() so that it never waits for a timeout).
template <typename S>
concept WakeableIdleStrategy = IdleStrategy<S> && requires(S& s) { s.signal(); };

// Busy-spin with the CPU's pause hint. Thread-safe: stateless.
class BusySpinIdle {
 public:
  // One spin-loop hint: lets the sibling hyper-thread run and saves power, and
  // avoids the memory-order mis-speculation penalty when the spun-on line changes.
  static NT_ALWAYS_INLINE void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
  }

  NT_ALWAYS_INLINE void idle(int work_count) noexcept {
    if (work_count > 0) {
      return;
    }
    pause();
  }
  void reset() noexcept {}
};

// Does nothing: the caller's loop decides. Thread-safe: stateless.
class NoOpIdle {
 public:
  NT_ALWAYS_INLINE void idle(int /*work_count*/) noexcept {}
  void reset() noexcept {}
};

// Gives the rest of the time slice away with sched_yield(). Thread-safe: stateless.
class YieldIdle {
 public:
  NT_ALWAYS_INLINE void idle(int work_count) noexcept {
    if (work_count > 0) {
      return;
    }
    ::sched_yield();
  }
  void reset() noexcept {}
};

// Parameters of BackoffIdle. Validated by the BackoffIdle constructor.
struct BackoffParams {
  std::uint32_t max_spins = 100;  // idle calls spent spinning before yielding
  std::uint32_t max_yields = 10;  // idle calls spent yielding before parking
  std::chrono::nanoseconds min_park = std::chrono::microseconds(1);  // first sleep
  std::chrono::nanoseconds max_park = std::chrono::milliseconds(1);  // sleeps double up to this
};

// Spin, then yield, then park with an exponentially growing sleep; any work
// resets it to the start. Thread-safe: no, owned by the one agent thread.
//
//   not_idle --idle(0)--> spinning --max_spins done--> yielding --max_yields done--> parking
//       ^                                                                              |
//       +------------------------- idle(n > 0) or reset() from any state -------------+
//
// state() is the action taken by the last idle(0) call; park_period() is the
// length of the last sleep (min_park on entering parking, then doubled up to max_park).
class BackoffIdle {
 public:
  enum class State : std::uint8_t { not_idle, spinning, yielding, parking };

  // Throws std::invalid_argument if min_park <= 0 or max_park < min_park.
  explicit BackoffIdle(const BackoffParams& params = {});

  NT_ALWAYS_INLINE void idle(int work_count) noexcept {
    if (work_count > 0) {
      reset();
      return;
    }
    switch (state_) {
      case State::not_idle: state_ = State::spinning; [[fallthrough]];
      case State::spinning:
        if (spins_ < params_.max_spins) {
          ++spins_;
          BusySpinIdle::pause();
          return;
        }
        state_ = State::yielding;
        [[fallthrough]];
      case State::yielding:
        if (yields_ < params_.max_yields) {
          ++yields_;
          ::sched_yield();
          return;
        }
        state_ = State::parking;
        park_period_ = params_.min_park;
        park(park_period_);
        return;
      case State::parking:
        park_period_ = park_period_ < params_.max_park / 2 ? park_period_ * 2 : params_.max_park;
        park(park_period_);
        return;
    }
  }

  NT_ALWAYS_INLINE void reset() noexcept {
    state_ = State::not_idle;
    spins_ = 0;
    yields_ = 0;
    park_period_ = std::chrono::nanoseconds::zero();
  }

  State state() const noexcept { return state_; }
  std::uint32_t spins() const noexcept { return spins_; }
  std::uint32_t yields() const noexcept { return yields_; }
  std::chrono::nanoseconds park_period() const noexcept { return park_period_; }
  const BackoffParams& params() const noexcept { return params_; }

 private:
  NT_COLD static void park(std::chrono::nanoseconds period) noexcept;  // nanosleep

  BackoffParams params_;
  State state_ = State::not_idle;
  std::uint32_t spins_ = 0;
  std::uint32_t yields_ = 0;
  std::chrono::nanoseconds park_period_{0};
};

// Parks the agent thread on a futex until a producer calls signal() or the
// timeout expires. Thread-safe: signal() may be called from any number of
// threads at any time; idle()/wait()/reset() only from the one agent thread.
//
// Why a futex and not an eventfd: the state word below lets signal() skip the
// system call entirely while the agent is awake (one atomic exchange, no fd, no
// kernel object), and FUTEX_WAIT takes a relative timeout directly. An eventfd
// costs a write() on every signal and a read() on every wake; its one advantage,
// being pollable together with sockets in epoll, matters for a network agent,
// which should then idle in epoll_wait instead.
//
// No lost wake-up: the producer publishes its data, then signal() exchanges the
// word to kSignalled. The agent, after a do_work() that found nothing, moves the
// word kIdle -> kSleeping with a CAS and sleeps only while the word still reads
// kSleeping (FUTEX_WAIT compares it atomically in the kernel). A signal landing
// between the agent's check and its sleep either makes the CAS fail or changes
// the word before FUTEX_WAIT, which then returns at once; a signal landing after
// the sleep began sees kSleeping and calls FUTEX_WAKE. Consuming a signal is an
// acquire exchange, so the next do_work() sees everything published before it.
//
// Watching descriptors (watch(), called by the runner with the agent's
// wait_fds(), core/agent.hpp): an agent that reads sockets cannot be woken
// by a futex, so it sleeps in epoll_wait on its descriptors instead, and
// signal() rings an eventfd in the same set -- the same state word decides
// whether to ring, so a producer still pays one atomic exchange and no
// system call while the agent is awake. One wait, on exactly what the agent
// waits for, woken by the first of them: a socket's input, a doorbell, a
// signal, or the timeout (timers and sources nothing can wake).
class BlockingIdle {
 public:
  // Result of one wait(): a signal was consumed (pending already, or woke us),
  // or none was: the timeout, a watched descriptor's input, or a spurious wake-up.
  enum class WaitResult : std::uint8_t { signalled, timed_out };

  static constexpr std::chrono::nanoseconds kNoTimeout = std::chrono::nanoseconds::max();

  // timeout: longest sleep without a signal, so that agents with sources that
  // cannot signal (timers, sockets polled in do_work) still make progress.
  // kNoTimeout sleeps until signalled. Throws std::invalid_argument if <= 0.
  explicit BlockingIdle(std::chrono::nanoseconds timeout = std::chrono::milliseconds(1));
  BlockingIdle(const BlockingIdle&) = delete;
  BlockingIdle& operator=(const BlockingIdle&) = delete;
  ~BlockingIdle();

  // Agent thread, before its first wait(), once: from now on sleep in
  // epoll_wait on `fds` (each watched for input; an epoll fd of the agent's
  // own nests) and on an eventfd that signal() rings. Each fd must stay open
  // while this waits. Throws std::logic_error if called twice,
  // std::system_error if the epoll set cannot be made (naming the fd).
  void watch(std::span<const int> fds);
  // Whether watch() was called: sleeps are epoll_waits.
  bool watching() const noexcept { return epoll_fd_ >= 0; }

  NT_ALWAYS_INLINE void idle(int work_count) noexcept {
    if (work_count > 0) {
      return;
    }
    static_cast<void>(wait());
  }
  void reset() noexcept {}

  // Producer side: call after publishing the data the agent should see.
  NT_ALWAYS_INLINE void signal() noexcept {
    // acq_rel: seeing kSleeping also shows watch()'s descriptors (set before the agent's first sleep).
    if (state_.exchange(kSignalled, std::memory_order_acq_rel) == kSleeping) [[unlikely]] {
      wake();
    }
  }

  // Agent side: consume a pending signal, or sleep until one arrives or the timeout.
  [[nodiscard]] WaitResult wait() noexcept {
    std::uint32_t expected = kIdle;
    if (!state_.compare_exchange_strong(expected, kSleeping, std::memory_order_release, std::memory_order_relaxed)) {
      // expected == kSignalled: a signal arrived since the last wait.
      state_.exchange(kIdle, std::memory_order_acquire);
      return WaitResult::signalled;
    }
    sleep();
    return state_.exchange(kIdle, std::memory_order_acquire) == kSignalled ? WaitResult::signalled
                                                                           : WaitResult::timed_out;
  }

  std::chrono::nanoseconds timeout() const noexcept { return timeout_; }

 private:
  static constexpr std::uint32_t kIdle = 0;       // agent awake, nothing pending
  static constexpr std::uint32_t kSleeping = 1;   // agent in (or entering) FUTEX_WAIT
  static constexpr std::uint32_t kSignalled = 2;  // a signal is pending

  NT_COLD void sleep() noexcept;  // FUTEX_WAIT while the word is kSleeping, or epoll_wait (watching)
  NT_COLD void wake() noexcept;   // FUTEX_WAKE one waiter, or ring the eventfd (watching)

  // Written by producers (signal) and the agent (wait); alone on its line.
  alignas(kCacheLine) std::atomic<std::uint32_t> state_{kIdle};
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free &&
                    sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
                "the futex word must be a plain 32-bit integer");
  // Read-only after construction; read by the agent only when it goes to sleep.
  std::chrono::nanoseconds timeout_;
  // Set by watch() on the agent thread before its first sleep; read by
  // producers only after they saw kSleeping (ordered by the state word).
  int epoll_fd_ = -1;
  int event_fd_ = -1;
};

// A handle producers keep to wake an agent idling in a BlockingIdle; a no-op
// when the agent uses another strategy. Thread-safe: wake() from any thread,
// as long as the BlockingIdle (i.e. its runner) outlives the handle.
class IdleWaker {
 public:
  IdleWaker() noexcept = default;
  explicit IdleWaker(BlockingIdle* target) noexcept : target_(target) {}
  NT_ALWAYS_INLINE void wake() const noexcept {
    if (target_ != nullptr) {
      target_->signal();
    }
  }
  bool is_active() const noexcept { return target_ != nullptr; }

 private:
  BlockingIdle* target_ = nullptr;
};

// Idle strategies selectable by name in config.
enum class IdleKind : std::uint8_t { spin, yield, backoff, block };

// Config values: "spin", "yield", "backoff", "block".
std::string_view to_string(IdleKind kind) noexcept;
std::optional<IdleKind> try_parse_idle_kind(std::string_view name) noexcept;
// Throws std::invalid_argument naming the bad value and the accepted ones.
IdleKind parse_idle_kind(std::string_view name);

template <IdleKind K>
struct IdleTypeFor;
template <>
struct IdleTypeFor<IdleKind::spin> {
  using type = BusySpinIdle;
};
template <>
struct IdleTypeFor<IdleKind::yield> {
  using type = YieldIdle;
};
template <>
struct IdleTypeFor<IdleKind::backoff> {
  using type = BackoffIdle;
};
template <>
struct IdleTypeFor<IdleKind::block> {
  using type = BlockingIdle;
};

// Start-up switch from a runtime kind to a static type: calls
// f(std::type_identity<Strategy>{}) and returns its result, so that the code
// instantiated inside f (e.g. a runner's loop) calls the strategy statically.
template <typename F>
decltype(auto) visit_idle_kind(IdleKind kind, F&& f) {
  switch (kind) {
    case IdleKind::spin: return std::forward<F>(f)(std::type_identity<BusySpinIdle>{});
    case IdleKind::yield: return std::forward<F>(f)(std::type_identity<YieldIdle>{});
    case IdleKind::backoff: return std::forward<F>(f)(std::type_identity<BackoffIdle>{});
    case IdleKind::block: break;
  }
  return std::forward<F>(f)(std::type_identity<BlockingIdle>{});
}

}  // namespace nanotick::core
