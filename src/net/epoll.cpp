#include "net/epoll.hpp"

#include <cerrno>
#include <stdexcept>
#include <string>

#include "core/compiler.hpp"
#include "net/socket_error.hpp"

namespace nanotick::net {

EpollPoller::EpollPoller(std::size_t max_events) : max_events_(max_events) {
  if (max_events == 0 || max_events > kMaxEventsLimit)
    throw std::invalid_argument("epoll: max_events must be in [1, " + std::to_string(kMaxEventsLimit) + "], got " +
                                std::to_string(max_events));
  fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!fd_) throw_socket_error("epoll: cannot create an epoll set", errno, "raise the open-file limit (ulimit -n)?");
  raw_ = std::make_unique<epoll_event[]>(max_events);
  ready_ = std::make_unique<ReadyEvent[]>(max_events);
}

std::error_code EpollPoller::control(int op, int fd, Interest interest, std::uint64_t token, Trigger trigger) noexcept {
  epoll_event ev{};
  ev.events = static_cast<std::uint32_t>(interest) | (trigger == Trigger::kEdge ? EPOLLET : 0u);
  ev.data.u64 = token;
  if (::epoll_ctl(fd_.get(), op, fd, &ev) != 0) return {errno, std::system_category()};
  return {};
}

std::error_code EpollPoller::add(int fd, Interest interest, std::uint64_t token, Trigger trigger) noexcept {
  return control(EPOLL_CTL_ADD, fd, interest, token, trigger);
}

std::error_code EpollPoller::modify(int fd, Interest interest, std::uint64_t token, Trigger trigger) noexcept {
  return control(EPOLL_CTL_MOD, fd, interest, token, trigger);
}

std::error_code EpollPoller::remove(int fd) noexcept {
  // A non-null event pointer keeps kernels before 2.6.9 happy; it is ignored.
  epoll_event ev{};
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_DEL, fd, &ev) != 0) return {errno, std::system_category()};
  return {};
}

std::span<const ReadyEvent> EpollPoller::wait(int timeout_ms) noexcept {
  const int n = ::epoll_wait(fd_.get(), raw_.get(), static_cast<int>(max_events_), timeout_ms);
  if (n <= 0) {
    // Only EINTR is possible here: the epoll descriptor and the event array
    // are ours and valid by construction.
    NT_DEBUG_ASSERT(n == 0 || errno == EINTR, "epoll_wait failed on a valid epoll set");
    return {};
  }
  const auto count = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < count; ++i) ready_[i] = ReadyEvent{raw_[i].data.u64, raw_[i].events};
  return {ready_.get(), count};
}

}  // namespace nanotick::net
