#include "core/thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <future>

namespace nanotick::core {

std::error_code pin_current_thread(int cpu) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return std::make_error_code(std::errc::invalid_argument);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  return rc == 0 ? std::error_code{} : std::error_code(rc, std::system_category());
}

void set_current_thread_name(std::string_view name) noexcept {
  char buf[16] = {};
  const std::size_t n = name.size() < 15 ? name.size() : 15;
  name.copy(buf, n);
  pthread_setname_np(pthread_self(), buf);
}

int allowed_cpu_count() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

NamedThread::NamedThread(std::string name, int cpu, std::function<void()> body) : name_(std::move(name)), cpu_(cpu) {
  std::promise<std::error_code> started;
  auto started_future = started.get_future();
  thread_ = std::thread([this_name = name_, cpu, &started, body = std::move(body)]() mutable {
    set_current_thread_name(this_name);
    std::error_code ec;
    if (cpu >= 0) ec = pin_current_thread(cpu);
    started.set_value(ec);  // `started` lives until the constructor returns
    body();
  });
  pin_error_ = started_future.get();
}

NamedThread::~NamedThread() {
  if (thread_.joinable()) thread_.join();
}

void NamedThread::join() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace nanotick::core
