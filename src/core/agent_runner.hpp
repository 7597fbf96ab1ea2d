// Running agents: on a dedicated thread (AgentRunner), on the caller's thread
// (AgentInvoker), or with the idle strategy config names, on a thread of its
// own (make_agent_runner -> ConfiguredAgentRunner) or on the calling thread
// (run_on_this_thread). make_agent_runner(agent, RunnerConfig, thread_name) is
// the one step from a runner's [threads] entry to a running thread that every
// process takes (exchange, trader, floors, FIX gateway).
//
// The runner's duty cycle is
//     agent.on_start();                                   // on the agent thread
//     while (running) idle.idle(agent.do_work());         // static calls, inlined
//     agent.on_close();                                   // on the agent thread, always
// An exception from on_start, do_work or on_close is caught on the agent thread,
// recorded, ends the loop, and is rethrown to the owner by start() (for on_start),
// or by join()/stop(); a runner destroyed with an uncollected failure prints it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/agent.hpp"
#include "core/compiler.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/thread_layout.hpp"

namespace nanotick::core {

// Where and under which name a runner's thread runs.
struct RunnerOptions {
  std::string thread_name;  // empty: the agent's role_name() (the OS keeps 15 chars)
  int cpu = -1;             // CPU to pin the thread to; -1: don't pin
};

namespace detail {

// what() of an exception_ptr, for error reports. Cold path only.
inline std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "non-standard exception";
  }
}

// A blocking idle strategy sleeps on what the agent waits for (its
// wait_fds(), after on_start(): sockets exist by then); other strategies
// and agents without descriptors are left as they are. Throws what
// BlockingIdle::watch() throws.
template <Agent A, IdleStrategy Idle>
void watch_wait_fds(A& agent, Idle& idle) {
  if constexpr (std::is_same_v<Idle, BlockingIdle> && AgentWithWaitFds<A>) {
    WaitFds fds;
    agent.wait_fds(fds);
    if (!fds.empty()) {
      idle.watch(fds.fds());
    }
  } else {
    static_cast<void>(agent);
    static_cast<void>(idle);
  }
}

}  // namespace detail

// Runs one agent (or a CompositeAgent) on its own NamedThread with idle strategy
// Idle. The runner references the agent, which must outlive it.
// Thread-safe: start(), stop(), join() and the destructor belong to the owning
// thread; request_stop(), is_running(), has_failed() and waker().wake() may be
// called from any thread.
template <Agent A, IdleStrategy Idle>
class AgentRunner {
 public:
  // idle_args are forwarded to Idle's constructor (e.g. BackoffParams, a timeout).
  template <typename... IdleArgs>
  explicit AgentRunner(A& agent, RunnerOptions options = {}, IdleArgs&&... idle_args)
      : agent_(agent),
        name_(options.thread_name.empty() ? std::string(std::string_view(agent.role_name()))
                                          : std::move(options.thread_name)),
        cpu_(options.cpu),
        idle_(std::forward<IdleArgs>(idle_args)...) {}

  AgentRunner(const AgentRunner&) = delete;
  AgentRunner& operator=(const AgentRunner&) = delete;

  // Stops and joins. Never throws: an agent failure nobody collected with
  // join()/stop() is printed to stderr instead.
  ~AgentRunner() {
    request_stop();
    if (thread_) {
      thread_->join();
    }
    if (error_ && !error_collected_) {
      std::fprintf(stderr, "agent runner '%s': agent failed and nobody collected the error: %s\n", name_.c_str(),
                   detail::describe_exception(error_).c_str());
    }
  }

