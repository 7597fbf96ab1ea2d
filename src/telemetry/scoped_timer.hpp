// ScopedTimer: a function timer. Reads the clock at construction and, at
// destruction, records one Record for its point with tsc = the start and
// cycles = the elapsed ticks (saturated). Used through NT_TIMED.
//
// Thread-safety: lives on one thread's stack and records into that thread's
// recorder (the one bound when it was constructed); not shareable.
//
// With no recorder bound it reads no clock and records nothing: the cost is
// the thread_local load and two predictable branches. Both stamps are plain
// rdtsc (no fence): a fence would cost more than the short functions it times
// and would serialise the very pipeline being measured; the price is that a
// stamp may be taken a few instructions early or late.
#pragma once

#include <cstdint>

#include "core/compiler.hpp"
#include "telemetry/points.hpp"
#include "telemetry/record.hpp"
#include "telemetry/recorder.hpp"
#include "telemetry/thread_binding.hpp"

namespace nanotick::telemetry {

class ScopedTimer {
 public:
  NT_ALWAYS_INLINE explicit ScopedTimer(Point point, std::uint64_t key = 0) noexcept
      : recorder_(thread_recorder()), point_(point), key_(key) {
    if (recorder_ != nullptr) start_ = recorder_->now();
  }

  NT_ALWAYS_INLINE ~ScopedTimer() {
    if (recorder_ != nullptr) {
      const std::uint64_t end = recorder_->now();
      static_cast<void>(recorder_->record_at(start_, point_, key_, 0, saturate_ticks(start_, end)));
    }
  }

  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Recorder* const recorder_;
  const Point point_;
  const std::uint64_t key_;
  std::uint64_t start_ = 0;
};

}  // namespace nanotick::telemetry
