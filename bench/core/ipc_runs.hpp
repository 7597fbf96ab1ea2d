// ipc_bench: the runs: round trips (with the one-way figure) and throughput
// over one channel, and the floor (one cache line bounced).
// Part of ipc_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "core/ipc_fd_channels.hpp"

namespace nanotick::bench {
namespace {

// ---- the runs ---------------------------------------------------------------------

// The transport cannot be set up here (no mq support, no loopback, ...): the
// row is skipped with the reason, which is not a failure of the bench.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename C>
void make_channel(std::optional<C>& channel, const Plan& plan, bool throughput) {
  try {
    channel.emplace(plan, throughput);
  } catch (const std::exception& e) {
    throw Unavailable(e.what());
  }
}

void child_error(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ipc_bench: child: %s: %s\n", what, detail.c_str());
}

// Ends the peer (killing it if the run failed) and says what went wrong, the
// stop reason first when a signal ended the run.
std::string finish_run(Peer& peer, std::string error) {
  const int reason = g_stop.load(std::memory_order_relaxed);
  const std::string peer_error = peer.finish(error.empty());
  if (!error.empty() && reason != kRunning) error = std::string(stop_text(reason)) + " (" + error + ")";
  if (!peer_error.empty()) {
    if (!error.empty()) error += "; ";
    error += peer_error;
  }
  return error;
}

struct LatencyRun {
  core::LatencyHistogram one_way;
  core::LatencyHistogram round_trip;
  std::uint64_t negative = 0;  // receipt stamp before the send stamp (TSC skew between the cores), counted as 0
};

std::uint64_t ns_between(const core::TscClock& clock, std::uint64_t from, std::uint64_t to, std::uint64_t& negative) {
  const auto ticks = static_cast<std::int64_t>(to - from);
  if (ticks < 0) {
    ++negative;
    return 0;
  }
  return static_cast<std::uint64_t>(clock.to_ns(ticks));
}

// Waits out a lossy transport's empty polls; the others never return nothing.
template <typename End, typename M>
NT_ALWAYS_INLINE Got receive(End& end, M& m) noexcept {
  Got g = end.recv(m);
  while (g == Got::nothing) g = end.recv(m);
  return g;
}

template <typename C, typename M>
std::string measure_round_trips(const Plan& plan, LatencyRun& out) {
  std::optional<C> channel;
  make_channel(channel, plan, false);
  const core::TscClock& clock = *plan.clock;
  const std::uint64_t total = plan.warmup + plan.round_trips;
  const RunDeadline deadline(plan.run_limit_ns);
  Peer peer(C::kThreadPeer, plan.cpu_b, [&channel, &clock, total]() -> int {
    typename C::End end(*channel, Role::child);
    if (const std::string e = end.open(); !e.empty()) {
      child_error("open", e);
      return kChildFailed;
    }
    M m{};
    for (std::uint64_t i = 0; i < total; ++i) {
      if (receive(end, m) != Got::message) {
        if (!stopped()) child_error("receive", end.error());
        return kChildFailed;
      }
      m.words[0] = stamp_receipt(clock);  // the pong carries the ping's receipt stamp
      if (!end.send(m)) {
        if (!stopped()) child_error("send", end.error());
        return kChildFailed;
      }
    }
    return kChildOk;
  });
  typename C::End end(*channel, Role::parent);
  std::string error = end.open();
  M m = filled_message<M>();
  for (std::uint64_t i = 0; i < total && error.empty(); ++i) {
    const std::uint64_t sent = stamp_send(clock);
    m.words[0] = sent;
    if (!end.send(m)) {
      error = "send: " + end.error();
      break;
    }
    if (receive(end, m) != Got::message) {
      error = "receive: " + end.error();
      break;
    }
    const std::uint64_t back = stamp_receipt(clock);
    if (i >= plan.warmup) {
      out.one_way.record(ns_between(clock, sent, m.words[0], out.negative));
      out.round_trip.record(ns_between(clock, sent, back, out.negative));
    }
  }
  return finish_run(peer, std::move(error));
}

// Written by the sender: its stamp before the first send, and done after the last.
struct alignas(core::kCacheLine) ThroughputControl {
  std::atomic<std::uint64_t> start{0};
  std::atomic<bool> done{false};
};

struct ThroughputRun {
  double per_second = 0;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;  // lossy transports only
};

template <typename C, typename M>
std::string measure_throughput(const Plan& plan, ThroughputRun& out) {
  std::optional<C> channel;
  make_channel(channel, plan, true);
  const SharedObject<ThroughputControl> control;
  ThroughputControl* ctl = &*control;
  const core::TscClock& clock = *plan.clock;
  const std::uint64_t n = plan.messages;
  const RunDeadline deadline(plan.run_limit_ns);
  Peer peer(C::kThreadPeer, plan.cpu_b, [&channel, &clock, ctl, n]() -> int {
    typename C::End end(*channel, Role::child);
    if (const std::string e = end.open(); !e.empty()) {
      child_error("open", e);
      return kChildFailed;
    }
    M m = filled_message<M>();
    ctl->start.store(stamp_send(clock), std::memory_order_release);
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      m.words[0] = seq;
      if (!end.send(m)) {
        if (!stopped()) child_error("send", end.error());
        return kChildFailed;
      }
    }
    ctl->done.store(true, std::memory_order_release);
    return kChildOk;
  });
  typename C::End end(*channel, Role::parent);
  std::string error = end.open();
  M m{};
  std::uint64_t last_seq = 0;
  std::uint64_t last_receipt = 0;
  std::uint64_t idle_since_ns = 0;  // lossy: when polls started coming back empty after the sender finished
  while (error.empty() && last_seq < n) {
    const Got g = end.recv(m);
    if (g == Got::message) {
      last_receipt = stamp_receipt(clock);
      const std::uint64_t seq = m.words[0];
      // In order and none missing; a lossy transport may skip, never go back.
      if (C::kLossy ? (seq <= last_seq || seq > n) : seq != last_seq + 1) {
        error = "message " + std::to_string(seq) + " after " + std::to_string(last_seq) + ": lost, reordered or torn";
        break;
      }
      last_seq = seq;
      ++out.received;
      idle_since_ns = 0;
    } else if (g == Got::failed) {
      error = "receive: " + end.error();
    } else if (ctl->done.load(std::memory_order_acquire)) {
      const std::uint64_t now = clock.now_ns();
      if (idle_since_ns == 0) idle_since_ns = now;
      else if (now - idle_since_ns >= kLossyIdleNs) break;  // the rest was dropped
    }
  }
  if (error.empty() && out.received == 0) error = "no message arrived";
  if (error.empty()) {
    const std::int64_t ns =
        clock.to_ns(static_cast<std::int64_t>(last_receipt - ctl->start.load(std::memory_order_acquire)));
    out.per_second = static_cast<double>(out.received) * static_cast<double>(core::kNsPerSec) /
                     static_cast<double>(std::max<std::int64_t>(ns, 1));
    out.lost = n - out.received;
  }
  return finish_run(peer, std::move(error));
}

// The floor: one line bounced. The parent writes odd turns, the child answers
// with the next even one, its receipt stamp riding on the same line.
struct alignas(core::kCacheLine) FloorLine {
  std::atomic<std::uint64_t> turn{0};
  std::atomic<std::uint64_t> receipt{0};
};

std::string measure_floor(const Plan& plan, LatencyRun& out) {
  const SharedObject<FloorLine> shared;
  FloorLine* line = &*shared;
  const core::TscClock& clock = *plan.clock;
  const std::uint64_t total = plan.warmup + plan.round_trips;
  const RunDeadline deadline(plan.run_limit_ns);
  Peer peer(false, plan.cpu_b, [line, &clock, total]() -> int {
    for (std::uint64_t i = 1; i <= total; ++i) {
      while (line->turn.load(std::memory_order_acquire) != 2 * i - 1) {
      }
      line->receipt.store(stamp_receipt(clock), std::memory_order_relaxed);
      line->turn.store(2 * i, std::memory_order_release);
    }
    return kChildOk;
  });
  std::string error;
  for (std::uint64_t i = 1; i <= total && error.empty(); ++i) {
    const std::uint64_t sent = stamp_send(clock);
    line->turn.store(2 * i - 1, std::memory_order_release);
    while (line->turn.load(std::memory_order_acquire) != 2 * i) {
      if (stopped()) {
        error = "waiting for the child's turn";
        break;
      }
    }
    const std::uint64_t back = stamp_receipt(clock);
    if (error.empty() && i > plan.warmup) {
      out.one_way.record(ns_between(clock, sent, line->receipt.load(std::memory_order_relaxed), out.negative));
      out.round_trip.record(ns_between(clock, sent, back, out.negative));
    }
  }
  return finish_run(peer, std::move(error));
}

}  // namespace
}  // namespace nanotick::bench
