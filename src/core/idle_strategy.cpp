// Cold paths of the idle strategies: sleeping, futex calls, name parsing.
#include "core/idle_strategy.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#include <stdexcept>
#include <string>

#include "core/time_units.hpp"

namespace nanotick::core {

namespace {

std::uint32_t* futex_word(std::atomic<std::uint32_t>& word) noexcept {
  // std::atomic<uint32_t> is a lock-free, plain 32-bit integer (static_assert in
  // the header); the kernel only ever reads it atomically.
  return reinterpret_cast<std::uint32_t*>(&word);
}

}  // namespace

BackoffIdle::BackoffIdle(const BackoffParams& params) : params_(params) {
  if (params.min_park <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("backoff idle strategy: min_park must be > 0 (got " +
                                std::to_string(params.min_park.count()) + " ns)");
  }
  if (params.max_park < params.min_park) {
    throw std::invalid_argument("backoff idle strategy: max_park (" + std::to_string(params.max_park.count()) +
                                " ns) must be >= min_park (" + std::to_string(params.min_park.count()) + " ns)");
  }
}

void BackoffIdle::park(std::chrono::nanoseconds period) noexcept {
  const timespec ts = timespec_from_ns(period.count());
  // One sleep; an early return on a signal just ends this idle call sooner.
  ::nanosleep(&ts, nullptr);
}

BlockingIdle::BlockingIdle(std::chrono::nanoseconds timeout) : timeout_(timeout) {
  if (timeout <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("blocking idle strategy: timeout must be > 0 (got " + std::to_string(timeout.count()) +
                                " ns); use BlockingIdle::kNoTimeout to wait for signals only");
  }
}

void BlockingIdle::sleep() noexcept {
  timespec ts{};
  const timespec* timeout = nullptr;
  if (timeout_ != kNoTimeout) {
    ts = timespec_from_ns(timeout_.count());
    timeout = &ts;
  }
  // Returns 0 when woken, or -1 with EAGAIN (the word was no longer kSleeping:
  // a signal came first), ETIMEDOUT or EINTR. The caller reads the word again
  // in every case, so the result itself carries no information.
  ::syscall(SYS_futex, futex_word(state_), FUTEX_WAIT_PRIVATE, kSleeping, timeout, nullptr, 0);
}

void BlockingIdle::wake() noexcept {
  ::syscall(SYS_futex, futex_word(state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

std::string_view to_string(IdleKind kind) noexcept {
  switch (kind) {
    case IdleKind::spin: return "spin";
    case IdleKind::yield: return "yield";
    case IdleKind::backoff: return "backoff";
    case IdleKind::block: return "block";
  }
  return "unknown";
}

std::optional<IdleKind> try_parse_idle_kind(std::string_view name) noexcept {
  for (const IdleKind kind : {IdleKind::spin, IdleKind::yield, IdleKind::backoff, IdleKind::block}) {
    if (name == to_string(kind)) {
      return kind;
    }
  }
  return std::nullopt;
}

IdleKind parse_idle_kind(std::string_view name) {
  if (const auto kind = try_parse_idle_kind(name)) {
    return *kind;
  }
  throw std::invalid_argument("unknown idle strategy '" + std::string(name) +
                              "': expected one of spin, yield, backoff, block");
}

}  // namespace nanotick::core
