// Inter-process communication on this machine, process to process: every way
// two local processes can pass a message, beside our SpscRing in shared memory
// and the floor under all of them (issue 16, section 1).
//
// What is measured, for 8-byte and 64-byte messages, per transport:
//   one-way    the sender stamps the TSC into the message just before its
//              send call; the receiver stamps the TSC just after its receive
//              call returned; one-way = receipt - send stamp. Both processes
//              read the same invariant TSC (core::TscClock, calibrated once
//              before fork(), so both convert ticks alike). Taken on the ping
//              leg of the round trips below, so the channel holds one message
//              at a time: latency without queueing, and a blocking receiver is
//              asleep when the message comes, as it would be on a quiet link.
//   round trip the parent sends a ping, the child receives it and sends it
//              back (the pong carries the child's receipt stamp in place of the
//              parent's), the parent stamps the pong's receipt. The first tenth
//              of the round trips of each run warm up and are discarded.
//   throughput the child sends N messages flat out (each carries its sequence
//              number), the parent receives and checks them; rate = N / (the
//              parent's receipt of the last one - the child's stamp before
//              its first send). One message per send call and one per receive
//              call on every transport, so a stream socket is not allowed to
//              coalesce reads where a datagram socket could not.
//
// The same for every row: the two processes pinned to the same two CPUs
// (--cpus A,B: the parent on A, the child on B; a failed pin is printed),
// the same message, the same stamping points, a fresh channel set up before
// fork() for each run, and the same counts. What differs is only the channel:
//   floor            one cache line in a MAP_SHARED mapping, bounced: the
//                    parent writes an odd turn, the child answers with the even
//                    one and its receipt stamp on the same line. No transport
//                    can beat moving one line each way; every row's round-trip
//                    p50 is divided by this one's ("vs floor").
//   ring             core::SpscRing (one per direction, 4096 slots) placed with
//                    placement-new in a MAP_SHARED|MAP_ANONYMOUS mapping, busy-poll.
//   boost            boost::lockfree::spsc_queue (4096 slots) constructed in a
//                    boost::interprocess::managed_shared_memory segment the
//                    child opens by name (the set-up of the published study the
//                    issue cites), busy-poll. The segment is removed after the run.
//   ring-eventfd     the ring, and a receiver that sleeps when it finds the
//   ring-futex       ring empty, woken by an eventfd or a process-shared futex.
//                    A doorbell word per direction (awake / sleeping /
//                    signalled, the protocol of core::BlockingIdle) lets the
//                    sender skip the system call while the receiver is awake.
//                    core::BlockingIdle itself cannot be used: it waits on a
//                    FUTEX_PRIVATE futex, keyed by the address space, which a
//                    wake from another process never reaches. A sender that
//                    finds the ring full spins (only the receiver blocks).
//   pipe, fifo       two pipes; two FIFOs made with mkfifo in a temp dir and
//                    opened by name in each process (removed after the run).
//   unix-stream      AF_UNIX socketpair, SOCK_STREAM / SOCK_DGRAM.
//   unix-dgram
//   tcp, udp         127.0.0.1, TCP_NODELAY; UDP sockets connected to each
//                    other. UDP may drop when the sender outruns the receiver:
//                    its throughput counts what arrived and notes the loss.
//   mq               POSIX message queues (mq_open with a unique name, unlinked
//                    at once: the descriptors stay valid, nothing is left
//                    behind), depth 10 (the default fs.mqueue.msg_max).
//   *-nb             the same descriptors with O_NONBLOCK, receive (and send)
//                    retried in a busy loop: no sleep, no wake-up.
//   ring-threads     the ring between two threads of one process: the reference
//                    for what a process boundary adds (nothing, for shared memory).
// Blocking rows wait in the kernel; busy-poll rows burn their CPU while they
// wait (on a 2-core machine, the whole machine).
//
// What the numbers mean: the shared-memory rows cost about the floor (a
// cache-line transfer each way); every kernel transport adds at least two
// system calls per message and, when blocking, a wake-up of a sleeping
// process; the blocking rows' p50 is mostly that wake-up. Noise: each
// measurement runs --repeats times, transports round-robin within a repeat
// (the starting transport rotates), never two repeats of one transport back to
// back; the main table merges all samples, the spread table shows the median
// and min-max of the per-repeat figures.
//
// Robustness: every wait of the parent ends on a one-shot deadline timer
// (SIGALRM) or a child's death (SIGCHLD), both interrupting blocking calls and
// checked by every busy loop; a child that dies or hangs is an error of its
// row, killed and reaped, never a hang. Children die with the parent
// (PR_SET_PDEATHSIG). Descriptors, mappings, segments, FIFOs and queues are
// owned by RAII objects of the parent; SIGINT/SIGTERM end the run through the
// same path. Linked: librt (mq_*).
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/interprocess/managed_shared_memory.hpp>
#include <boost/lockfree/spsc_queue.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/bench_util.hpp"
#include "common/child_process.hpp"
#include "common/rdtsc_timer.hpp"
#include "common/wakeup.hpp"
#include "core/compiler.hpp"
#include "core/histogram.hpp"
#include "core/spsc_ring.hpp"
#include "core/thread.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::bench {
namespace {

namespace bip = boost::interprocess;

constexpr std::size_t kRingCapacity = 4096;
constexpr long kMqDepth = 10;                               // the default fs.mqueue.msg_max: no privilege needed
constexpr std::uint64_t kLossyIdleNs = core::ns_from_ms(20U);  // UDP: sender done, nothing for this long = lost
constexpr std::chrono::milliseconds kReapTimeout{2000};

// ---- options (parse_options(), at the end) ----------------------------------------

struct Options {
  bool quick = false;
  int cpu_a = 0;  // parent: pinger, throughput receiver
  int cpu_b = 1;  // child: ponger, throughput sender
  std::uint64_t messages = 0;
  int repeats = 3;
  std::vector<std::string> only;  // empty: every transport
};

// ---- stop flag ----------------------------------------------------------------
// Set by the signal handlers (and by the parent before it abandons a thread
// peer); read by every wait loop of the run in progress. Lock-free atomics are
// async-signal-safe.

enum StopReason : int { kRunning = 0, kTimedOut = 1, kPeerDied = 2, kInterrupted = 3, kAbandoned = 4 };
std::atomic<int> g_stop{kRunning};
std::atomic<bool> g_interrupted{false};  // SIGINT/SIGTERM: stays set for the rest of the program
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

NT_ALWAYS_INLINE bool stopped() noexcept { return g_stop.load(std::memory_order_relaxed) != kRunning; }

void raise_stop(int reason) noexcept {
  int expected = kRunning;  // keep the first reason: it is the cause
  g_stop.compare_exchange_strong(expected, reason, std::memory_order_relaxed);
}

void on_alarm(int /*sig*/) { raise_stop(kTimedOut); }
void on_child(int /*sig*/) { raise_stop(kPeerDied); }
void on_interrupt(int /*sig*/) {
  g_interrupted.store(true, std::memory_order_relaxed);
  raise_stop(kInterrupted);
}

const char* stop_text(int reason) {
  switch (reason) {
    case kTimedOut: return "timed out (the run's deadline passed)";
    case kPeerDied: return "the child process died";
    case kInterrupted: return "interrupted (SIGINT/SIGTERM)";
    case kAbandoned: return "abandoned";
    default: return "stopped";
  }
}

// No SA_RESTART: the signals must interrupt a blocking read, recv, futex wait
// or mq_receive so that its loop sees the stop flag.
void install_signal_handlers() {
  const auto install = [](int sig, void (*handler)(int), int flags) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(sig, &sa, nullptr) != 0) die_errno("sigaction");
  };
  install(SIGALRM, on_alarm, 0);
  install(SIGCHLD, on_child, SA_NOCLDSTOP);
  install(SIGINT, on_interrupt, 0);
  install(SIGTERM, on_interrupt, 0);
  install(SIGPIPE, SIG_IGN, 0);  // a write to a dead peer returns EPIPE instead of killing us
}