  // Starts the agent thread and returns once on_start() has completed on it.
  // Throws std::logic_error if called twice; rethrows on_start()'s exception
  // (after on_close() ran and the thread ended); throws std::system_error if
  // the thread could not be pinned to the requested CPU (after stopping it).
  void start() {
    if (thread_) {
      throw std::logic_error("agent runner '" + name_ + "': start() called twice (a runner runs its agent once)");
    }
    running_.store(true, std::memory_order_release);
    thread_.emplace(name_, cpu_, [this] { run(); });
    std::uint32_t phase = phase_.load(std::memory_order_acquire);
    while (phase == kStarting) {
      phase_.wait(kStarting, std::memory_order_acquire);
      phase = phase_.load(std::memory_order_acquire);
    }
    if (phase == kStartFailed) {
      thread_->join();
      error_collected_ = true;
      std::rethrow_exception(error_);
    }
    if (const std::error_code pin_error = thread_->pin_error()) {
      request_stop();
      thread_->join();
      throw std::system_error(pin_error, "agent runner '" + name_ + "': cannot pin to CPU " + std::to_string(cpu_) +
                                             " (choose a CPU this process may run on, or -1)");
    }
  }

  // Asks the agent thread to finish its current duty cycle and leave the loop,
  // waking it if it is parked in a blocking idle strategy. Returns at once.
  void request_stop() noexcept {
    running_.store(false, std::memory_order_release);
    if constexpr (WakeableIdleStrategy<Idle>) {
      idle_.signal();
    }
  }

  // Waits for the agent thread to end (after request_stop() or an agent
  // failure), then rethrows the agent's exception, once, if it failed.
  void join() {
    if (thread_) {
      thread_->join();
    }
    if (error_ && !error_collected_) {
      error_collected_ = true;
      std::rethrow_exception(error_);
    }
  }

  // request_stop() then join().
  void stop() {
    request_stop();
    join();
  }

  // True from start() until a stop was requested or the agent failed.
  bool is_running() const noexcept { return running_.load(std::memory_order_acquire); }
  // True once the agent threw; the loop has ended or is ending.
  bool has_failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // The recorded failure; read it after join() (or after start() threw).
  std::exception_ptr error() const noexcept { return error_; }

  const std::string& name() const noexcept { return name_; }
  A& agent() noexcept { return agent_; }
  Idle& idle_strategy() noexcept { return idle_; }

  // A handle producers use to wake this agent after publishing work to it.
  IdleWaker waker() noexcept {
    if constexpr (std::is_same_v<Idle, BlockingIdle>) {
      return IdleWaker(&idle_);
    } else {
      return IdleWaker();
    }
  }

 private:
  static constexpr std::uint32_t kStarting = 0;
  static constexpr std::uint32_t kRunning = 1;
  static constexpr std::uint32_t kStartFailed = 2;

  // The agent thread's body. Nothing escapes it: failures are recorded.
  void run() noexcept {
    bool started = false;
    try {
      agent_on_start(agent_);
      detail::watch_wait_fds(agent_, idle_);
      started = true;
    } catch (...) {
      record_failure(std::current_exception());
    }
    phase_.store(started ? kRunning : kStartFailed, std::memory_order_release);
    phase_.notify_all();
    if (started) {
      try {
        idle_.reset();
        while (running_.load(std::memory_order_acquire)) {
          idle_.idle(agent_.do_work());
        }
      } catch (...) {
        record_failure(std::current_exception());
      }
    }
    try {
      agent_on_close(agent_);
    } catch (...) {
      record_failure(std::current_exception());
    }
  }

  // Agent thread only. Keeps the first failure; later ones (e.g. from on_close
  // after a failed do_work) are usually consequences of it.
  NT_COLD void record_failure(std::exception_ptr error) noexcept {
    if (!error_) {
      error_ = std::move(error);
    }
    failed_.store(true, std::memory_order_release);
    running_.store(false, std::memory_order_release);
  }

  // Set at construction, read-only afterwards.
  A& agent_;
  const std::string name_;
  const int cpu_;
  // Written by the owner (start/request_stop) and by the agent thread on failure;
  // read by the agent thread every duty cycle.
  std::atomic<bool> running_{false};
  // Written by the agent thread, read by anyone.
  std::atomic<bool> failed_{false};
  std::atomic<std::uint32_t> phase_{kStarting};
  // Written by the agent thread; read by the owner only after the thread ended
  // (join) or after observing phase_ == kStartFailed.
  std::exception_ptr error_;
  // Owner thread only.
  bool error_collected_ = false;
  // Used by the agent thread; a BlockingIdle also takes signal() from producers
  // and is cache-line aligned so their writes don't disturb the fields above.
  Idle idle_;
  // Declared last so that it is destroyed (joined) first.
  std::optional<NamedThread> thread_;
};

