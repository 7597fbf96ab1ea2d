// Recorder: one recording thread's ring of telemetry records.
//
// Thread-safety: one producer thread at a time calls record() / record_at()
// (the thread a ThreadBinding bound it to); one consumer thread (the Writer's
// back end) calls drain(); dropped(), name() and clock() may be called from
// any thread.
//
// record() reads the clock, claims the next slot of a fixed SpscRing of
// kCapacity records, fills it and commits it with one release store: no
// allocation, no lock, no system call, never blocks. When the ring is full
// (the back end has fallen kCapacity records behind) the record is dropped and
// counted; the count goes into the file's trailer, so a report says how much
// it did not see instead of silently under-counting.
//
// Layout: the fields the producer reads on every call (the clock) and the
// drop counter it writes share the first cache line; the ring's own lines
// (producer line, consumer line, slots) follow, each aligned. A Recorder is
// about 2.6 MiB (65,536 slots of 40 bytes), so it lives on the heap:
// Recorder::create() is the only way to make one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "core/compiler.hpp"
#include "core/spsc_ring.hpp"
#include "core/tsc_clock.hpp"
#include "telemetry/points.hpp"
#include "telemetry/record.hpp"

namespace nanotick::telemetry {

class Recorder {
 public:
  // 64 Ki records: with the back end draining every millisecond, a thread may
  // record 65 million records per second before it drops any.
  static constexpr std::size_t kCapacity = std::size_t{1} << 16;
  // Longest recorder name a telemetry file's trailer can carry.
  static constexpr std::size_t kMaxNameBytes = 31;

  // Start-up only (allocates and pre-faults the ring). Throws
  // std::invalid_argument when `name` is empty, longer than kMaxNameBytes or
  // holds a character outside printable ASCII. `clock` must outlive the
  // recorder.
  static std::unique_ptr<Recorder> create(std::string name, const core::TscClock& clock);

  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // ---- producer (the bound thread) ----------------------------------------

  // Stamps `point` now. Returns false when the ring was full (counted in
  // dropped()).
  NT_ALWAYS_INLINE bool record(Point point, std::uint64_t key, std::uint64_t aux = 0,
                               std::uint32_t cycles = 0) noexcept {
    return record_at(clock_->now(), point, key, aux, cycles);
  }

  // Stamps `point` at a time read earlier with now() (ScopedTimer records
  // its start time once the call has ended).
  NT_ALWAYS_INLINE bool record_at(std::uint64_t tsc, Point point, std::uint64_t key, std::uint64_t aux,
                                  std::uint32_t cycles) noexcept {
    Record* slot = ring_.try_claim();
    if (slot == nullptr) [[unlikely]] {
      // Only this thread writes the counter: a plain load + store, no RMW.
      dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return false;
    }
    slot->tsc = tsc;
    slot->key = key;
    slot->aux = aux;
    slot->point = static_cast<std::uint16_t>(point);
    slot->reserved = 0;
    slot->cycles = cycles;
    ring_.commit();
    return true;
  }

  // The recorder's clock reading (ticks), for callers timing a region.
  NT_ALWAYS_INLINE std::uint64_t now() const noexcept { return clock_->now(); }

  // ---- consumer (the Writer's back end) ----------------------------------

  // Calls fn(const Record&) on up to `max` records in order and releases them.
  template <typename Fn>
  std::size_t drain(Fn&& fn, std::size_t max = kCapacity) noexcept(std::is_nothrow_invocable_v<Fn&, const Record&>) {
    return ring_.drain(static_cast<Fn&&>(fn), max);
  }

  // ---- any thread ---------------------------------------------------------

  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  // Records waiting in the ring (a snapshot; exact once the producer stopped).
  std::size_t pending() const noexcept { return ring_.size(); }
  const std::string& name() const noexcept { return name_; }
  const core::TscClock& clock() const noexcept { return *clock_; }

 private:
  friend class ThreadBinding;  // claims and releases bound_

  Recorder(std::string name, const core::TscClock& clock) noexcept;

  // Producer line: read (clock_) and written (dropped_) by the bound thread.
  alignas(core::kCacheLine) const core::TscClock* const clock_;
  std::atomic<std::uint64_t> dropped_{0};
  // Cold: set by ThreadBinding (acq_rel exchange), so that two threads can
  // never be the ring's producer at once.
  alignas(core::kCacheLine) std::atomic<bool> bound_{false};
  const std::string name_;
  core::SpscRing<Record, kCapacity> ring_;
};

}  // namespace nanotick::telemetry
