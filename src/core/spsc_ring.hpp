// Bounded single-producer / single-consumer ring of trivially copyable values.
//
// Thread-safety: one producer thread (try_push, try_claim, commit, try_write,
// try_write_slot, end_write, publish) and one consumer thread (try_pop, front,
// pop, pop_batch, drain) may use it concurrently; size(), empty() and
// capacity() may be called from any thread.
//
// Layout (no pointers: indices and an inline slot array only, so the ring can
// be placed with placement-new in a MAP_SHARED mapping and used by a producer
// and a consumer in different processes; the atomics are lock-free and
// therefore address-free):
//
//   offset 0     producer line  -- written by the producer only
//                  tail_         atomic u64  values published so far (release)
//                  cached_head_  u64         producer's last view of head_
//                  pending_      u64         values written by try_write, not
//                                            yet published
//   offset 64    consumer line  -- written by the consumer only
//                  head_         atomic u64  values consumed so far (release)
//                  known_end_    u64         consumer's cached view of the producer:
//                                            values below it are known published
//   offset 128   slots_[Capacity], each { atomic u64 seq; T value; }
//                  seq and value are written by the producer, read by the consumer.
//                  seq == i + 1 means "slot holds value number i" (i counts from 0).
//   end          padded to a cache line, so neighbours never share our last line.
//
// Indices are 64-bit counters that never wrap in practice (2^64 values at 10^9
// per second is 584 years); the slot of value i is i & (Capacity - 1).
//
// Why a sequence number per slot rather than the consumer polling tail_:
// with tail_ polling, the consumer first misses on the producer's line to learn
// that a value exists and only then misses on the slot line to read it, two
// serial cache-line transfers per hop. Publishing through the slot's own seq
// puts the signal and the payload on one line, so one transfer carries both;
// a round trip then costs about what a raw cache-line ping-pong costs. The
// consumer never reads the producer's line on its hot path.
//
// Cached views of the other side:
// * the producer keeps cached_head_ and reads the consumer's line only when
//   that copy says the ring is full. Having found the ring full, it resumes
//   only once kResumeFree slots (about two cache lines) are free: otherwise it
//   would refill each slot the moment the consumer frees it, writing the very
//   line the consumer is reading next, and a slow consumer would miss on that
//   line once per value. A full ring is always drained by its consumer, so this
//   can delay the producer, never block it;
// * the consumer keeps known_end_. When it runs out of known values it probes
//   the seq of the slot kLookahead - 1 ahead (about two cache lines ahead)
//   before the seq of the next slot: values are published in order, so a
//   published slot there means every slot before it is published too, and the
//   consumer then takes kLookahead values without touching a line the producer
//   is still writing. Without this, a consumer that has caught up re-reads the
//   line the producer is filling after every value, and the two cores trade
//   that line once per value. The probe costs no latency: both loads are
//   independent and a stale probe slot is usually in the consumer's own cache.
//
// Memory ordering (acquire/release only, never seq_cst):
// * producer: writes slot.value, then slot.seq.store(i + 1, release). A
//   consumer that loads seq == i + 1 with acquire sees the whole value.
// * consumer: reads slot.value, then head_.store(i + 1, release). The producer
//   loads head_ with acquire before reusing a slot, so the consumer's read of
//   the old value happens-before the producer's overwrite.
// * an acquire load that sees seq == i + 1 also makes every value before i
//   visible (the producer wrote them earlier, in program order), which is what
//   lets known_end_ cover a whole look-ahead range from one probe.
// * tail_ is stored with release after seq, so tail_ - head_ (size()) never
//   counts a value whose slot is not yet readable.
//
// Batched publication (try_write, or try_write_slot + end_write, then
// publish): a producer that emits values in
// bursts -- the matching engine writing the outputs of a batch of requests --
// can write a whole burst and publish it with one pass of seq stores. A
// consumer that has caught up probes the seq of the next unpublished slot, so
// with per-value publication it pulls that line away from the producer before
// almost every value, and the producer's next write to it waits for the line
// to come back; published per burst, that happens about once per burst (the
// engine benchmark measures the difference, docs/BENCHMARKS.md). The cost is
// latency: a written value waits for its burst's publish(). The consumer side
// is unchanged. try_push/try_claim stay exactly the per-value path (a u64
// ring's throughput is sensitive to a single extra store in them: the
// producer just ahead of the consumer is what keeps them off each other's
// lines), so they require the burst published first.
//
// Construction writes every slot's seq, which also pre-faults the slot pages.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/compiler.hpp"

namespace nanotick::core {

// A constraint (not only a static_assert) so that code and tests can ask whether
// a ring type is valid: `requires { typename SpscRing<T, 3>; }` is false.
template <typename T, std::size_t Capacity>
  requires(std::is_trivially_copyable_v<T> && std::has_single_bit(Capacity))
class alignas(kCacheLine) SpscRing {
 public:
  using value_type = T;