// Starts a run: clears the previous run's reason, arms a one-shot deadline.
class RunDeadline {
 public:
  explicit RunDeadline(std::uint64_t ns) {
    g_stop.store(g_interrupted.load(std::memory_order_relaxed) ? kInterrupted : kRunning, std::memory_order_relaxed);
    itimerval v{};
    v.it_value.tv_sec = static_cast<time_t>(ns / core::kNsPerSec);
    v.it_value.tv_usec = static_cast<suseconds_t>((ns % core::kNsPerSec) / core::kNsPerUs);
    ::setitimer(ITIMER_REAL, &v, nullptr);
  }
  ~RunDeadline() {
    const itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
  }
  RunDeadline(const RunDeadline&) = delete;
  RunDeadline& operator=(const RunDeadline&) = delete;
};

// ---- resources ------------------------------------------------------------------

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  int get() const noexcept { return fd_; }
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

[[noreturn]] void throw_errno(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

UniqueFd checked_fd(int fd, const char* what) {
  if (fd < 0) throw_errno(what);
  return UniqueFd(fd);
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) throw_errno("fcntl(O_NONBLOCK)");
}

// A T constructed in its own MAP_SHARED anonymous mapping, made before fork():
// parent and child then see the same pages at the same address.
template <typename T>
class SharedObject {
 public:
  SharedObject() {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw_errno("mmap(MAP_SHARED | MAP_ANONYMOUS, " + std::to_string(sizeof(T)) + " bytes)");
    object_ = new (p) T();
  }
  ~SharedObject() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  T& operator*() const noexcept { return *object_; }
  T* operator->() const noexcept { return object_; }

 private:
  T* object_ = nullptr;
};

// Names no other run (of this or another process) uses: pid and a counter.
std::string unique_name(std::string_view prefix) {
  static unsigned counter = 0;
  return std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

// ---- the message -----------------------------------------------------------------

// words[0] is the send stamp (latency runs; the pong's receipt stamp on the
// way back) or the sequence number (throughput runs); the rest is payload.
template <std::size_t Bytes>
struct Message {
  static_assert(Bytes % 8 == 0 && Bytes >= 8);
  std::array<std::uint64_t, Bytes / 8> words;
};
static_assert(sizeof(Message<8>) == 8 && sizeof(Message<64>) == 64);

template <typename M>
M filled_message() {
  M m{};
  for (std::size_t i = 0; i < m.words.size(); ++i) m.words[i] = 0x0101010101010101ULL * (i + 1);
  return m;
}

enum class Role : std::uint8_t { parent, child };
enum class Got : std::uint8_t { message, nothing, failed };  // nothing: a lossy transport's empty poll

struct Plan {
  int cpu_a;
  int cpu_b;
  std::uint64_t round_trips;
  std::uint64_t warmup;
  std::uint64_t messages;
  std::uint64_t run_limit_ns;
  const core::TscClock* clock;
  std::filesystem::path tmp;  // FIFOs live here
};

NT_ALWAYS_INLINE std::uint64_t stamp_send(const core::TscClock& clock) noexcept { return clock.now(); }
// rdtscp: waits for the receive to have completed before reading the TSC.
NT_ALWAYS_INLINE std::uint64_t stamp_receipt(const core::TscClock& clock) noexcept {
  return clock.uses_tsc() ? core::rdtscp() : clock.now();
}

// ---- the peer: a child process, or a thread for the reference row ------------------

enum ChildExit : int { kChildOk = 0, kChildFailed = 3, kChildThrew = 4, kChildOrphaned = 5 };

// Runs `body` on CPU `cpu` in a forked child (or a thread). A child whose body
// succeeds waits for finish() before it exits, so that a SIGCHLD during a run
// always means a death; one that fails exits at once, which stops the parent's
// waits. The parent must not be holding locks another thread could own (it is
// single-threaded when it forks: thread peers are joined before the next run).
class Peer {
 public:
  Peer(bool as_thread, int cpu, std::function<int()> body) {
    if (as_thread) {
      thread_ = std::make_unique<core::NamedThread>("ipc-peer", cpu, [this, body = std::move(body)] {
        thread_rc_.store(run_catching(body), std::memory_order_release);
      });
      return;
    }
    std::fflush(nullptr);  // else the child would print the parent's buffered output again
    int release[2];
    if (::pipe2(release, O_CLOEXEC) != 0) throw_errno("pipe2 (release pipe)");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) {
      ::close(release[0]);
      ::close(release[1]);
      throw_errno("fork");
    }
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(kChildOrphaned);
      ::close(release[1]);
      ::signal(SIGINT, SIG_DFL);  // Ctrl-C reaches the whole group: the child just dies
      ::signal(SIGTERM, SIG_DFL);
      static_cast<void>(core::pin_current_thread(cpu));  // checked (and reported) at start-up
      const int rc = run_catching(body);
      if (rc == kChildOk) {
        char c = 0;
        while (::read(release[0], &c, 1) < 0 && errno == EINTR) {
        }
      }
      ::_exit(rc);  // no destructors, no atexit: they belong to the parent
    }
    ::close(release[0]);
    release_fd_ = release[1];
  }
  ~Peer() {
    if (!finished_) static_cast<void>(finish(false));
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Lets the peer exit (run_ok) or kills it, and reaps it within kReapTimeout.
  // Returns what went wrong with it ("" if nothing did, or if we killed it).
  std::string finish(bool run_ok) {
    finished_ = true;
    if (thread_) {
      if (!run_ok) raise_stop(kAbandoned);  // its busy loops check the flag
      thread_->join();
      const int rc = thread_rc_.load(std::memory_order_acquire);
      return run_ok && rc != kChildOk ? "the peer thread failed (code " + std::to_string(rc) + ")" : "";
    }
    // A child that died already is not killed again, so that its own end
    // (a signal, an exit status) is what gets reported.
    const bool kill_it = !run_ok && g_stop.load(std::memory_order_relaxed) != kPeerDied;
    if (kill_it) ::kill(pid_, SIGKILL);
    ::close(release_fd_);
    const auto deadline = std::chrono::steady_clock::now() + kReapTimeout;
    int status = 0;
    std::string late;
    for (;;) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0 && errno != EINTR) return std::string("waitpid: ") + std::strerror(errno);
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        late = "the child did not exit within 2 s of its release (killed)";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    pid_ = -1;
    if (!late.empty()) return late;
    if (WIFEXITED(status)) {
      const int code = WEXITSTATUS(status);
      return code == kChildOk ? ""
                              : "the child exited with status " + std::to_string(code) + " (see its message above)";
    }
    if (WIFSIGNALED(status) && !(WTERMSIG(status) == SIGKILL && kill_it))
      return std::string("the child was killed by signal ") + ::strsignal(WTERMSIG(status));
    return "";
  }

 private:
  static int run_catching(const std::function<int()>& body) noexcept {
    try {
      return body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ipc_bench: peer: %s\n", e.what());
      return kChildThrew;
    }
  }

  pid_t pid_ = -1;
  int release_fd_ = -1;  // closing it lets a successful child exit
  std::unique_ptr<core::NamedThread> thread_;
  std::atomic<int> thread_rc_{kChildOk};
  bool finished_ = false;
};

