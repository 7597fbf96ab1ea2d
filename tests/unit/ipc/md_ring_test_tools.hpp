// The market data ring tests' shared tools: a socket path per test, a bounded
// wait, a reader connected by hand, packets whose bytes derive from their
// number, and a child process killed however a test ends. Shared by
// md_ring_test.cpp and md_ring_hostile_test.cpp.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ipc/fd_passing.hpp"
#include "ipc/md_ring_layout.hpp"
#include "ipc/md_ring_server.hpp"
#include "ipc/md_ring_subscriber.hpp"
#include "ipc/shm_segment.hpp"
#include "ipc/unix_listener.hpp"
#include "net/socket_error.hpp"

namespace nanotick::test::md_ring {

// The tests' short names (`using namespace nanotick::test::md_ring` brings them).
namespace ni = nanotick::ipc;
namespace nn = nanotick::net;
using namespace std::chrono_literals;
using Sub = ni::MdRingSubscriber;

inline std::string socket_path(const char* tag) {
  static int serial = 0;
  return "/tmp/nt-mdr-" + std::to_string(::getpid()) + "-" + tag + "-" + std::to_string(++serial) + ".sock";
}

// Repeats `step` (which returns true when done) for up to 2 s.
inline bool within(const std::function<bool()>& step) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (step()) return true;
    std::this_thread::sleep_for(50us);
  }
  return false;
}

// Connects `sub` while the server (when given) lets readers in: the
// publisher's timer and the reader's loop, run by hand.
inline Sub::Step connect(Sub& sub, ni::MdRingServer* server) {
  if (sub.state() == Sub::State::kClosed && sub.start_connect() != 0) return Sub::Step::kRefused;
  Sub::Step step = Sub::Step::kWaiting;
  within([&] {
    if (server != nullptr) (void)server->poll_connections();
    step = sub.poll_connect();
    return step != Sub::Step::kWaiting;
  });
  return step;
}

// A packet of `n` bytes whose every byte derives from `k`.
inline std::vector<std::uint8_t> packet(std::uint64_t k, std::size_t n) {
  std::vector<std::uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(k * 31 + i * 7 + (i >> 8));
  return p;
}
inline std::size_t length_of(std::uint64_t k) { return 1 + (k * 97) % ni::kMdRingMaxPacketBytes; }

inline std::vector<std::uint8_t> span_bytes(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

// A child process killed and reaped however the test ends.
struct Child {
  pid_t pid = -1;
  ~Child() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

}  // namespace nanotick::test::md_ring
