// ipc_bench: the message, the run's plan, and the peer: a child process, or a
// thread for the reference row.
// Part of ipc_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "core/ipc_run_control.hpp"

namespace nanotick::bench {
namespace {

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

}  // namespace
}  // namespace nanotick::bench
