// Counts global operator new calls per thread, so a test can prove that a hot
// path never allocates (docs/ARCHITECTURE.md, principle 2). Linking this file's
// object replaces the global operator new/delete for the whole test binary;
// the CMake test helper links it into every test, but the linker only pulls it
// in when a test calls allocations_on_this_thread(). Thread-safe: the counter
// is thread_local.
#pragma once

#include <cstddef>

namespace nanotick::test {

// operator new calls (every form: plain, array, aligned, nothrow) made by the
// calling thread since it started.
std::size_t allocations_on_this_thread() noexcept;

// Counts the calling thread's allocations from construction on.
class AllocationScope {
 public:
  AllocationScope() noexcept : start_(allocations_on_this_thread()) {}
  std::size_t count() const noexcept { return allocations_on_this_thread() - start_; }

 private:
  std::size_t start_;
};

}  // namespace nanotick::test
