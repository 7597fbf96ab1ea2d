// Named, optionally pinned threads with a start handshake and clean join.
// NamedThread is owned by one thread (the one that created it); not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

namespace nanotick::core {

// Pins the calling thread to one CPU. Returns the error instead of ignoring it
// (an out-of-range CPU, a CPU outside the process's allowed set, ...).
[[nodiscard]] std::error_code pin_current_thread(int cpu) noexcept;

// Sets the calling thread's name as shown by top/ps/gdb (truncated to 15 chars).
void set_current_thread_name(std::string_view name) noexcept;

// Number of CPUs this process may run on.
int allowed_cpu_count() noexcept;

class NamedThread {
 public:
  // Starts a thread that names itself, pins itself to `cpu` (-1: no pinning),
  // then runs `body`. Returns only once the thread has started and pinning has
  // been attempted, so callers never sleep to wait for start. A pinning failure
  // does not stop the thread: it is reported through pin_error().
  NamedThread(std::string name, int cpu, std::function<void()> body);
  ~NamedThread();  // joins

  NamedThread(const NamedThread&) = delete;
  NamedThread& operator=(const NamedThread&) = delete;
  NamedThread(NamedThread&&) noexcept = default;
  NamedThread& operator=(NamedThread&&) = delete;

  const std::string& name() const noexcept { return name_; }
  int cpu() const noexcept { return cpu_; }
  const std::error_code& pin_error() const noexcept { return pin_error_; }
  bool joinable() const noexcept { return thread_.joinable(); }
  void join();

 private:
  std::string name_;
  int cpu_;
  std::error_code pin_error_;
  std::thread thread_;
};

}  // namespace nanotick::core
