// ipc_bench: the kernel channels: pipes, FIFOs, UNIX and loopback sockets
// (blocking or busy-polled), and POSIX message queues.
// Part of ipc_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "core/ipc_ring_channels.hpp"

namespace nanotick::bench {
namespace {

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

}  // namespace
}  // namespace nanotick::bench