// ---- channels ----------------------------------------------------------------------
// Each channel is set up by the parent before fork() (its constructor throws
// when the transport is unavailable here: the row is skipped, saying why).
// `typename C::End end(channel, role)` is made by each side after fork() and
// owns what that side needs; open() does what must happen after fork() (a
// FIFO or a segment opened by name) and returns "" or the error. send() and
// recv() take one message; false / Got::failed means the peer is gone or the
// run was stopped.

// The doorbell of one direction of a blocking ring (the protocol of
// core::BlockingIdle): the receiver moves kAwake -> kSleeping and sleeps while
// it reads kSleeping; the sender, after pushing, exchanges kSignalled in and
// calls the kernel only if it took kSleeping out. A push the receiver missed
// is either followed by a signal that fails its CAS, or finds it sleeping.
// Written by both sides; alone on its line.
struct alignas(core::kCacheLine) Doorbell {
  static constexpr std::uint32_t kAwake = 0;
  static constexpr std::uint32_t kSleeping = 1;
  static constexpr std::uint32_t kSignalled = 2;
  std::atomic<std::uint32_t> state{kAwake};
};

enum class Wake : std::uint8_t { busy_poll, eventfd, futex };

struct NoEventFds {};
struct EventFdPair {
  EventFd to_child;  // wakes the child (receiver of to_child)
  EventFd to_parent;
};

template <typename M, Wake kWake, bool kThreads>
class RingChannel {
 public:
  static constexpr bool kThreadPeer = kThreads;
  static constexpr bool kLossy = false;
  using Ring = core::SpscRing<M, kRingCapacity>;

  // Each direction's ring and doorbell: the sender writes the producer line
  // and slots, the receiver the consumer line; both write the doorbell.
  struct Shared {
    Ring to_child;
    Doorbell child_bell;
    Ring to_parent;
    Doorbell parent_bell;
  };

  RingChannel(const Plan& /*plan*/, bool /*throughput*/) {}

  class End {
   public:
    End(RingChannel& c, Role role)
        : tx_(role == Role::parent ? &c.shared_->to_child : &c.shared_->to_parent),
          rx_(role == Role::parent ? &c.shared_->to_parent : &c.shared_->to_child),
          tx_bell_(role == Role::parent ? &c.shared_->child_bell : &c.shared_->parent_bell),
          rx_bell_(role == Role::parent ? &c.shared_->parent_bell : &c.shared_->child_bell) {
      if constexpr (kWake == Wake::eventfd) {
        tx_fd_ = role == Role::parent ? &c.fds_.to_child : &c.fds_.to_parent;
        rx_fd_ = role == Role::parent ? &c.fds_.to_parent : &c.fds_.to_child;
      }
    }
    std::string open() { return ""; }
    std::string error() const { return "stopped while waiting on the ring"; }

    NT_ALWAYS_INLINE bool send(const M& m) noexcept {
      while (!tx_->try_push(m)) {
        if (stopped()) return false;
      }
      if constexpr (kWake != Wake::busy_poll) {
        if (tx_bell_->state.exchange(Doorbell::kSignalled, std::memory_order_release) == Doorbell::kSleeping) {
          if constexpr (kWake == Wake::eventfd) tx_fd_->post();
          else futex(tx_bell_->state, FUTEX_WAKE, 1);
        }
      }
      return true;
    }

    NT_ALWAYS_INLINE Got recv(M& m) noexcept {
      for (;;) {
        if (rx_->try_pop(m)) return Got::message;
        if (stopped()) return Got::failed;
        if constexpr (kWake != Wake::busy_poll) sleep();
      }
    }

   private:
    // One sleep (or none, if a signal is pending); the caller pops again. A
    // stop signal interrupts the wait (EINTR) and the caller sees the flag.
    NT_COLD void sleep() noexcept {
      std::uint32_t expected = Doorbell::kAwake;
      if (rx_bell_->state.compare_exchange_strong(expected, Doorbell::kSleeping, std::memory_order_relaxed,
                                                  std::memory_order_relaxed)) {
        if constexpr (kWake == Wake::eventfd) static_cast<void>(rx_fd_->try_wait());
        else futex(rx_bell_->state, FUTEX_WAIT, Doorbell::kSleeping);  // returns at once if no longer sleeping
      }
      rx_bell_->state.exchange(Doorbell::kAwake, std::memory_order_acquire);  // consume the signal
    }

