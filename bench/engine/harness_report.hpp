// The report set every book in regime_bench emits, and the queue that carries
// it to the other core (docs/BENCHMARKS.md, "The five regimes"; issue 13's
// methodology). Each message's reports are: an ack for a new order, one trade
// report per fill at the maker's price naming maker and taker, a cancel
// report (a cancel, an IOC residual, a FOK that could not fill, a modify below
// the filled quantity), a modify ack, and a reject (a new order refused, a
// cancel or modify of an order no longer resting). Market data is not part
// of it.
//
// Every implementation -- nanotick through a sink that translates its
// ExecReports, the peers through hooks at the same points of their flow --
// writes the same 24-byte HarnessReport into the same kind of ring
// (core::SpscRing, published per batch of requests as the exchange's engine
// agent does), drained by a consumer thread pinned on the other CPU that
// reads every report and folds it into a digest. Equal digests prove that two
// books produced the same report stream, so the comparison is of equal work.
//
// Thread-safety: the producer side (push, end_of_batch, finish) belongs to the
// thread that drives the book; the consumer thread is internal.
#pragma once

#include <x86intrin.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/int_hash_map.hpp"
#include "core/spsc_ring.hpp"
#include "core/thread.hpp"

namespace nanotick::bench {

enum class HarnessType : std::uint8_t { kAck = 1, kTrade = 2, kCancelled = 3, kModified = 4, kRejected = 5 };

// One report. Keys are order_key(client, client order id), the only names all
// books share. price/qty: the order's (ack, modify ack: the new total) or the
// trade's; 0 for cancels and rejects. Prices and quantities of the regimes fit
// (regime_bench checks its input before it runs).
struct HarnessReport {
  std::uint64_t key;        // the order (trade: the taker)
  std::uint64_t maker_key;  // trade: the maker; else 0
  std::int32_t price;
  std::uint16_t qty;
  HarnessType type;
  std::uint8_t pad;
};
static_assert(sizeof(HarnessReport) == 24, "with the ring's 8-byte seq, one slot is half a cache line");

// The ring of HarnessReports and its consumer on another CPU. push() writes in
// place (unpublished); end_of_batch() publishes; finish() publishes the rest,
// waits until the consumer has read every report and returns the TSC then.
class ReportQueue {
 public:
  static constexpr std::size_t kCapacity = 4096;

  explicit ReportQueue(int consumer_cpu)
      : ring_(std::make_unique<Ring>()), consumer_("harness-reports", consumer_cpu, [this] { consume(); }) {}
  ~ReportQueue() {
    if (!finished_) (void)finish();
  }
  ReportQueue(const ReportQueue&) = delete;
  ReportQueue& operator=(const ReportQueue&) = delete;

  NT_ALWAYS_INLINE void push(HarnessType type, std::uint64_t key, std::uint64_t maker_key, std::int64_t price,
                             std::int64_t qty) noexcept {
    HarnessReport* slot;
    while ((slot = ring_->try_write_slot()) == nullptr) {
    }
    slot->key = key;
    slot->maker_key = maker_key;
    slot->price = static_cast<std::int32_t>(price);
    slot->qty = static_cast<std::uint16_t>(qty);
    slot->type = type;
    slot->pad = 0;
    ring_->end_write();
    ++pushed_;
  }
  NT_ALWAYS_INLINE void end_of_batch() noexcept { ring_->publish(); }

  std::uint64_t finish() {
    ring_->publish();
    target_.store(pushed_, std::memory_order_relaxed);
    done_.store(true, std::memory_order_release);
    consumer_.join();
    finished_ = true;
    return end_ticks_;
  }

  // After finish(): what the consumer read.
  std::uint64_t reports() const noexcept { return read_; }
  std::uint64_t trades() const noexcept { return trades_; }
  std::uint64_t digest() const noexcept { return digest_; }

 private:
  using Ring = core::SpscRing<HarnessReport, kCapacity>;
  static constexpr int kIdlePauses = 32;

  void consume() {
    for (;;) {
      const std::size_t n = ring_->drain(
          [this](const HarnessReport& r) {
            // A polynomial hash (one multiply on the dependency chain per report, so
            // the consumer keeps up with any book here): order-sensitive, and every
            // field moves it.
            const std::uint64_t head = (std::uint64_t{static_cast<std::uint8_t>(r.type)} << 56) ^
                                       (std::uint64_t{r.qty} << 32) ^ static_cast<std::uint32_t>(r.price);
            const std::uint64_t x = head ^ r.key ^ std::rotl(r.maker_key, 29) * 0x9E3779B97F4A7C15ULL;
            digest_ = (digest_ ^ x) * 0xD6E8FEB86659FD93ULL;
            trades_ += r.type == HarnessType::kTrade;
          },
          256);
      read_ += n;
      if (n == 0) {
        // Caught up: let the producer get ahead instead of re-reading the line it is writing.
        for (int i = 0; i < kIdlePauses; ++i) _mm_pause();
        if (done_.load(std::memory_order_acquire) && read_ == target_.load(std::memory_order_relaxed)) {
          end_ticks_ = core::rdtscp();
          return;
        }
      }
    }
  }

  std::unique_ptr<Ring> ring_;
  // Producer thread only.
  alignas(core::kCacheLine) std::uint64_t pushed_ = 0;
  bool finished_ = false;
  // Handed over once, at the end.
  alignas(core::kCacheLine) std::atomic<std::uint64_t> target_{0};
  std::atomic<bool> done_{false};
  // Consumer thread only (read after join).
  alignas(core::kCacheLine) std::uint64_t read_ = 0;
  std::uint64_t trades_ = 0;
  std::uint64_t digest_ = 0x6E616E6F7469636BULL;
  std::uint64_t end_ticks_ = 0;
  alignas(core::kCacheLine) core::NamedThread consumer_;  // last: starts once everything above exists
};

}  // namespace nanotick::bench
