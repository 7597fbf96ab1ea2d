// The instrumentation macros: the one header instrumented code includes.
//
//   NT_HOP(ex_tcp_read, key);             // a hop stamp: now, key
//   NT_HOP(tr_decision, md_seq, order);   // with aux
//   NT_TIMED(fn_risk_check);              // times the rest of the enclosing scope
//   NT_TIMED(fn_book_match, order_key);   // a timer may carry a key too
//   NT_HOP_AT(tr_tcp_write, tsc, key);    // a hop at a clock reading taken earlier
//   if (NT_RECORDING()) { ... }           // work done only to feed telemetry
//   if (Recorder* r = NT_RECORDER()) { ... }  // several records from one clock read
//
// Points are named without their enum prefix and checked at compile time:
// an unknown name does not compile, nor does a timer in NT_HOP or a hop in
// NT_TIMED. Thread-safety: each macro records into the calling thread's own
// recorder (thread_binding.hpp); nothing is shared.
//
// On a thread with no recorder bound the macros record nothing and do not
// evaluate their key / aux arguments (NT_TIMED's key excepted: it is stored
// at the start of the scope).
//
// NT_HOP_AT stamps with a TSC the caller already has (a socket layer's
// reading right after its system call, the start of a step whose timer is
// recorded too), so a hop costs no clock read of its own. NT_RECORDING() and
// NT_RECORDER() let instrumented code skip work that only feeds telemetry
// (extracting a key from a packet, queueing a stamp until a later write) and
// share one clock reading among several records (Recorder::record_at); both
// are constant false / nullptr with the switch off, so that code is dead and
// removed by the compiler. Code that dereferences NT_RECORDER() belongs in
// `if constexpr (NANOTICK_TELEMETRY != 0)`: GCC 12 warns (-Wnonnull) about the
// null `this` of a dead call it has not removed yet when it checks.
//
// Build switch: NANOTICK_TELEMETRY (CMake option of the same name, default
// ON) is defined to 1 or 0 on the nanotick_telemetry target and so on every
// target linking it. With 0 both macros expand to compile-time checks only:
// no code, no clock read, arguments type-checked but never evaluated. Only
// the macros depend on the switch (Recorder, Writer and ScopedTimer are the
// same in both builds), so one program may mix translation units built either
// way without breaking the one-definition rule.
#pragma once

#if !defined(NANOTICK_TELEMETRY)
// Link the nanotick_telemetry CMake target: it defines the macro to 1 or 0 from the option NANOTICK_TELEMETRY.
#error "NANOTICK_TELEMETRY is not defined: link the nanotick_telemetry CMake target"
#endif

#include <cstdint>

#include "core/compiler.hpp"
#include "telemetry/points.hpp"
#include "telemetry/recorder.hpp"
#include "telemetry/scoped_timer.hpp"
#include "telemetry/thread_binding.hpp"

namespace nanotick::telemetry::detail {
// Never called: only named inside sizeof, so that compiled-out macros still
// type-check their arguments without evaluating them.
template <class... Args>
int unevaluated(const Args&...) noexcept;

// NT_HOP_AT's call: a hop record at `tsc` (aux optional, cycles 0).
NT_ALWAYS_INLINE bool record_hop_at(Recorder& recorder, std::uint64_t tsc, Point point, std::uint64_t key,
                                    std::uint64_t aux = 0) noexcept {
  return recorder.record_at(tsc, point, key, aux, 0);
}
}  // namespace nanotick::telemetry::detail

#define NT_TELEMETRY_CONCAT_INNER(a, b) a##b
#define NT_TELEMETRY_CONCAT(a, b) NT_TELEMETRY_CONCAT_INNER(a, b)

#if NANOTICK_TELEMETRY

#define NT_RECORDER() (::nanotick::telemetry::thread_recorder())
#define NT_RECORDING() (::nanotick::telemetry::thread_recorder() != nullptr)

#define NT_HOP_AT(point_, tsc_, ...)                                                                         \
  do {                                                                                                       \
    if (::nanotick::telemetry::Recorder* const nt_hop_recorder_ = ::nanotick::telemetry::thread_recorder();  \
        nt_hop_recorder_ != nullptr) {                                                                       \
      static_cast<void>(::nanotick::telemetry::detail::record_hop_at(                                        \
          *nt_hop_recorder_, tsc_, ::nanotick::telemetry::hop_point<::nanotick::telemetry::Point::point_>(), \
          __VA_ARGS__));                                                                                     \
    }                                                                                                        \
  } while (false)

#define NT_HOP(point_, ...)                                                                                 \
  do {                                                                                                      \
    if (::nanotick::telemetry::Recorder* const nt_hop_recorder_ = ::nanotick::telemetry::thread_recorder(); \
        nt_hop_recorder_ != nullptr) {                                                                      \
      static_cast<void>(nt_hop_recorder_->record(                                                           \
          ::nanotick::telemetry::hop_point<::nanotick::telemetry::Point::point_>(), __VA_ARGS__));          \
    }                                                                                                       \
  } while (false)

#define NT_TIMED(point_, ...)                                                        \
  const ::nanotick::telemetry::ScopedTimer NT_TELEMETRY_CONCAT(nt_timed_, __LINE__)( \
      ::nanotick::telemetry::timer_point<::nanotick::telemetry::Point::point_>() __VA_OPT__(, ) __VA_ARGS__)

#else

#define NT_RECORDER() (static_cast<::nanotick::telemetry::Recorder*>(nullptr))
#define NT_RECORDING() false

#define NT_HOP_AT(point_, tsc_, ...)                                                          \
  do {                                                                                        \
    static_assert(::nanotick::telemetry::kind_of(::nanotick::telemetry::Point::point_) ==     \
                      ::nanotick::telemetry::PointKind::kHop,                                 \
                  "NT_HOP_AT needs a hop point (ex_* or tr_*)");                              \
    static_cast<void>(sizeof(::nanotick::telemetry::detail::unevaluated(tsc_, __VA_ARGS__))); \
  } while (false)

#define NT_HOP(point_, ...)                                                               \
  do {                                                                                    \
    static_assert(::nanotick::telemetry::kind_of(::nanotick::telemetry::Point::point_) == \
                      ::nanotick::telemetry::PointKind::kHop,                             \
                  "NT_HOP needs a hop point (ex_* or tr_*)");                             \
    static_cast<void>(sizeof(::nanotick::telemetry::detail::unevaluated(__VA_ARGS__)));   \
  } while (false)

#define NT_TIMED(point_, ...)                                                           \
  static_assert(::nanotick::telemetry::kind_of(::nanotick::telemetry::Point::point_) == \
                    ::nanotick::telemetry::PointKind::kTimer,                           \
                "NT_TIMED needs a function timer point (fn_*)");                        \
  static_cast<void>(sizeof(::nanotick::telemetry::detail::unevaluated(__VA_ARGS__)))

#endif