    Ring* tx_;
    Ring* rx_;
    Doorbell* tx_bell_;
    Doorbell* rx_bell_;
    EventFd* tx_fd_ = nullptr;
    EventFd* rx_fd_ = nullptr;
  };

 private:
  SharedObject<Shared> shared_;
  [[no_unique_address]] std::conditional_t<kWake == Wake::eventfd, EventFdPair, NoEventFds> fds_;
};

// boost::lockfree::spsc_queue in a boost::interprocess managed segment: the
// parent creates the segment (owner-only) and the queues; the child opens the
// segment by name and finds them.
template <typename M>
class BoostChannel {
 public:
  static constexpr bool kThreadPeer = false;
  static constexpr bool kLossy = false;
  using Queue = boost::lockfree::spsc_queue<M, boost::lockfree::capacity<kRingCapacity>>;

  BoostChannel(const Plan& /*plan*/, bool /*throughput*/)
      : name_{unique_name("nanotick-ipc-boost")},
        segment_(bip::create_only, name_.value.c_str(), 2 * sizeof(Queue) + (64u << 10), nullptr,
                 bip::permissions(0600)),
        to_child_(segment_.construct<Queue>("to_child")()),
        to_parent_(segment_.construct<Queue>("to_parent")()) {}

  class End {
   public:
    End(BoostChannel& c, Role role) : channel_(&c), role_(role) {}

    std::string open() {
      if (role_ == Role::parent) {
        tx_ = channel_->to_child_;
        rx_ = channel_->to_parent_;
        return "";
      }
      segment_.emplace(bip::open_only, channel_->name_.value.c_str());  // throws on failure: the child reports it
      tx_ = segment_->template find<Queue>("to_parent").first;
      rx_ = segment_->template find<Queue>("to_child").first;
      return tx_ != nullptr && rx_ != nullptr ? "" : "queues not found in segment " + channel_->name_.value;
    }
    std::string error() const { return "stopped while waiting on the queue"; }

    NT_ALWAYS_INLINE bool send(const M& m) noexcept {
      while (!tx_->push(m)) {
        if (stopped()) return false;
      }
      return true;
    }
    NT_ALWAYS_INLINE Got recv(M& m) noexcept {
      while (!rx_->pop(m)) {
        if (stopped()) return Got::failed;
      }
      return Got::message;
    }

   private:
    BoostChannel* channel_;
    Role role_;
    std::optional<bip::managed_shared_memory> segment_;  // the child's own mapping
    Queue* tx_ = nullptr;
    Queue* rx_ = nullptr;
  };

 private:
  // Declared first, destroyed last: the name goes on every exit path, even
  // when the segment's construction threw half-way.
  struct SegmentName {
    std::string value;
    ~SegmentName() { bip::shared_memory_object::remove(value.c_str()); }
  };
  SegmentName name_;
  bip::managed_shared_memory segment_;
  Queue* to_child_;
  Queue* to_parent_;
};

enum class FdKind : std::uint8_t { pipe, fifo, unix_stream, unix_dgram, tcp, udp };

// The first system call an end of a kernel channel saw fail, for its error
// text (the ends' hot paths only record it).
class FailedCall {
 public:
  std::string error() const {
    return std::string(failed_op_) + (failed_errno_ != 0 ? std::string(": ") + std::strerror(failed_errno_) : "");
  }

 protected:
  NT_COLD bool fail(const char* op, int err) noexcept {
    failed_op_ = op;
    failed_errno_ = err;
    return false;
  }

 private:
  const char* failed_op_ = "none";
  int failed_errno_ = 0;
};

// Descriptor transports. Four descriptors, made before fork() (FIFOs: opened
// by name after it): the parent's receive and send ends and the child's. Each
// side closes the other's, so a dead peer reads as EOF or EPIPE.
template <typename M, FdKind kKind, bool kNonBlocking>
class FdChannel {
 public:
  static constexpr bool kThreadPeer = false;
  static constexpr bool kLossy = kKind == FdKind::udp;

  FdChannel(const Plan& plan, bool throughput) {
    switch (kKind) {
      case FdKind::pipe: make_pipes(); break;
      case FdKind::fifo: make_fifos(plan.tmp); break;
      case FdKind::unix_stream: make_socketpair(SOCK_STREAM); break;
      case FdKind::unix_dgram: make_socketpair(SOCK_DGRAM); break;
      case FdKind::tcp: make_tcp(); break;
      case FdKind::udp: make_udp(throughput); break;
    }
    if (kNonBlocking) {
      for (const UniqueFd& fd : fds_)
        if (fd.get() >= 0) set_nonblocking(fd.get());
    }
  }
  ~FdChannel() {
    for (const std::string& path : fifo_paths_)
      if (!path.empty()) ::unlink(path.c_str());
  }
  FdChannel(const FdChannel&) = delete;
  FdChannel& operator=(const FdChannel&) = delete;

  class End : public FailedCall {
   public:
    End(FdChannel& c, Role role) : channel_(&c), role_(role) {
      const std::size_t mine = role == Role::parent ? kParentRx : kChildRx;
      const std::size_t theirs = role == Role::parent ? kChildRx : kParentRx;
      c.fds_[theirs].reset();
      c.fds_[theirs + 1].reset();
      rx_ = c.fds_[mine].get();
      tx_ = c.fds_[mine + 1].get();
    }

    // FIFOs open in the same order on both sides (the to-child one first), so
    // neither blocking open waits for one the other has not reached.
    std::string open() {
      if constexpr (kKind == FdKind::fifo) {
        const std::string& to_child = channel_->fifo_paths_[0];
        const std::string& to_parent = channel_->fifo_paths_[1];
        const bool parent = role_ == Role::parent;
        UniqueFd first(::open(to_child.c_str(), (parent ? O_WRONLY : O_RDONLY) | O_CLOEXEC));
        if (first.get() < 0) return "open(" + to_child + "): " + std::strerror(errno);
        UniqueFd second(::open(to_parent.c_str(), (parent ? O_RDONLY : O_WRONLY) | O_CLOEXEC));
        if (second.get() < 0) return "open(" + to_parent + "): " + std::strerror(errno);
        if (kNonBlocking) {
          set_nonblocking(first.get());
          set_nonblocking(second.get());
        }
        rx_ = parent ? second.get() : first.get();
        tx_ = parent ? first.get() : second.get();
        fifo_fds_[0] = std::move(first);
        fifo_fds_[1] = std::move(second);
      }
      return "";
    }