  SpscRing() noexcept {
    static_assert(std::is_standard_layout_v<SpscRing>,
                  "SpscRing must be standard-layout to live in shared memory: "
                  "use a standard-layout T");
    static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                  "shared-memory use needs lock-free (address-free) 64-bit atomics");
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  static constexpr std::size_t capacity() noexcept { return Capacity; }

  // ---- producer side -------------------------------------------------------

  // Copies `value` into the ring. Returns false (and changes nothing) when the
  // ring is full; after a full ring, until kResumeFree slots are free again.
  // Precondition: nothing written by try_write() awaits publish().
  [[nodiscard]] NT_ALWAYS_INLINE bool try_push(const T& value) noexcept {
    NT_DEBUG_ASSERT(pending_ == 0, "SpscRing::try_push() before publish() of the values try_write() wrote");
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (!has_space(tail)) {
      return false;
    }
    Slot& slot = slots_[tail & kMask];
    std::memcpy(&slot.value, &value, sizeof(T));
    publish(slot, tail);
    return true;
  }

  // Copies `value` into the ring WITHOUT publishing it: the consumer sees it,
  // and every value written before it, at the next publish(). Returns false
  // when the ring is full -- having published what was written, so the
  // consumer can make room.
  [[nodiscard]] NT_ALWAYS_INLINE bool try_write(const T& value) noexcept {
    const std::uint64_t pos = tail_.load(std::memory_order_relaxed) + pending_;
    if (!has_space(pos)) {
      publish();
      return false;
    }
    std::memcpy(&slots_[pos & kMask].value, &value, sizeof(T));
    ++pending_;
    return true;
  }

  // Zero-copy try_write(): returns the slot the next try_write() would fill, to
  // be filled in place and followed by end_write(); nothing is visible until
  // publish(). nullptr when the ring is full, having published what was
  // written (as try_write()). Calling it again before end_write() returns the
  // same slot. Writing in place saves the copy and, for a value the caller has
  // just built field by field, the stalls of reading it back with wider loads.
  [[nodiscard]] NT_ALWAYS_INLINE T* try_write_slot() noexcept {
    const std::uint64_t pos = tail_.load(std::memory_order_relaxed) + pending_;
    if (!has_space(pos)) {
      publish();
      return nullptr;
    }
    return &slots_[pos & kMask].value;
  }

  // Counts the slot returned by the last successful try_write_slot() as written.
  NT_ALWAYS_INLINE void end_write() noexcept {
    NT_DEBUG_ASSERT(tail_.load(std::memory_order_relaxed) + pending_ - head_.load(std::memory_order_acquire) < Capacity,
                    "SpscRing::end_write() without a successful try_write_slot()");
    ++pending_;
  }

  // Makes every value try_write() wrote visible to the consumer, oldest first.
  NT_ALWAYS_INLINE void publish() noexcept {
    if (pending_ == 0) {
      return;
    }
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    const std::uint64_t end = tail + pending_;
    // In order: a consumer that sees a slot's seq may take every slot before it.
    for (std::uint64_t i = tail; i < end; ++i) {
      slots_[i & kMask].seq.store(i + 1, std::memory_order_release);
    }
    tail_.store(end, std::memory_order_release);
    pending_ = 0;
  }

  // Zero-copy write: returns the next free slot to fill in place, or nullptr
  // when try_push() would return false. Nothing is visible to the consumer
  // until commit(). Calling try_claim() again before commit() returns the same
  // slot. Precondition as try_push().
  [[nodiscard]] NT_ALWAYS_INLINE T* try_claim() noexcept {
    NT_DEBUG_ASSERT(pending_ == 0, "SpscRing::try_claim() before publish() of the values try_write() wrote");
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (!has_space(tail)) {
      return nullptr;
    }
    return &slots_[tail & kMask].value;
  }

  // Publishes the slot returned by the last successful try_claim().
  NT_ALWAYS_INLINE void commit() noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    NT_DEBUG_ASSERT(tail - head_.load(std::memory_order_acquire) < Capacity,
                    "SpscRing::commit() without a successful try_claim()");
    publish(slots_[tail & kMask], tail);
  }

  // ---- consumer side -------------------------------------------------------

