// Compiler attributes and constants shared by the core. Thread-safe: constants only.
#pragma once

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace nanotick::core {

// Size of a destructive-interference unit. 64 on every x86-64 we target; we do
// not use std::hardware_destructive_interference_size because GCC warns that
// its value may change between compiler versions (an ABI hazard for shared memory).
inline constexpr std::size_t kCacheLine = 64;

}  // namespace nanotick::core

#define NT_ALWAYS_INLINE inline __attribute__((always_inline))
#define NT_NOINLINE __attribute__((noinline))
#define NT_COLD __attribute__((cold, noinline))
// A noexcept lambda that is always inlined: `[&](T& x) NT_LAMBDA_INLINE_NOEXCEPT {...}`.
// A lambda is an ordinary function to the inliner, and a large caller can run
// out of inlining budget for it (the engine's report builders were called out
// of line, so the report they filled could not be kept in registers). GCC
// takes the attribute only after `noexcept`, Clang only before it.
#if defined(__clang__)
#define NT_LAMBDA_INLINE_NOEXCEPT __attribute__((always_inline)) noexcept
#else
#define NT_LAMBDA_INLINE_NOEXCEPT noexcept __attribute__((always_inline))
#endif
#define NT_HOT __attribute__((hot))

// Debug-only invariant check: active in debug and sanitizer builds, compiled out
// with NDEBUG (release). Use for programming errors, never for input validation.
#if !defined(NDEBUG)
#define NT_DEBUG_ASSERT(cond, msg)                                                                \
  do {                                                                                            \
    if (!(cond)) [[unlikely]] {                                                                   \
      std::fprintf(stderr, "%s:%d: assertion failed: %s (%s)\n", __FILE__, __LINE__, #cond, msg); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)
#else
#define NT_DEBUG_ASSERT(cond, msg) \
  do {                             \
  } while (0)
#endif