    // Datagrams and writes of up to PIPE_BUF bytes go whole; a stream socket
    // may take part of a message, so loop until it is all sent.
    NT_ALWAYS_INLINE bool send(const M& m) noexcept {
      const char* p = reinterpret_cast<const char*>(&m);
      std::size_t left = sizeof(M);
      while (left > 0) {
        const ssize_t k = ::write(tx_, p, left);
        if (k > 0) {
          p += k;
          left -= static_cast<std::size_t>(k);
        } else if (k < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOBUFS)) {
          if (stopped()) return fail("write (stopped)", 0);
        } else {
          return fail("write", errno);
        }
      }
      return true;
    }

    NT_ALWAYS_INLINE Got recv(M& m) noexcept {
      char* p = reinterpret_cast<char*>(&m);
      std::size_t left = sizeof(M);
      while (left > 0) {
        const ssize_t k = ::read(rx_, p, left);
        if (k > 0) {
          p += k;
          left -= static_cast<std::size_t>(k);
        } else if (k == 0) {
          fail("read: end of file (the peer closed its end)", 0);
          return Got::failed;
        } else if (errno == EAGAIN || errno == EINTR) {
          if (stopped()) {
            fail("read (stopped)", 0);
            return Got::failed;
          }
          if (kLossy && left == sizeof(M)) return Got::nothing;  // let the caller decide whether more can come
        } else {
          fail("read", errno);
          return Got::failed;
        }
      }
      return Got::message;
    }

   private:
    FdChannel* channel_;
    Role role_;
    int rx_ = -1;
    int tx_ = -1;
    std::array<UniqueFd, 2> fifo_fds_;
  };

 private:
  static constexpr std::size_t kParentRx = 0;  // then kParentRx + 1: the parent's send end
  static constexpr std::size_t kChildRx = 2;

  void make_pipes() {
    int to_child[2];
    int to_parent[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0) throw_errno("pipe2");
    fds_[kChildRx] = UniqueFd(to_child[0]);
    fds_[kParentRx + 1] = UniqueFd(to_child[1]);
    if (::pipe2(to_parent, O_CLOEXEC) != 0) throw_errno("pipe2");
    fds_[kParentRx] = UniqueFd(to_parent[0]);
    fds_[kChildRx + 1] = UniqueFd(to_parent[1]);
  }

  void make_fifos(const std::filesystem::path& dir) {
    const std::string stem = (dir / unique_name("fifo")).string();
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string path = stem + (i == 0 ? "-to-child" : "-to-parent");
      if (::mkfifo(path.c_str(), 0600) != 0) throw_errno("mkfifo(" + path + ")");
      fifo_paths_[i] = path;
    }
  }

  // One bidirectional descriptor per side; the send end is a duplicate so
  // that every transport has the same four slots.
  void set_pair(int parent, int child) {
    fds_[kParentRx] = UniqueFd(parent);
    fds_[kChildRx] = UniqueFd(child);
    fds_[kParentRx + 1] = checked_fd(::fcntl(parent, F_DUPFD_CLOEXEC, 0), "fcntl(F_DUPFD_CLOEXEC)");
    fds_[kChildRx + 1] = checked_fd(::fcntl(child, F_DUPFD_CLOEXEC, 0), "fcntl(F_DUPFD_CLOEXEC)");
  }

  void make_socketpair(int type) {
    int sv[2];
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0) throw_errno("socketpair(AF_UNIX)");
    set_pair(sv[0], sv[1]);
  }

  static sockaddr_in loopback_any_port() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    return a;
  }

  static sockaddr_in bound_address(int fd) {
    sockaddr_in a = loopback_any_port();
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) throw_errno("bind(127.0.0.1:0)");
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) throw_errno("getsockname");
    return a;
  }

  void make_tcp() {
    UniqueFd listener = checked_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(TCP)");
    const sockaddr_in at = bound_address(listener.get());
    if (::listen(listener.get(), 1) != 0) throw_errno("listen");
    UniqueFd client = checked_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket(TCP)");
    if (::connect(client.get(), reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0)
      throw_errno("connect(127.0.0.1)");
    UniqueFd server = checked_fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC), "accept4");
    const int one = 1;
    for (const int fd : {client.get(), server.get()}) {
      if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) throw_errno("setsockopt(TCP_NODELAY)");
    }
    set_pair(client.release(), server.release());
  }

  void make_udp(bool throughput) {
    UniqueFd a = checked_fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), "socket(UDP)");
    UniqueFd b = checked_fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), "socket(UDP)");
    const sockaddr_in at_a = bound_address(a.get());
    const sockaddr_in at_b = bound_address(b.get());
    if (::connect(a.get(), reinterpret_cast<const sockaddr*>(&at_b), sizeof at_b) != 0) throw_errno("connect(UDP)");
    if (::connect(b.get(), reinterpret_cast<const sockaddr*>(&at_a), sizeof at_a) != 0) throw_errno("connect(UDP)");
    if (throughput && !kNonBlocking) {
      // What the parent loses never comes: its blocking receive returns now
      // and then so that the run can end once the sender is done.
      const timeval tv{0, static_cast<suseconds_t>(kLossyIdleNs / core::kNsPerUs)};
      if (::setsockopt(a.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) throw_errno("setsockopt(SO_RCVTIMEO)");
    }
    set_pair(a.release(), b.release());
  }

  std::array<UniqueFd, 4> fds_;
  std::array<std::string, 2> fifo_paths_;  // to child, to parent (FIFO only)
};

// POSIX message queues, one per direction, opened (and unlinked) before fork().
template <typename M, bool kNonBlocking>
class MqChannel {
 public:
  static constexpr bool kThreadPeer = false;
  static constexpr bool kLossy = false;

  MqChannel(const Plan& /*plan*/, bool /*throughput*/) : to_child_(open_queue()), to_parent_(open_queue()) {}
  ~MqChannel() {
    ::mq_close(to_child_);
    ::mq_close(to_parent_);
  }
  MqChannel(const MqChannel&) = delete;
  MqChannel& operator=(const MqChannel&) = delete;

