// Cold paths of the idle strategies: sleeping, futex calls, name parsing.
#include "core/idle_strategy.hpp"

#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>
#include <system_error>

#include "core/agent.hpp"
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

BlockingIdle::~BlockingIdle() {
  if (event_fd_ >= 0) ::close(event_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

namespace {

// The eventfd's token in the epoll set; the agent's descriptors carry 0.
constexpr std::uint64_t kDoorbellToken = 1;

}  // namespace

void BlockingIdle::watch(std::span<const int> fds) {
  if (epoll_fd_ >= 0) {
    throw std::logic_error("blocking idle strategy: watch() called twice");
  }
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) {
    throw std::system_error(errno, std::generic_category(), "blocking idle strategy: epoll_create1");
  }
  const int event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd < 0) {
    const int error = errno;
    ::close(epoll_fd);
    throw std::system_error(error, std::generic_category(), "blocking idle strategy: eventfd");
  }
  auto add = [&](int fd, std::uint64_t token) {
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: input left unread keeps the agent awake
    ev.data.u64 = token;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      const int error = errno;
      ::close(event_fd);
      ::close(epoll_fd);
      throw std::system_error(error, std::generic_category(),
                              "blocking idle strategy: cannot watch descriptor " + std::to_string(fd));
    }
  };
  add(event_fd, kDoorbellToken);
  for (const int fd : fds) {
    add(fd, 0);
  }
  epoll_fd_ = epoll_fd;
  event_fd_ = event_fd;
}

void BlockingIdle::sleep() noexcept {
  if (epoll_fd_ >= 0) {
    timespec ts{};
    const timespec* timeout = nullptr;
    if (timeout_ != kNoTimeout) {
      ts = timespec_from_ns(timeout_.count());
      timeout = &ts;
    }
    // Which descriptor fired does not matter (the agent's next pass looks at
    // all of its sources) except the eventfd, which must be emptied, or it
    // would keep every later sleep from starting.
    std::array<epoll_event, WaitFds::kCapacity + 1> events{};
    const int n = ::epoll_pwait2(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout, nullptr);
    for (int i = 0; i < n; ++i) {
      if (events[static_cast<std::size_t>(i)].data.u64 == kDoorbellToken) {
        std::uint64_t rings = 0;
        static_cast<void>(::read(event_fd_, &rings, sizeof rings));
      }
    }
    return;
  }
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
  if (event_fd_ >= 0) {
    const std::uint64_t one = 1;
    // Only fails if the counter would overflow (it holds rings not yet read: already awake).
    static_cast<void>(::write(event_fd_, &one, sizeof one));
    return;
  }
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
