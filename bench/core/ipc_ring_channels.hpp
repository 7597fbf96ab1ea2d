// ipc_bench: the shared-memory channels: core::SpscRing busy-polled or with
// an eventfd or futex doorbell, and boost::lockfree::spsc_queue.
// Part of ipc_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "core/ipc_peer.hpp"

namespace nanotick::bench {
namespace {

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

}  // namespace
}  // namespace nanotick::bench
