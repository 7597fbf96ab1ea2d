// The calling thread's recorder: a thread_local pointer that NT_HOP and
// NT_TIMED read, set for a scope by the ThreadBinding RAII guard.
//
// Thread-safety: thread_recorder() reads the calling thread's own variable.
// A ThreadBinding is created and destroyed on the same thread; it claims its
// Recorder with an atomic flag, so binding one Recorder on two threads at once
// (two producers on one SPSC ring) is refused with an exception instead of
// corrupting the ring.
//
// The pointer is constinit and trivially destructible, so reading it is one
// %fs-relative load with no TLS initialisation guard: this is the whole cost
// of a telemetry macro on a thread that has no recorder.
#pragma once

#include "core/compiler.hpp"
#include "telemetry/recorder.hpp"

namespace nanotick::telemetry {

namespace detail {
inline constinit thread_local Recorder* tl_recorder = nullptr;
}  // namespace detail

// The recorder bound to the calling thread, or nullptr.
NT_ALWAYS_INLINE Recorder* thread_recorder() noexcept { return detail::tl_recorder; }

class ThreadBinding {
 public:
  // Binds `recorder` to the calling thread until destruction (then the
  // previous binding, if any, is restored). Throws std::logic_error when the
  // recorder is already bound (on this or another thread): give each thread
  // its own recorder.
  explicit ThreadBinding(Recorder& recorder);
  ~ThreadBinding();

  ThreadBinding(const ThreadBinding&) = delete;
  ThreadBinding& operator=(const ThreadBinding&) = delete;

 private:
  Recorder& recorder_;
  Recorder* const previous_;
};

}  // namespace nanotick::telemetry