// Runs an agent's duty cycle on the caller's thread: for tests, and for a
// caller that drives several things from its own loop. Thread-safe: no, one
// thread. on_close() is called once if on_start() was attempted (also when it
// threw); exceptions from on_start/do_work/on_close propagate to the caller.
template <Agent A>
class AgentInvoker {
 public:
  explicit AgentInvoker(A& agent) noexcept : agent_(agent) {}
  AgentInvoker(const AgentInvoker&) = delete;
  AgentInvoker& operator=(const AgentInvoker&) = delete;

  // Closes the agent if still open; an on_close() failure is printed, not thrown.
  ~AgentInvoker() {
    if (started_ && !closed_) {
      try {
        close();
      } catch (...) {
        std::fprintf(stderr, "agent invoker '%s': on_close failed: %s\n",
                     std::string(std::string_view(agent_.role_name())).c_str(),
                     detail::describe_exception(std::current_exception()).c_str());
      }
    }
  }

  // Calls on_start() once. If it throws, the agent is closed and the exception
  // rethrown. Throws std::logic_error if called twice.
  void start() {
    if (started_) {
      throw std::logic_error("agent invoker '" + std::string(std::string_view(agent_.role_name())) +
                             "': start() called twice");
    }
    started_ = true;
    try {
      agent_on_start(agent_);
    } catch (...) {
      closed_ = true;
      try {
        agent_on_close(agent_);
      } catch (...) {
        // The on_start failure is the one worth reporting.
      }
      throw;
    }
  }

  // One duty cycle: do_work() once the agent is started and until it is closed,
  // otherwise 0.
  NT_ALWAYS_INLINE int invoke() {
    if (!started_ || closed_) [[unlikely]] {
      return 0;
    }
    return agent_.do_work();
  }

  // Calls on_close() once (if started). Later calls do nothing.
  void close() {
    if (!started_ || closed_) {
      return;
    }
    closed_ = true;
    agent_on_close(agent_);
  }

  bool is_started() const noexcept { return started_; }
  bool is_running() const noexcept { return started_ && !closed_; }
  bool is_closed() const noexcept { return closed_; }
  A& agent() noexcept { return agent_; }

 private:
  A& agent_;
  bool started_ = false;
  bool closed_ = false;
};

// Idle strategy choice read from config ("spin" | "yield" | "backoff" | "block")
// with the parameters of the strategies that have some.
struct IdleConfig {
  IdleKind kind = IdleKind::backoff;
  BackoffParams backoff{};
  std::chrono::nanoseconds block_timeout = std::chrono::milliseconds(1);
};

// A runner whose idle strategy was picked at start-up: holds one of the four
// AgentRunner instantiations, so the duty-cycle loop stays static; only these
// control calls go through a std::visit. Thread-safety as AgentRunner.
template <Agent A>
class ConfiguredAgentRunner {
 public:
  using Runner =
      std::variant<std::unique_ptr<AgentRunner<A, BusySpinIdle>>, std::unique_ptr<AgentRunner<A, YieldIdle>>,
                   std::unique_ptr<AgentRunner<A, BackoffIdle>>, std::unique_ptr<AgentRunner<A, BlockingIdle>>>;

  explicit ConfiguredAgentRunner(Runner runner) noexcept : runner_(std::move(runner)) {}

  IdleKind kind() const noexcept {
    switch (runner_.index()) {
      case 0: return IdleKind::spin;
      case 1: return IdleKind::yield;
      case 2: return IdleKind::backoff;
      default: return IdleKind::block;
    }
  }

