// order_entry_bench: the plan and context every section shares, and running
// a measurement on the client's CPU.
// Part of order_entry_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include <sys/resource.h>
#include <sys/statfs.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"
#include "exchange/echo_peer.hpp"
#include "exchange/exchange_process.hpp"
#include "exchange/order_client.hpp"
#include "net/epoll.hpp"
#include "net/socket_address.hpp"
#include "net/tcp.hpp"
#include "net/udp_multicast.hpp"
#include "proto/order_entry.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace nn = nanotick::net;
namespace np = nanotick::proto;

namespace {

using nb::Spread;
using nb::spread_of;

const char* const kRawBusy = "raw TCP ping-pong, busy-poll echo thread";
const char* const kRawEpoll = "raw TCP ping-pong, epoll_wait(0) echo thread";
const char* const kRawShm = "raw shm ping-pong, busy-poll echo thread";
const char* const kCriticalThread = "nt-critical";  // the exchange's compact critical thread
// Its background threads: snapshot publisher and journal syncs; the
// snapshotter's shadow engine following the journal.
const char* const kBackgroundThreads[] = {"nt-aux", "nt-snapshot"};

struct Plan {
  int repeats;
  std::size_t warmup_pairs;  // untimed NewOrder/CancelOrder pairs before each latency run
  std::size_t pairs;         // timed pairs per latency run (fsync batch, none and the peers)
  std::size_t every_warmup;  // the same with fsync every (each message waits for an fdatasync)
  std::size_t every_pairs;
  double load_warmup_s;
  double load_s;
  std::vector<int> sessions;
  std::size_t window;
  std::uint64_t segment_bytes;  // one journal segment holds a whole run: no roll-over inside it
  int settle_ms;                // rest before each measurement
};

struct Context {
  nb::Args args;
  Plan plan;
  std::filesystem::path exchange_binary;
  nb::ExchangeSetup base;  // fsync and clients set per run
};

// ---- running on the client's CPU ------------------------------------------------

// Runs f on a thread pinned on `cpu` and waits for it; rethrows what f threw.
// Starts with a short rest, so that what the previous measurement left the
// kernel to do (a deleted journal, an exiting process) is not measured.
template <typename F>
void on_cpu(const Context& ctx, int cpu, F&& f) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ctx.plan.settle_ms));
  std::exception_ptr error;
  {
    nc::NamedThread t("nt-bench-client", cpu, [&] {
      try {
        f();
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (t.pin_error())
      std::fprintf(stderr, "warning: could not pin the client thread to CPU %d: %s (numbers will be noisier)\n", cpu,
                   t.pin_error().message().c_str());
  }
  if (error) std::rethrow_exception(error);
}

// Times the scheduler preempted the calling thread so far.
std::uint64_t own_involuntary_switches() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return static_cast<std::uint64_t>(u.ru_nivcsw);
}

double seconds_between(std::uint64_t t0, std::uint64_t t1) {
  return static_cast<double>(nc::TscClock::global().to_ns(static_cast<std::int64_t>(t1 - t0))) / 1e9;
}

std::uint64_t ticks_in(double seconds) {
  return static_cast<std::uint64_t>(seconds * 1e9 * nc::TscClock::global().ticks_per_ns());
}

}  // namespace