  class End : public FailedCall {
   public:
    End(MqChannel& c, Role role)
        : tx_(role == Role::parent ? c.to_child_ : c.to_parent_),
          rx_(role == Role::parent ? c.to_parent_ : c.to_child_) {}
    std::string open() { return ""; }

    NT_ALWAYS_INLINE bool send(const M& m) noexcept {
      while (::mq_send(tx_, reinterpret_cast<const char*>(&m), sizeof(M), 0) != 0) {
        if (errno != EAGAIN && errno != EINTR) return fail("mq_send", errno);
        if (stopped()) return fail("mq_send (stopped)", 0);
      }
      return true;
    }
    NT_ALWAYS_INLINE Got recv(M& m) noexcept {
      while (::mq_receive(rx_, reinterpret_cast<char*>(&m), sizeof(M), nullptr) != static_cast<ssize_t>(sizeof(M))) {
        if (errno != EAGAIN && errno != EINTR) {
          fail("mq_receive", errno);
          return Got::failed;
        }
        if (stopped()) {
          fail("mq_receive (stopped)", 0);
          return Got::failed;
        }
      }
      return Got::message;
    }

   private:
    mqd_t tx_;
    mqd_t rx_;
  };

 private:
  static mqd_t open_queue() {
    // Appended, not "/" + name: GCC 12 warns (-Wrestrict, a false positive) about that operator+ when inlined.
    std::string name = "/";
    name += unique_name("nanotick-ipc-mq");
    mq_attr attr{};
    attr.mq_maxmsg = kMqDepth;
    attr.mq_msgsize = sizeof(M);
    const mqd_t q =
        ::mq_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | (kNonBlocking ? O_NONBLOCK : 0), 0600, &attr);
    if (q == static_cast<mqd_t>(-1)) throw_errno("mq_open(" + name + ") (POSIX message queues unavailable here?)");
    ::mq_unlink(name.c_str());  // the descriptor stays valid (and is inherited); nothing is left behind
    return q;
  }

  mqd_t to_child_;
  mqd_t to_parent_;
};

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

// ---- rows -------------------------------------------------------------------------

// One transport at one message size, across the repeats.
struct Row {
  core::LatencyHistogram one_way;  // every repeat's samples merged
  core::LatencyHistogram round_trip;
  std::vector<double> one_way_p50;  // per repeat
  std::vector<double> round_trip_p50;
  std::vector<double> round_trip_p99;
  std::vector<double> per_second;
  std::uint64_t negative = 0;
  std::uint64_t lost = 0;
  std::uint64_t offered = 0;  // messages sent in the throughput runs that lost some
  std::vector<std::string> errors;
  std::string unavailable;  // set once: the transport is not run again
};

void add_latency(Row& row, const LatencyRun& run) {
  row.one_way.merge(run.one_way);
  row.round_trip.merge(run.round_trip);
  row.one_way_p50.push_back(static_cast<double>(run.one_way.percentile(50)));
  row.round_trip_p50.push_back(static_cast<double>(run.round_trip.percentile(50)));
  row.round_trip_p99.push_back(static_cast<double>(run.round_trip.percentile(99)));
  row.negative += run.negative;
}

template <typename C, typename M>
void run_row(const Plan& plan, Row& row) {
  try {
    LatencyRun latency;
    if (std::string e = measure_round_trips<C, M>(plan, latency); !e.empty()) row.errors.push_back("round trip: " + e);
    else add_latency(row, latency);
    if (g_interrupted.load(std::memory_order_relaxed)) return;
    ThroughputRun tp;
    if (std::string e = measure_throughput<C, M>(plan, tp); !e.empty()) {
      row.errors.push_back("throughput: " + e);
    } else {
      row.per_second.push_back(tp.per_second);
      if (tp.lost > 0) {
        row.lost += tp.lost;
        row.offered += plan.messages;
      }
    }
  } catch (const Unavailable& e) {
    row.unavailable = e.what();
  } catch (const std::exception& e) {
    row.errors.push_back(e.what());
  }
}

void run_floor_row(const Plan& plan, Row& row) {
  try {
    LatencyRun latency;
    if (std::string e = measure_floor(plan, latency); !e.empty()) row.errors.push_back("round trip: " + e);
    else add_latency(row, latency);
  } catch (const std::exception& e) {
    row.errors.push_back(e.what());
  }
}

using RunRow = void (*)(const Plan&, Row&);

struct Transport {
  const char* key;    // for --only
  const char* label;  // the row's name
  bool has_throughput;
  RunRow run8;
  RunRow run64;
};

template <template <typename> class C>
Transport transport(const char* key, const char* label) {
  return {key, label, true, &run_row<C<Message<8>>, Message<8>>, &run_row<C<Message<64>>, Message<64>>};
}

template <typename M>
using RingBusy = RingChannel<M, Wake::busy_poll, false>;
template <typename M>
using RingEventFd = RingChannel<M, Wake::eventfd, false>;
template <typename M>
using RingFutex = RingChannel<M, Wake::futex, false>;
template <typename M>
using RingThreads = RingChannel<M, Wake::busy_poll, true>;
template <typename M>
using Pipe = FdChannel<M, FdKind::pipe, false>;
template <typename M>
using PipeNb = FdChannel<M, FdKind::pipe, true>;
template <typename M>
using Fifo = FdChannel<M, FdKind::fifo, false>;
template <typename M>
using FifoNb = FdChannel<M, FdKind::fifo, true>;
template <typename M>
using UnixStream = FdChannel<M, FdKind::unix_stream, false>;
template <typename M>
using UnixStreamNb = FdChannel<M, FdKind::unix_stream, true>;
template <typename M>
using UnixDgram = FdChannel<M, FdKind::unix_dgram, false>;
template <typename M>
using UnixDgramNb = FdChannel<M, FdKind::unix_dgram, true>;
template <typename M>
using Tcp = FdChannel<M, FdKind::tcp, false>;
template <typename M>
using TcpNb = FdChannel<M, FdKind::tcp, true>;
template <typename M>
using Udp = FdChannel<M, FdKind::udp, false>;
template <typename M>
using UdpNb = FdChannel<M, FdKind::udp, true>;
template <typename M>
using Mq = MqChannel<M, false>;
template <typename M>
using MqNb = MqChannel<M, true>;

const char* const kFloorKey = "floor";

