// The floor of tick-to-trade on this machine: what any trader pays for
// "market data packet read -> order written to the socket" with no book, no
// strategy and no risk. A peer thread joins the same incremental multicast
// group as the measured trader and, for every datagram, writes one
// order-sized message (64 bytes) to a loopback TCP connection, timed exactly
// like the trader's hop: the TSC right after recv() returns -> the TSC right
// after send() returns (core::TscClock::now(), as MdFeed and OrderGateway
// take them). A sink thread reads and discards the stream the way the
// exchange's gateway reads its sessions: epoll_wait(0), then recv() until
// EAGAIN, idling like the exchange (BackoffIdle) -- so each send() does the
// same kernel work as the trader's (the receiver's socket sits in an epoll
// set, nobody blocks on it).
//
// Sockets are made like src/net's (which bench binaries do not link): the
// receiver binds group:port with SO_REUSEADDR and a 4 MiB SO_RCVBUF, joins
// on 127.0.0.1, IP_MULTICAST_ALL off, and reads non-blocking recv(MSG_TRUNC);
// the TCP pair has TCP_NODELAY on both ends and is written with
// send(MSG_NOSIGNAL). The peer idles with the trader's idle strategy.
//
// Thread-safety: the constructor, start() and stop() are for one owning
// thread; the peer and sink threads own their sockets and counters between
// start() and stop(), and results are read only after stop() (whose join
// orders them before the reads). Start-up throws std::runtime_error naming
// the socket call that failed; the loops never allocate.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {

// A file descriptor closed on destruction.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) noexcept : fd_(fd) {}
  ~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  int get() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

struct FloorSetup {
  std::string group;  // the incremental channel's multicast group, dotted
  std::uint16_t port = 0;
  core::IdleKind peer_idle = core::IdleKind::backoff;  // the measured trader's
  int peer_cpu = 1;   // beside the measured trader
  int sink_cpu = 0;   // beside the exchange
};

struct FloorResult {
  core::LatencyHistogram hop_ns;     // recv() returned -> send() returned, per datagram
  std::uint64_t datagrams = 0;       // read while recording
  std::uint64_t short_writes = 0;    // send() took less than 64 bytes (never expected: the sink keeps up)
  std::uint64_t recv_errors = 0;     // other than EAGAIN
  std::uint64_t bytes_sunk = 0;      // read by the sink
  std::uint64_t peer_involuntary_switches = 0;  // the peer thread, while recording
  double seconds = 0;                // recording time
};

class FloorPeer {
 public:
  static constexpr std::size_t kOrderBytes = 64;
  static constexpr std::uint32_t kLoopback = 0x7f000001u;  // 127.0.0.1 (INADDR_LOOPBACK is an old-style cast)  // an order message's size (NewOrder is 40, ModifyOrder 32: rounded up)

  explicit FloorPeer(const FloorSetup& setup) : setup_(setup) {
    open_receiver();
    open_tcp_pair();
  }
  FloorPeer(const FloorPeer&) = delete;
  FloorPeer& operator=(const FloorPeer&) = delete;
  ~FloorPeer() { stop(); }

  // Starts both threads; the peer records every datagram from now on.
  void start() {
    stop_.store(false, std::memory_order_relaxed);
    sink_.emplace("nt-floor-sink", setup_.sink_cpu, [this] { sink_loop(); });
    warn_pin(*sink_);
    peer_.emplace("nt-floor-peer", setup_.peer_cpu, [this] {
      if (setup_.peer_idle == core::IdleKind::spin) {
        core::BusySpinIdle idle;
        peer_loop(idle);
      } else {
        core::BackoffIdle idle;
        peer_loop(idle);
      }
    });
    warn_pin(*peer_);
  }

  // Stops and joins both threads (idempotent).
  void stop() {
    stop_.store(true, std::memory_order_release);
    peer_.reset();  // joins
    sink_.reset();
  }

  // After stop().
  const FloorResult& result() const noexcept { return result_; }

 private:
  [[noreturn]] static void fail(const std::string& what) {
    throw std::runtime_error("floor peer: " + what + ": " + std::strerror(errno));
  }
  static void set_int(int fd, int level, int name, int value, const char* what) {
    if (::setsockopt(fd, level, name, &value, sizeof value) != 0) fail(std::string("setsockopt ") + what);
  }
  static void warn_pin(const core::NamedThread& t) {
    if (t.pin_error())
      std::fprintf(stderr, "warning: cannot pin %s to CPU %d: %s (numbers will be noisier)\n", t.name().c_str(),
                   t.cpu(), t.pin_error().message().c_str());
  }

