// One-writer, many-reader broadcast ring: a seqlock per slot, lossy for slow readers.
//
// Thread-safety: one writer thread calls publish(); any number of readers, each
// with its own BroadcastRing::Reader (a Reader is used by one thread only),
// read concurrently. Readers never write to the ring, so they can never slow
// or block the writer (and may map it read-only: every access a reader makes
// is a plain load); a reader that falls more than Capacity messages behind is
// lapped, is told exactly how many messages it lost, and resumes at the
// oldest message still in the ring.
//
// Capacity: a power of two fixed at compile time (the slots are part of the
// object), or std::dynamic_extent: a power of two chosen at run time (config),
// the slots placed right after the object in the same memory (bytes_for,
// create_in) -- how a ring is laid out in a shared-memory segment whose size
// comes from config. A reader of such a ring is given the capacity; it never
// takes it from the ring's memory, which a reader in another process may not
// trust (a wrong value there would send its indices out of bounds).
//
// Layout (no pointers, standard layout: can be placed with placement-new in a
// MAP_SHARED mapping, with readers in other processes):
//
//   offset 0    writer line -- written by the writer only
//                 published_   atomic u64  messages fully published (release)
//                 capacity_    u64         slots (written once, at construction)
//   offset 64   slots[Capacity], each alignas(64) -- written by the writer only
//                 seq          atomic u64  2n+1: message n being written,
//                                          2n+2: message n complete, 0: never used
//                 words[W]     atomic u64  payload, W = ceil(sizeof(T) / 8)
//
// Message n (counting from 0) lives in slot n & (Capacity - 1).
//
// Messages that say their own length: publish(value, bytes) writes only the
// words holding the first `bytes` of the value, and try_read_prefix(out,
// bytes_of) reads the first word, asks bytes_of(that word) how many bytes the
// message has and copies only those (clamped to sizeof(T)). A ring of large
// fixed-size records (a market data packet up to an MTU) then costs what the
// packet's own bytes cost, not the record's. try_read() is the same read with
// every word copied.
//
// Memory ordering. A seqlock's payload copy races with the writer by design, so
// the payload is copied as word-sized atomics (never a plain memcpy, which would
// be a data race, undefined behaviour, and a TSan report):
//
//   writer, message n                     reader, cursor n
//   seq.store(2n+1, relaxed)         (W1)  s1 = seq.load(acquire)          (R1)
//   words[i].store(w, release)  each (W2)  if s1 != 2n+2: empty or lapped
//   seq.store(2n+2, release)         (W3)  w[i] = words[i].load(acquire)   (R2)
//   published_.store(n+1, release)   (W4)  s2 = seq.load(relaxed)          (R3)
//                                           accept iff s2 == s1
//
// * R1 reads W3 of message n, so (release/acquire) every word store of message
//   n happens-before R2: R2 reads message n's words or newer ones.
// * If some R2 reads a word stored by a later message m (same slot, m = n + k * Capacity),
//   that release store synchronises with the acquire R2, and W1 of message m
//   (2m+1) is sequenced before it, so W1(m) happens-before R3 and R3 reads a
//   value >= 2m+1 != s1: the torn copy is rejected.
// * R3 cannot move above the acquire loads R2, so it is a real re-check.
// * A length read from a torn first word is only used to bound the copy
//   (clamped to the slot): the re-check then rejects the copy.
// So an accepted copy is exactly message n. The classic formulation uses relaxed
// word accesses plus a release fence after W1 and an acquire fence before R3;
// per-word release/acquire is the same guarantee with no fences: on x86-64 both
// compile to plain MOVs, and ThreadSanitizer (which does not model
// atomic_thread_fence; GCC warns under -fsanitize=thread) checks it as written.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

#include "core/compiler.hpp"

namespace nanotick::core {

// A constraint (not only a static_assert) so that code and tests can ask whether
// a ring type is valid: `requires { typename BroadcastRing<T, 3>; }` is false.
template <typename T, std::size_t Capacity>
  requires(std::is_trivially_copyable_v<T> && (Capacity == std::dynamic_extent || std::has_single_bit(Capacity)))
class alignas(kCacheLine) BroadcastRing {
  static constexpr std::size_t kWordSize = sizeof(std::uint64_t);
  static constexpr std::size_t kWords = (sizeof(T) + kWordSize - 1) / kWordSize;

  // One cache line (or more) per slot: readers of message n never share a line
  // with the writer writing message n + 1.
  struct alignas(kCacheLine) Slot {
    std::atomic<std::uint64_t> seq{0};
    std::atomic<std::uint64_t> words[kWords];
  };

 public:
  using value_type = T;
  // The capacity is chosen at run time (create_in); the slots follow the object.
  static constexpr bool kRuntimeCapacity = Capacity == std::dynamic_extent;

