// ThreadBinding: claims a Recorder for the calling thread (see thread_binding.hpp).
#include "telemetry/thread_binding.hpp"

#include <stdexcept>

namespace nanotick::telemetry {

ThreadBinding::ThreadBinding(Recorder& recorder) : recorder_(recorder), previous_(detail::tl_recorder) {
  // acq_rel: the previous producer's last records (released when it unbound)
  // happen-before this thread's first record on the same ring.
  if (recorder.bound_.exchange(true, std::memory_order_acq_rel)) {
    throw std::logic_error("telemetry: recorder '" + recorder.name() +
                           "' is already bound to a thread; create one recorder per recording thread");
  }
  detail::tl_recorder = &recorder;
}

ThreadBinding::~ThreadBinding() {
  detail::tl_recorder = previous_;
  recorder_.bound_.store(false, std::memory_order_release);
}

}  // namespace nanotick::telemetry
