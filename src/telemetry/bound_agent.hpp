// BoundAgent: runs an agent (core/agent.hpp) with a telemetry recorder bound
// to the agent's thread. on_start() binds the recorder (ThreadBinding) before
// the agent's own on_start(), on_close() releases it after the agent's own
// on_close(), so everything the agent records between them goes into that
// recorder, whichever thread the runner gave it. With no recorder (nullptr:
// telemetry not asked for) it binds nothing and the agent's telemetry macros
// stay a thread-local load and a branch.
//
// Thread-safety: that of the wrapped agent (one thread runs it); the binding
// is made and ended on that thread, as ThreadBinding requires. do_work() is a
// direct, inlined call: the wrapper costs nothing per duty cycle.
//
// A may be a value type (owned) or an lvalue reference (the caller's agent,
// which must outlive the wrapper); the recorder must outlive every run, and
// the Writer that owns it must outlive the binding (docs/TELEMETRY.md).
#pragma once

#include <exception>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/agent.hpp"
#include "core/compiler.hpp"
#include "telemetry/recorder.hpp"
#include "telemetry/thread_binding.hpp"

namespace nanotick::telemetry {

template <typename A>
  requires core::Agent<std::remove_reference_t<A>>
class BoundAgent {
 public:
  template <typename Arg>
    requires std::is_constructible_v<A, Arg&&>
  BoundAgent(Arg&& agent, Recorder* recorder) : agent_(std::forward<Arg>(agent)), recorder_(recorder) {}

  // One running unit of work: neither copied nor moved once built.
  BoundAgent(const BoundAgent&) = delete;
  BoundAgent& operator=(const BoundAgent&) = delete;

  NT_ALWAYS_INLINE int do_work() { return agent_.do_work(); }
  std::string_view role_name() const noexcept { return std::string_view(agent_.role_name()); }
  // What the agent waits on (core/agent.hpp), for a blocking idle strategy.
  void wait_fds(core::WaitFds& out) { core::agent_wait_fds(agent_, out); }

  // Throws std::logic_error when the recorder is bound elsewhere already (one
  // recorder per recording thread); the agent is then not started. If the
  // agent's own on_start() throws, the binding is released at once.
  void on_start() {
    if (recorder_ != nullptr) binding_.emplace(*recorder_);
    agent_started_ = true;  // attempted: its on_close() is owed, as runners promise
    try {
      core::agent_on_start(agent_);
    } catch (...) {
      binding_.reset();
      throw;
    }
  }

  // Closes the agent if its on_start() was attempted, then releases the
  // binding, whether or not the agent's on_close() throws.
  void on_close() {
    const bool started = agent_started_;
    agent_started_ = false;
    try {
      if (started) core::agent_on_close(agent_);
    } catch (...) {
      binding_.reset();
      throw;
    }
    binding_.reset();
  }

  std::remove_reference_t<A>& agent() noexcept { return agent_; }
  const std::remove_reference_t<A>& agent() const noexcept { return agent_; }
  // Whether the recorder is bound now (between on_start and on_close).
  bool bound() const noexcept { return binding_.has_value(); }

 private:
  A agent_;
  Recorder* const recorder_;
  std::optional<ThreadBinding> binding_;
  bool agent_started_ = false;
};

// BoundAgent{agent, recorder} holds a reference to an lvalue agent and owns an rvalue one.
template <typename Arg>
BoundAgent(Arg&&, Recorder*) -> BoundAgent<Arg>;

}  // namespace nanotick::telemetry
