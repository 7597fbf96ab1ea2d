// Agents: the unit of work a runner thread drives, and static composition of them.
//
// An agent is any type with
//   int do_work();                   // one duty cycle: 0 = found nothing, > 0 = work done
//   std::string_view role_name();    // for thread names, logs and error reports
// and, optionally,
//   void on_start();                 // on the agent's thread, before the first do_work()
//   void on_close();                 // on the agent's thread, after the last do_work()
//   void wait_fds(WaitFds& out);     // what it waits on: descriptors that turn readable
//                                    // when it may have work (for the "block" idle strategy)
// The same agent can run on its own thread (AgentRunner), on the caller's thread
// (AgentInvoker) or composed with others on one thread (CompositeAgent): the
// thread layout is configuration, not code (docs/ARCHITECTURE.md, principle 4).
#pragma once

#include <array>
#include <cstddef>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/compiler.hpp"

namespace nanotick::core {

template <typename A>
concept Agent = requires(A& agent) {
  { agent.do_work() } -> std::same_as<int>;
  { agent.role_name() } -> std::convertible_to<std::string_view>;
};

template <typename A>
concept AgentWithOnStart = Agent<A> && requires(A& agent) { agent.on_start(); };

template <typename A>
concept AgentWithOnClose = Agent<A> && requires(A& agent) { agent.on_close(); };

// The descriptors an agent waits on, collected once after on_start() by a
// runner whose idle strategy sleeps in the kernel (BlockingIdle): it sleeps in
// epoll_wait on all of them instead of a blind timeout, so a socket's input
// (or an eventfd doorbell) wakes it at once. A descriptor whose set of
// sockets changes while running (sessions come and go) is an epoll fd of the
// agent's own: epoll fds nest. Each must stay open while the runner runs.
// Fixed capacity: collecting never allocates, and a thread waits on a handful.
class WaitFds {
 public:
  static constexpr std::size_t kCapacity = 8;

  // Throws std::length_error past kCapacity (start-up code); ignores fd < 0
  // (an optional source that is not there).
  void add(int fd) {
    if (fd < 0) {
      return;
    }
    if (size_ == kCapacity) {
      throw std::length_error("an agent waits on more than " + std::to_string(kCapacity) +
                              " descriptors: give it an epoll set of its own");
    }
    fds_[size_++] = fd;
  }
  std::span<const int> fds() const noexcept { return {fds_.data(), size_}; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  std::array<int, kCapacity> fds_{};
  std::size_t size_ = 0;
};

template <typename A>
concept AgentWithWaitFds = Agent<A> && requires(A& agent, WaitFds& out) { agent.wait_fds(out); };

// Calls the optional hooks when the agent has them; no-ops otherwise.
template <Agent A>
void agent_on_start(A& agent) {
  if constexpr (AgentWithOnStart<A>) {
    agent.on_start();
  }
}

template <Agent A>
void agent_on_close(A& agent) {
  if constexpr (AgentWithOnClose<A>) {
    agent.on_close();
  }
}

template <Agent A>
void agent_wait_fds(A& agent, WaitFds& out) {
  if constexpr (AgentWithWaitFds<A>) {
    agent.wait_fds(out);
  }
}

// Several agents run as one: do_work() calls each in order and returns the sum.
// Composition is static (a tuple and fold expressions): no virtual calls, no
// std::function. Thread-safe: no; it is one agent and lives on one thread.
//
// Each A may be a value type (the composite owns the agent) or an lvalue
// reference (the caller owns it and must keep it alive). The deduction guide
// picks references for lvalue arguments and values for rvalues:
//   CompositeAgent both{gateway, sequencer};   // CompositeAgent<Gateway&, Sequencer&>
//   CompositeAgent owned{Gateway{}, Engine{}}; // CompositeAgent<Gateway, Engine>
//
// on_start() starts the agents in order; if one throws, the exception propagates
// and only the agents already started are remembered. on_close() closes exactly
// the started agents, in reverse order, calling every one even if some throw,
// then rethrows the first exception.
template <typename... A>
  requires(sizeof...(A) > 0 && (Agent<std::remove_reference_t<A>> && ...))
class CompositeAgent {
 public:
  static constexpr std::size_t kSize = sizeof...(A);

  CompositeAgent()
    requires(!std::is_reference_v<A> && ...)
      : role_name_(make_role_name()) {}

  template <typename... Args>
    requires(sizeof...(Args) == sizeof...(A) && (std::is_constructible_v<A, Args&&> && ...))
  explicit CompositeAgent(Args&&... args) : agents_(std::forward<Args>(args)...), role_name_(make_role_name()) {}

  // One running unit of work: neither copied nor moved once built.
  CompositeAgent(const CompositeAgent&) = delete;
  CompositeAgent& operator=(const CompositeAgent&) = delete;

  // The comma fold sequences the calls left to right (a `+` fold would not).
  NT_ALWAYS_INLINE int do_work() {
    return std::apply(
        [](auto&... agent) {
          int work = 0;
          ((work += agent.do_work()), ...);
          return work;
        },
        agents_);
  }

  // "[role_a,role_b,...]", computed once at construction.
  std::string_view role_name() const noexcept { return role_name_; }

  void on_start() { start_from<0>(); }

  // Every agent's descriptors, in order.
  void wait_fds(WaitFds& out) {
    std::apply([&out](auto&... agent) { (agent_wait_fds(agent, out), ...); }, agents_);
  }

  void on_close() {
    std::exception_ptr first_error;
    close_down<kSize>(first_error);
    started_ = 0;
    if (first_error) {
      std::rethrow_exception(first_error);
    }
  }

  template <std::size_t I>
  decltype(auto) agent() noexcept {
    return std::get<I>(agents_);
  }
  template <std::size_t I>
  decltype(auto) agent() const noexcept {
    return std::get<I>(agents_);
  }

  // Number of agents whose on_start() completed and which have not been closed.
  std::size_t started_count() const noexcept { return started_; }

 private:
  std::string make_role_name() {
    std::string name = "[";
    std::apply(
        [&name](auto&... agent) {
          std::size_t i = 0;
          ((name.append(i++ == 0 ? "" : ",").append(std::string_view(agent.role_name()))), ...);
        },
        agents_);
    name += ']';
    return name;
  }

  template <std::size_t I>
  void start_from() {
    if constexpr (I < kSize) {
      agent_on_start(std::get<I>(agents_));
      started_ = I + 1;
      start_from<I + 1>();
    }
  }

  // Closes agents [0, N) that were started, from the last to the first.
  template <std::size_t N>
  void close_down(std::exception_ptr& first_error) noexcept {
    if constexpr (N > 0) {
      if (N <= started_) {
        try {
          agent_on_close(std::get<N - 1>(agents_));
        } catch (...) {
          if (!first_error) {
            first_error = std::current_exception();
          }
        }
      }
      close_down<N - 1>(first_error);
    }
  }

  std::tuple<A...> agents_;
  std::string role_name_;
  std::size_t started_ = 0;
};

template <typename... A>
CompositeAgent(A&&...) -> CompositeAgent<A...>;

}  // namespace nanotick::core