// The floor first: the ratio column divides by it.
const std::vector<Transport>& transports() {
  static const std::vector<Transport> all = {
      {kFloorKey, "cache-line ping-pong (floor)", false, &run_floor_row, &run_floor_row},
      transport<RingBusy>("ring", "SpscRing in shm, busy-poll"),
      transport<BoostChannel>("boost", "boost spsc_queue in boost::interprocess shm, busy-poll"),
      transport<RingEventFd>("ring-eventfd", "SpscRing in shm + eventfd wake-up"),
      transport<RingFutex>("ring-futex", "SpscRing in shm + futex wake-up"),
      transport<Pipe>("pipe", "pipe"),
      transport<PipeNb>("pipe-nb", "pipe, O_NONBLOCK busy-poll"),
      transport<Fifo>("fifo", "FIFO"),
      transport<FifoNb>("fifo-nb", "FIFO, O_NONBLOCK busy-poll"),
      transport<UnixStream>("unix-stream", "UNIX stream socketpair"),
      transport<UnixStreamNb>("unix-stream-nb", "UNIX stream socketpair, O_NONBLOCK busy-poll"),
      transport<UnixDgram>("unix-dgram", "UNIX datagram socketpair"),
      transport<UnixDgramNb>("unix-dgram-nb", "UNIX datagram socketpair, O_NONBLOCK busy-poll"),
      transport<Tcp>("tcp", "TCP loopback (TCP_NODELAY)"),
      transport<TcpNb>("tcp-nb", "TCP loopback (TCP_NODELAY), O_NONBLOCK busy-poll"),
      transport<Udp>("udp", "UDP loopback"),
      transport<UdpNb>("udp-nb", "UDP loopback, O_NONBLOCK busy-poll"),
      transport<Mq>("mq", "POSIX message queue"),
      transport<MqNb>("mq-nb", "POSIX message queue, O_NONBLOCK busy-poll"),
      transport<RingThreads>("ring-threads", "SpscRing, thread to thread (reference)"),
  };
  return all;
}

// ---- options ------------------------------------------------------------------------

std::string transport_keys() {
  std::string keys;
  for (const Transport& t : transports()) {
    if (!keys.empty()) keys += ", ";
    keys += t.key;
  }
  return keys;
}

[[noreturn]] void usage_exit(const char* prog, const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "%s: %s\n", prog, problem.c_str());
  std::fprintf(problem.empty() ? stdout : stderr,
               "usage: %s [--quick] [--cpus A,B] [--messages N] [--repeats N] [--only NAME[,NAME...]]\n"
               "  --quick         smoke run: 1000 messages per run (unless --messages is given)\n"
               "  --cpus A,B      two different CPUs: the parent (pinger, receiver) on A, the child on B"
               " (default 0,1)\n"
               "  --messages N    round trips per latency run and messages per throughput run, 10..100000000"
               " (default 100000)\n"
               "  --repeats N     runs of every measurement, 1..100 (default 3)\n"
               "  --only LIST     transports to run, comma-separated (the floor row always runs):\n"
               "                  %s\n",
               prog, transport_keys().c_str());
  std::exit(problem.empty() ? 0 : 2);
}

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::optional<std::uint64_t> messages;
  const auto value = [&](int& i, const std::string& flag, const char* what) -> std::string_view {
    if (i + 1 >= argc) usage_exit(argv[0], flag + " needs " + what);
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--help" || a == "-h") {
      usage_exit(argv[0], "");
    } else if (a == "--cpus") {
      const std::string_view v = value(i, a, "two CPU numbers, e.g. --cpus 0,1");
      const std::size_t comma = v.find(',');
      const auto x = parse_count(v.substr(0, comma));
      const auto y = comma == std::string_view::npos ? std::nullopt : parse_count(v.substr(comma + 1));
      if (!x || !y || *x >= CPU_SETSIZE || *y >= CPU_SETSIZE)
        usage_exit(argv[0], "--cpus expects two CPU numbers A,B (0.." + std::to_string(CPU_SETSIZE - 1) + "), got '" +
                                std::string(v) + "'");
      if (*x == *y)
        usage_exit(argv[0], "--cpus needs two different CPUs (a busy-polling pair on one CPU measures the scheduler)");
      o.cpu_a = static_cast<int>(*x);
      o.cpu_b = static_cast<int>(*y);
    } else if (a == "--messages") {
      const std::string_view v = value(i, a, "a count");
      messages = parse_count(v);
      if (!messages || *messages < 10 || *messages > 100'000'000)
        usage_exit(argv[0], "--messages expects a whole number from 10 to 100000000, got '" + std::string(v) + "'");
    } else if (a == "--repeats") {
      const std::string_view v = value(i, a, "a count");
      const auto r = parse_count(v);
      if (!r || *r < 1 || *r > 100)
        usage_exit(argv[0], "--repeats expects a whole number from 1 to 100, got '" + std::string(v) + "'");
      o.repeats = static_cast<int>(*r);
    } else if (a == "--only") {
      const std::string_view v = value(i, a, "transport names");
      std::size_t from = 0;
      for (;;) {
        const std::size_t comma = v.find(',', from);
        const std::string name(v.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
        const auto& all = transports();
        if (std::none_of(all.begin(), all.end(), [&](const Transport& t) { return name == t.key; }))
          usage_exit(argv[0], "--only: unknown transport '" + name + "' (known: " + transport_keys() + ")");
        o.only.push_back(name);
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
    } else {
      usage_exit(argv[0], "unknown argument '" + a + "'");
    }
  }
  o.messages = messages.value_or(o.quick ? 1'000 : 100'000);
  return o;
}

// ---- output -----------------------------------------------------------------------

std::string cell_ns(const core::LatencyHistogram& h, double pct) {
  if (h.count() == 0) return "-";
  return format_ns(static_cast<double>(pct >= 100 ? h.max() : h.percentile(pct)));
}

std::string spread_cell(const std::vector<double>& values, double scale, const char* fmt) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  char buf[96];
  std::snprintf(buf, sizeof buf, fmt, s.median / scale, s.min / scale, s.max / scale);
  return buf;
}

std::string ns_spread_cell(const std::vector<double>& values) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  return format_ns(s.median) + " (" + format_ns(s.min) + "-" + format_ns(s.max) + ")";
}