  enum class ReadStatus : std::uint8_t {
    kOk,      // a message was copied out; the reader moved to the next one
    kEmpty,   // no new message yet (or the next one is being written right now)
    kLapped,  // the writer overwrote unread messages: `lost` says how many; the
              // reader now points at the oldest message still in the ring
  };
  struct ReadResult {
    ReadStatus status;
    std::uint64_t lost;  // > 0 only with kLapped
  };
  enum class StartAt : std::uint8_t {
    kNext,    // only messages published after the reader joined
    kOldest,  // the oldest message still in the ring
  };

  // A reader's private cursor. Not thread-safe: one thread per Reader. Holds a
  // pointer to the ring, so it lives in the reading process, not in the ring.
  class Reader {
   public:
    explicit Reader(const BroadcastRing& ring, StartAt start = StartAt::kNext) noexcept
      requires(!kRuntimeCapacity)
        : Reader(ring, Capacity, start, 0) {}
    // A ring of run-time capacity: `capacity` is the reader's own knowledge of
    // it (what the ring's creator announced, checked by the caller), never read
    // from the ring.
    Reader(const BroadcastRing& ring, std::size_t capacity, StartAt start = StartAt::kNext) noexcept
      requires(kRuntimeCapacity)
        : Reader(ring, capacity, start, 0) {}

    // Copies the next message into `out` (kOk), or reports kEmpty or kLapped
    // without touching `out`. After kLapped, call again to read on.
    [[nodiscard]] ReadResult try_read(T& out) noexcept {
      auto whole = [](std::uint64_t) noexcept { return sizeof(T); };
      return read(out, whole);
    }

    // As try_read, for a message whose first 8 bytes tell its size:
    // bytes_of(first word) -> the bytes to copy (any value: clamped to
    // [8, sizeof(T)]). The rest of `out` is left as it was.
    template <typename BytesOf>
    [[nodiscard]] ReadResult try_read_prefix(T& out, BytesOf&& bytes_of) noexcept {
      static_assert(sizeof(T) >= kWordSize, "a sized message holds its size in its first word");
      return read(out, bytes_of);
    }

    // Number of the next message this reader will read (messages count from 0).
    [[nodiscard]] std::uint64_t position() const noexcept { return next_; }
    // Messages lost to laps since this reader was created.
    [[nodiscard]] std::uint64_t total_lost() const noexcept { return lost_; }

   private:
    // The seqlock read of both forms (see the file comment).
    template <typename BytesOf>
    NT_ALWAYS_INLINE ReadResult read(T& out, BytesOf& bytes_of) noexcept {
      const Slot& slot = slots_[next_ & mask_];
      const std::uint64_t complete = 2 * next_ + 2;
      const std::uint64_t s1 = slot.seq.load(std::memory_order_acquire);  // R1
      if (s1 < complete) {
        return {ReadStatus::kEmpty, 0};  // not written yet, or being written now
      }
      if (s1 == complete) {
        std::uint64_t words[kWords];
        words[0] = slot.words[0].load(std::memory_order_acquire);  // R2
        const std::size_t n = words_for(bytes_of(words[0]));
        for (std::size_t i = 1; i < n; ++i) {
          words[i] = slot.words[i].load(std::memory_order_acquire);  // R2
        }
        if (slot.seq.load(std::memory_order_relaxed) == s1) {  // R3
          std::memcpy(&out, words, std::min(n * kWordSize, sizeof(T)));
          ++next_;
          return {ReadStatus::kOk, 0};
        }
      }
      // The slot holds (or is receiving) a later message: message next_ is gone.
      return resync();
    }

    Reader(const BroadcastRing& ring, std::size_t capacity, StartAt start, int) noexcept
        : ring_(&ring), slots_(ring.slots()), capacity_(capacity), mask_(capacity - 1), next_(ring.published()) {
      if (start == StartAt::kOldest) {
        next_ = next_ > capacity_ ? next_ - capacity_ : 0;
      }
    }

    NT_NOINLINE ReadResult resync() noexcept {
      // Oldest message still in the ring, as of the writer's last completed
      // publish. If the writer has since started the next one, that message is
      // gone too and the next try_read reports it: every message is counted
      // exactly once, as read or as lost. next_ + 1 guarantees progress.
      const std::uint64_t published = ring_->published();
      const std::uint64_t oldest = published > capacity_ ? published - capacity_ : 0;
      const std::uint64_t resume = std::max(next_ + 1, oldest);
      const std::uint64_t lost = resume - next_;
      next_ = resume;
      lost_ += lost;
      return {ReadStatus::kLapped, lost};
    }

    const BroadcastRing* ring_;
    const Slot* slots_;
    std::uint64_t capacity_;
    std::uint64_t mask_;
    std::uint64_t next_;
    std::uint64_t lost_ = 0;
  };