  void start() {
    visit([](auto& runner) { runner.start(); });
  }
  void request_stop() noexcept {
    visit([](auto& runner) { runner.request_stop(); });
  }
  void join() {
    visit([](auto& runner) { runner.join(); });
  }
  void stop() {
    visit([](auto& runner) { runner.stop(); });
  }
  bool is_running() const noexcept {
    return std::visit([](const auto& runner) { return runner->is_running(); }, runner_);
  }
  bool has_failed() const noexcept {
    return std::visit([](const auto& runner) { return runner->has_failed(); }, runner_);
  }
  std::exception_ptr error() const noexcept {
    return std::visit([](const auto& runner) { return runner->error(); }, runner_);
  }
  IdleWaker waker() noexcept {
    return visit([](auto& runner) { return runner.waker(); });
  }

  // Calls f(AgentRunner<A, Idle>&) with the concrete runner.
  template <typename F>
  decltype(auto) visit(F&& f) {
    return std::visit([&f](auto& runner) -> decltype(auto) { return f(*runner); }, runner_);
  }

 private:
  Runner runner_;
};

// Builds the runner for config.kind (start-up code: may throw on bad parameters).
template <Agent A>
ConfiguredAgentRunner<A> make_agent_runner(A& agent, RunnerOptions options, const IdleConfig& config) {
  return visit_idle_kind(config.kind, [&]<typename Idle>(std::type_identity<Idle>) {
    using R = AgentRunner<A, Idle>;
    if constexpr (std::is_same_v<Idle, BackoffIdle>) {
      return ConfiguredAgentRunner<A>(std::make_unique<R>(agent, std::move(options), config.backoff));
    } else if constexpr (std::is_same_v<Idle, BlockingIdle>) {
      return ConfiguredAgentRunner<A>(std::make_unique<R>(agent, std::move(options), config.block_timeout));
    } else {
      return ConfiguredAgentRunner<A>(std::make_unique<R>(agent, std::move(options)));
    }
  });
}

// The runner a thread layout configures (core/thread_layout.hpp: the CPU to
// pin to and the idle kind, from a process's [threads] table), on a thread
// named `thread_name`. Every process builds its runners here, so a runner's
// config means the same everywhere. Start-up code: may throw on bad
// parameters; pinning fails (naming the CPU) at start().
template <Agent A>
ConfiguredAgentRunner<A> make_agent_runner(A& agent, const RunnerConfig& runner, std::string thread_name) {
  IdleConfig idle;
  idle.kind = runner.idle;
  return make_agent_runner(agent, RunnerOptions{.thread_name = std::move(thread_name), .cpu = runner.cpu}, idle);
}

// Runs an agent's duty cycle on the calling thread -- a process's own thread
// as one of its runners (the trader's "engine") -- with the idle strategy
// `config` names, until stop() returns true (checked before every cycle):
//     agent.on_start(); while (!stop()) idle.idle(agent.do_work()); agent.on_close();
// The loop is static per idle kind, as in AgentRunner. Pinning the thread is
// the caller's (it may already run elsewhere). Exceptions propagate, after
// on_close() (AgentInvoker).
template <Agent A, typename Stop>
void run_on_this_thread(A& agent, const IdleConfig& config, Stop&& stop) {
  visit_idle_kind(config.kind, [&]<typename Idle>(std::type_identity<Idle>) {
    auto run = [&](Idle& idle) {
      AgentInvoker<A> invoker(agent);
      invoker.start();
      detail::watch_wait_fds(agent, idle);  // a throw closes the agent (the invoker's destructor)
      while (!stop()) idle.idle(invoker.invoke());
      invoker.close();
    };
    if constexpr (std::is_same_v<Idle, BackoffIdle>) {
      Idle idle(config.backoff);
      run(idle);
    } else if constexpr (std::is_same_v<Idle, BlockingIdle>) {
      Idle idle(config.block_timeout);
      run(idle);
    } else {
      Idle idle;
      run(idle);
    }
  });
}

}  // namespace nanotick::core