  // Moves the oldest value into `out`. Returns false (out untouched) when empty.
  [[nodiscard]] NT_ALWAYS_INLINE bool try_pop(T& out) noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (!is_published(head)) {
      return false;
    }
    std::memcpy(&out, &slots_[head & kMask].value, sizeof(T));
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Zero-copy read: the oldest value in place, or nullptr when empty. The slot
  // stays owned by the consumer (the producer cannot overwrite it) until pop().
  [[nodiscard]] NT_ALWAYS_INLINE const T* front() noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (!is_published(head)) {
      return nullptr;
    }
    return &slots_[head & kMask].value;
  }

  // Releases the value returned by the last non-null front().
  NT_ALWAYS_INLINE void pop() noexcept {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    NT_DEBUG_ASSERT(slots_[head & kMask].seq.load(std::memory_order_acquire) == head + 1,
                    "SpscRing::pop() on an empty ring (call front() first)");
    head_.store(head + 1, std::memory_order_release);
  }

  // Calls fn(const T&) on up to `max` values in order, in place, then releases
  // them all with a single store. Returns how many were processed. If fn
  // throws, the values it has already seen are not released (they come again).
  template <typename Fn>
  std::size_t drain(Fn&& fn, std::size_t max = Capacity) noexcept(std::is_nothrow_invocable_v<Fn&, const T&>) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    std::size_t n = 0;
    // Stops after at most Capacity values: slot (head + Capacity) is slot head,
    // which we have not released, so it cannot hold value head + Capacity.
    while (n < max && is_published(head + n)) {
      fn(static_cast<const T&>(slots_[(head + n) & kMask].value));
      ++n;
    }
    if (n != 0) {
      head_.store(head + n, std::memory_order_release);
    }
    return n;
  }

  // Copies up to `max` values into out[0..n) and returns n (0 when empty).
  [[nodiscard]] std::size_t pop_batch(T* out, std::size_t max) noexcept {
    return drain([out, i = std::size_t{0}](const T& v) mutable noexcept { std::memcpy(out + i++, &v, sizeof(T)); },
                 max);
  }

  // ---- any thread ----------------------------------------------------------

  // Values in the ring: exact from a quiescent ring, otherwise a snapshot that
  // may be stale by the values pushed or popped meanwhile. From the consumer,
  // size() values are guaranteed poppable; from the producer, at least
  // capacity() - size() values are guaranteed pushable.
  [[nodiscard]] std::size_t size() const noexcept {
    // head_ first: head_ only grows and never passes tail_, so a tail_ read
    // afterwards is >= the head_ we saw.
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    const std::uint64_t tail = tail_.load(std::memory_order_acquire);
    if (tail <= head) {
      return 0;
    }
    const std::uint64_t n = tail - head;
    return n < Capacity ? static_cast<std::size_t>(n) : Capacity;
  }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }

 private:
  static constexpr std::uint64_t kMask = Capacity - 1;

  struct Slot {
    std::atomic<std::uint64_t> seq{0};
    T value;
  };

  // Consumer look-ahead distance: about two cache lines of slots, at least 2,
  // at most Capacity (a probe must never alias the consumer's own slot).
  static constexpr std::uint64_t kLookahead =
      std::min<std::uint64_t>(Capacity, std::max<std::uint64_t>(2, 2 * kCacheLine / sizeof(Slot)));

  // Consumer only. True when value number `i` (>= head_) is published.
  NT_ALWAYS_INLINE bool is_published(std::uint64_t i) noexcept {
    if (i < known_end_) {
      return true;
    }
    const std::uint64_t ahead = i + kLookahead - 1;
    if (slots_[ahead & kMask].seq.load(std::memory_order_acquire) == ahead + 1) {
      known_end_ = ahead + 1;
      return true;
    }
    if (slots_[i & kMask].seq.load(std::memory_order_acquire) == i + 1) {
      known_end_ = i + 1;
      return true;
    }
    return false;
  }

  // Free slots the producer waits for after finding the ring full (see top).
  static constexpr std::uint64_t kResumeFree =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(kLookahead, Capacity / 2));

  // Producer only. True when slot number `tail` may be written.
  NT_ALWAYS_INLINE bool has_space(std::uint64_t tail) noexcept {
    if (tail - cached_head_ < Capacity) {
      return true;
    }
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    if (Capacity - (tail - head) < kResumeFree) {
      return false;  // keep cached_head_ stale so the next call checks again
    }
    cached_head_ = head;
    return true;
  }

  NT_ALWAYS_INLINE void publish(Slot& slot, std::uint64_t tail) noexcept {
    slot.seq.store(tail + 1, std::memory_order_release);
    tail_.store(tail + 1, std::memory_order_release);
  }

  // Producer line.
  alignas(kCacheLine) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t cached_head_ = 0;
  std::uint64_t pending_ = 0;
  // Consumer line.
  alignas(kCacheLine) std::atomic<std::uint64_t> head_{0};
  std::uint64_t known_end_ = 0;
  // Slots (written by the producer, read by the consumer).
  alignas(kCacheLine) Slot slots_[Capacity];
};

}  // namespace nanotick::core