void print_tables(std::size_t bytes, const std::vector<const Transport*>& chosen, const std::vector<Row>& rows,
                  const Options& o) {
  double floor_p50 = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]->key == std::string_view(kFloorKey) && rows[i].round_trip.count() > 0)
      floor_p50 = static_cast<double>(rows[i].round_trip.percentile(50));

  std::printf("### %zu-byte messages: one-way and round-trip latency (ns), throughput (M msg/s)\n\n", bytes);
  std::printf(
      "| transport | one-way p50 | p99 | p99.9 | max | round trip p50 | p99 | p99.9 | max | M msg/s | RTT p50 vs floor "
      "|\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) {
      std::printf("| %s | unavailable | | | | | | | | | |\n", chosen[i]->label);
      continue;
    }
    const std::string rate = !chosen[i]->has_throughput ? "n/a"
                             : r.per_second.empty()     ? "-"
                                                        : spread_cell(r.per_second, 1e6, "%.2f");
    const std::string ratio = floor_p50 > 0 && r.round_trip.count() > 0
                                  ? format_ratio(static_cast<double>(r.round_trip.percentile(50)) / floor_p50)
                                  : "-";
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", chosen[i]->label,
                cell_ns(r.one_way, 50).c_str(), cell_ns(r.one_way, 99).c_str(), cell_ns(r.one_way, 99.9).c_str(),
                cell_ns(r.one_way, 100).c_str(), cell_ns(r.round_trip, 50).c_str(), cell_ns(r.round_trip, 99).c_str(),
                cell_ns(r.round_trip, 99.9).c_str(), cell_ns(r.round_trip, 100).c_str(), rate.c_str(), ratio.c_str());
  }
  std::printf("\nSpread across %d repeats (median (min-max) of the per-repeat figures):\n\n", o.repeats);
  std::printf(
      "| transport | one-way p50 ns | round trip p50 ns | round trip p99 ns | M msg/s |\n"
      "|---|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) continue;
    std::printf("| %s | %s | %s | %s | %s |\n", chosen[i]->label, ns_spread_cell(r.one_way_p50).c_str(),
                ns_spread_cell(r.round_trip_p50).c_str(), ns_spread_cell(r.round_trip_p99).c_str(),
                chosen[i]->has_throughput ? spread_cell(r.per_second, 1e6, "%.2f (%.2f-%.2f)").c_str() : "n/a");
  }
  std::printf("\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) std::printf("- %s: not measured here: %s\n", chosen[i]->label, r.unavailable.c_str());
    for (const std::string& e : r.errors) std::printf("- %s: ERROR: %s\n", chosen[i]->label, e.c_str());
    if (r.lost > 0)
      std::printf(
          "- %s: throughput runs lost %llu of %llu messages (receiver buffer overflow); the rate counts "
          "what arrived\n",
          chosen[i]->label, static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.offered));
    if (r.negative > 0)
      std::printf("- %s: %llu samples had the receiver's TSC behind the sender's (counted as 0)\n", chosen[i]->label,
                  static_cast<unsigned long long>(r.negative));
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace nanotick::bench

int main(int argc, char** argv) {
  using namespace nanotick::bench;
  namespace core = nanotick::core;
  const Options o = parse_options(argc, argv);
  print_machine_header("ipc_bench: inter-process communication, process to process");
  const core::TscClock& clock = core::TscClock::global();  // calibrated before any fork: both sides share it

  // The child inherits the parent's affinity and pins itself to B; try B from
  // a probe thread first so that a failure is said once, here.
  std::error_code pin_b;
  {
    const core::NamedThread probe("ipc-pin-probe", o.cpu_b, [] {});
    pin_b = probe.pin_error();
  }
  const std::error_code pin_a = core::pin_current_thread(o.cpu_a);
  const auto pin_text = [](const std::error_code& ec) { return ec ? "FAILED: " + ec.message() : std::string("ok"); };
  std::printf("- pinning: parent (pinger, throughput receiver) on CPU %d: %s; child (ponger, sender) on CPU %d: %s\n",
              o.cpu_a, pin_text(pin_a).c_str(), o.cpu_b, pin_text(pin_b).c_str());
  if (pin_a || pin_b) std::fprintf(stderr, "warning: pinning failed (see the output); numbers will be noisier\n");

  std::vector<const Transport*> chosen;
  for (const Transport& t : transports()) {
    const bool wanted = o.only.empty() || t.key == std::string_view(kFloorKey) ||
                        std::find(o.only.begin(), o.only.end(), t.key) != o.only.end();
    if (wanted) chosen.push_back(&t);
  }
  const Plan plan{o.cpu_a,
                  o.cpu_b,
                  o.messages,
                  std::max<std::uint64_t>(1, o.messages / 10),
                  o.messages,
                  // generous: 200 us per round trip (two messages), so only a hang reaches it
                  core::ns_from_sec(5U) + o.messages * 200 * core::kNsPerUs,
                  &clock,
                  {}};
  std::printf(
      "- per run: %llu round trips (+%llu warm-up) or %llu messages flat out; %d repeats, transports round-robin "
      "(starting one further each repeat)%s\n\n",
      static_cast<unsigned long long>(plan.round_trips), static_cast<unsigned long long>(plan.warmup),
      static_cast<unsigned long long>(plan.messages), o.repeats, o.quick ? "; --quick" : "");
  std::fflush(stdout);

  install_signal_handlers();
  int failures = 0;
  {
    const TempDir tmp;  // the FIFOs' directory, removed with anything left in it
    Plan run_plan = plan;
    run_plan.tmp = tmp.path();
    std::vector<Row> rows8(chosen.size());
    std::vector<Row> rows64(chosen.size());
    for (int r = 0; r < o.repeats && !g_interrupted.load(std::memory_order_relaxed); ++r) {
      for (std::size_t k = 0; k < chosen.size() && !g_interrupted.load(std::memory_order_relaxed); ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(r)) % chosen.size();
        if (!rows8[i].unavailable.empty()) continue;
        chosen[i]->run8(run_plan, rows8[i]);
        chosen[i]->run64(run_plan, rows64[i]);
      }
    }
    if (g_interrupted.load(std::memory_order_relaxed)) {
      std::fprintf(stderr, "ipc_bench: interrupted; everything it made is removed\n");
      return 130;
    }
    print_tables(8, chosen, rows8, o);
    print_tables(64, chosen, rows64, o);
    for (const auto* rows : {&rows8, &rows64})
      for (const Row& row : *rows) failures += static_cast<int>(row.errors.size());
  }
  if (failures > 0) {
    std::fprintf(stderr, "ipc_bench: %d run(s) failed (see the ERROR lines)\n", failures);
    return 1;
  }
  return 0;
}
