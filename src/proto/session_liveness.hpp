// The heartbeat and silence rule of an order-entry session, the same at both
// ends (PROTOCOL.md §1.4 rule 3): send a Heartbeat after sending nothing for
// one interval; a peer heard nothing from for 3 intervals is gone. Times are
// the caller's nanoseconds (one clock per session). Not thread-safe.
#pragma once

#include <cstdint>

namespace nanotick::proto {

class SessionLiveness {
 public:
  static constexpr std::uint64_t kSilentIntervals = 3;

  // A new connection at `now` with the interval asked for (the one in force
  // may change at logon: set_interval_ns).
  void start(std::uint64_t now, std::uint64_t interval_ns) noexcept {
    connected_ns_ = last_in_ns_ = last_out_ns_ = now;
    interval_ns_ = interval_ns;
  }
  void set_interval_ns(std::uint64_t interval_ns) noexcept { interval_ns_ = interval_ns; }
  std::uint64_t interval_ns() const noexcept { return interval_ns_; }
  std::uint64_t connected_ns() const noexcept { return connected_ns_; }

  void heard(std::uint64_t now) noexcept { last_in_ns_ = now; }
  void sent(std::uint64_t now) noexcept { last_out_ns_ = now; }

  bool heartbeat_due(std::uint64_t now) const noexcept { return now - last_out_ns_ >= interval_ns_; }
  bool silent(std::uint64_t now) const noexcept { return now - last_in_ns_ >= kSilentIntervals * interval_ns_; }
  // Whether `since` (a stall's start, 0 = none) is as old as the silence rule allows.
  bool stalled_too_long(std::uint64_t since, std::uint64_t now) const noexcept {
    return since != 0 && now - since >= kSilentIntervals * interval_ns_;
  }

 private:
  std::uint64_t connected_ns_ = 0;
  std::uint64_t last_in_ns_ = 0;
  std::uint64_t last_out_ns_ = 0;
  std::uint64_t interval_ns_ = 0;
};

}  // namespace nanotick::proto