  void open_receiver() {
    udp_ = OwnedFd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (udp_.get() < 0) fail("socket(udp)");
    set_int(udp_.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
    set_int(udp_.get(), SOL_SOCKET, SO_RCVBUF, 4 * 1024 * 1024, "SO_RCVBUF");
    sockaddr_in group{};
    group.sin_family = AF_INET;
    group.sin_port = htons(setup_.port);
    if (::inet_pton(AF_INET, setup_.group.c_str(), &group.sin_addr) != 1)
      throw std::runtime_error("floor peer: '" + setup_.group + "' is not an IPv4 address");
    if (::bind(udp_.get(), reinterpret_cast<const sockaddr*>(&group), sizeof group) != 0)
      fail("bind " + setup_.group + ":" + std::to_string(setup_.port));
    ip_mreq membership{};
    membership.imr_multiaddr = group.sin_addr;
    membership.imr_interface.s_addr = htonl(kLoopback);
    if (::setsockopt(udp_.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, &membership, sizeof membership) != 0)
      fail("join " + setup_.group + " on 127.0.0.1");
    set_int(udp_.get(), IPPROTO_IP, IP_MULTICAST_ALL, 0, "IP_MULTICAST_ALL");
  }

  // A connected loopback pair: tx_ (the peer writes) -> rx_ (the sink reads),
  // rx_ in an epoll set as the exchange keeps its sessions.
  void open_tcp_pair() {
    OwnedFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener.get() < 0) fail("socket(listener)");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(kLoopback);
    socklen_t len = sizeof addr;
    if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("bind 127.0.0.1:0");
    if (::listen(listener.get(), 1) != 0) fail("listen");
    if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail("getsockname");
    tx_ = OwnedFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (tx_.get() < 0) fail("socket(tcp)");
    if (::connect(tx_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("connect to the sink");
    set_int(tx_.get(), IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    const int flags = ::fcntl(tx_.get(), F_GETFL);
    if (flags < 0 || ::fcntl(tx_.get(), F_SETFL, flags | O_NONBLOCK) != 0) fail("fcntl O_NONBLOCK");
    rx_ = OwnedFd(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (rx_.get() < 0) fail("accept");
    set_int(rx_.get(), IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    epoll_ = OwnedFd(::epoll_create1(EPOLL_CLOEXEC));
    if (epoll_.get() < 0) fail("epoll_create1");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = rx_.get();
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, rx_.get(), &ev) != 0) fail("epoll_ctl");
  }

  template <typename Idle>
  void peer_loop(Idle& idle) noexcept {
    const core::TscClock& clock = core::TscClock::global();
    std::array<std::uint8_t, 1500> datagram{};
    std::array<std::uint8_t, kOrderBytes> order{};
    order.fill(0x5a);
    // What queued up since the group was joined is not the window's: drop it.
    while (::recv(udp_.get(), datagram.data(), datagram.size(), MSG_TRUNC) >= 0) {
    }
    rusage before{};
    ::getrusage(RUSAGE_THREAD, &before);
    const std::uint64_t t_start = clock.now();
    while (!stop_.load(std::memory_order_acquire)) {
      int work = 0;
      for (int budget = 0; budget < 64; ++budget) {  // MdFeed's poll_budget
        const ssize_t n = ::recv(udp_.get(), datagram.data(), datagram.size(), MSG_TRUNC);
        const std::uint64_t rx_tsc = clock.now();
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno != EAGAIN && errno != EWOULDBLOCK) ++result_.recv_errors;
          break;
        }
        ++work;
        ++result_.datagrams;
        order[0] = datagram[0];  // the order depends on the packet, as a real one would
        const ssize_t w = ::send(tx_.get(), order.data(), order.size(), MSG_NOSIGNAL);
        const std::uint64_t tx_tsc = clock.now();
        if (w != static_cast<ssize_t>(order.size())) {
          ++result_.short_writes;
          continue;
        }
        result_.hop_ns.record(static_cast<std::uint64_t>(clock.to_ns(static_cast<std::int64_t>(tx_tsc - rx_tsc))));
      }
      idle.idle(work);
    }
    result_.seconds = static_cast<double>(clock.to_ns(static_cast<std::int64_t>(clock.now() - t_start))) / 1e9;
    rusage after{};
    ::getrusage(RUSAGE_THREAD, &after);
    result_.peer_involuntary_switches = static_cast<std::uint64_t>(after.ru_nivcsw - before.ru_nivcsw);
  }

  void sink_loop() noexcept {
    core::BackoffIdle idle;
    std::array<std::uint8_t, 65536> buffer{};
    std::array<epoll_event, 4> events{};
    std::uint64_t bytes = 0;
    while (!stop_.load(std::memory_order_acquire)) {
      int work = 0;
      const int ready = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), 0);
      for (int i = 0; i < ready; ++i) {
        for (;;) {
          const ssize_t n = ::recv(rx_.get(), buffer.data(), buffer.size(), 0);
          if (n > 0) {
            bytes += static_cast<std::uint64_t>(n);
            ++work;
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          break;  // EAGAIN (drained), EOF or an error: the peer's short_writes would tell
        }
      }
      idle.idle(work);
    }
    result_.bytes_sunk = bytes;
  }

  FloorSetup setup_;
  OwnedFd udp_;
  OwnedFd tx_;
  OwnedFd rx_;
  OwnedFd epoll_;
  std::atomic<bool> stop_{false};
  FloorResult result_;
  std::optional<core::NamedThread> sink_;
  std::optional<core::NamedThread> peer_;
};

}  // namespace nanotick::bench