  BroadcastRing() noexcept
    requires(!kRuntimeCapacity)
      : capacity_(Capacity) {
    check_layout();
  }
  BroadcastRing(const BroadcastRing&) = delete;
  BroadcastRing& operator=(const BroadcastRing&) = delete;

  // Run-time capacity: the bytes a ring of `capacity` slots takes (the object
  // and its slots right after it).
  static constexpr std::size_t bytes_for(std::size_t capacity) noexcept
    requires(kRuntimeCapacity)
  {
    return sizeof(BroadcastRing) + capacity * sizeof(Slot);
  }
  // Run-time capacity: constructs a ring of `capacity` slots (a power of two,
  // checked by the caller) in `memory`: bytes_for(capacity) bytes aligned to a
  // cache line, owned by the caller (destroy nothing: the ring is trivially
  // destructible memory).
  static BroadcastRing& create_in(void* memory, std::size_t capacity) noexcept
    requires(kRuntimeCapacity)
  {
    auto* ring = new (memory) BroadcastRing(capacity);
    Slot* slots = reinterpret_cast<Slot*>(static_cast<std::byte*>(memory) + sizeof(BroadcastRing));
    for (std::size_t i = 0; i < capacity; ++i) {
      new (&slots[i]) Slot();
    }
    return *ring;
  }

  static constexpr std::size_t capacity() noexcept
    requires(!kRuntimeCapacity)
  {
    return Capacity;
  }
  // Either form: the number of slots, as the writer knows it.
  std::size_t slot_count() const noexcept { return capacity_; }

  // Writer only. Publishes `value` as the next message and returns its number.
  // Never waits: overwrites the oldest message whether or not it was read.
  NT_ALWAYS_INLINE std::uint64_t publish(const T& value) noexcept { return publish(value, sizeof(T)); }

  // Writer only. Publishes the first `bytes` of `value` (at least one word, at
  // most sizeof(T); the words after them in the slot keep older bytes): for a
  // message whose first word tells its size to try_read_prefix.
  NT_ALWAYS_INLINE std::uint64_t publish(const T& value, std::size_t bytes) noexcept {
    const std::uint64_t n = published_.load(std::memory_order_relaxed);
    Slot& slot = slots()[n & (capacity_ - 1)];
    const std::size_t count = words_for(bytes);
    std::uint64_t words[kWords];
    words[count - 1] = 0;  // a partial last word is zero-filled
    std::memcpy(words, &value, std::min(count * kWordSize, sizeof(T)));
    slot.seq.store(2 * n + 1, std::memory_order_relaxed);  // W1
    for (std::size_t i = 0; i < count; ++i) {
      slot.words[i].store(words[i], std::memory_order_release);  // W2
    }
    slot.seq.store(2 * n + 2, std::memory_order_release);  // W3
    published_.store(n + 1, std::memory_order_release);    // W4
    return n;
  }

  // Messages published so far (any thread).
  [[nodiscard]] std::uint64_t published() const noexcept { return published_.load(std::memory_order_acquire); }

 private:
  struct NoSlots {};
  using SlotArray = std::conditional_t<kRuntimeCapacity, NoSlots, Slot[kRuntimeCapacity ? 1 : Capacity]>;

  explicit BroadcastRing(std::size_t capacity) noexcept
    requires(kRuntimeCapacity)
      : capacity_(capacity) {
    check_layout();
  }
  static void check_layout() noexcept {
    static_assert(std::is_standard_layout_v<BroadcastRing>,
                  "BroadcastRing must be standard-layout to live in shared memory");
    static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
                  "shared-memory use needs lock-free (address-free) 64-bit atomics");
    static_assert(sizeof(BroadcastRing) % kCacheLine == 0, "run-time slots start on a cache line of their own");
  }

  // Bytes -> whole words to copy, in [1, kWords].
  static constexpr std::size_t words_for(std::uint64_t bytes) noexcept {
    if (bytes >= sizeof(T)) return kWords;
    return bytes <= kWordSize ? 1 : static_cast<std::size_t>((bytes + kWordSize - 1) / kWordSize);
  }

  Slot* slots() noexcept {
    if constexpr (kRuntimeCapacity) {
      return std::launder(reinterpret_cast<Slot*>(reinterpret_cast<std::byte*>(this) + sizeof(BroadcastRing)));
    } else {
      return slots_;
    }
  }
  const Slot* slots() const noexcept { return const_cast<BroadcastRing*>(this)->slots(); }

  alignas(kCacheLine) std::atomic<std::uint64_t> published_{0};
  std::uint64_t capacity_;
  [[no_unique_address]] SlotArray slots_;  // compile-time capacity: the slots (Slot is cache-line aligned)
};

}  // namespace nanotick::core
