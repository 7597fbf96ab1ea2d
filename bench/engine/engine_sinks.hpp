// The sinks the engine benchmark replays into: null (drops everything),
// counting (forces every output to be written) and SPSC (every output pushed
// into core::SpscRing drained by a consumer on the other CPU, as the gateway
// and the market data publisher would). end_of_batch() is called after every
// batch of requests, as exchange::EngineAgent does.
#pragma once

#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/spsc_ring.hpp"
#include "core/thread.hpp"
#include "engine/events.hpp"

namespace nanotick::bench {

namespace nc = nanotick::core;
namespace ne = nanotick::engine;
namespace nb = nanotick::bench;

// Forces the compiler to materialise *p in memory (the pointer escapes).
inline void escape(const void* p) noexcept { asm volatile("" : : "r"(p) : "memory"); }

// Drops everything: the reports and events need not even be built.
struct NullSink {
  explicit NullSink(const nb::Args&) {}
  void on_report(const ne::ExecReport&) noexcept {}
  void on_market_data(const ne::MdEvent& m) noexcept { trades_ += m.type == ne::MdType::kTrade; }
  void end_of_batch() noexcept {}
  std::uint64_t finish() noexcept { return nc::rdtscp(); }
  std::uint64_t trades() const noexcept { return trades_; }
  std::uint64_t outputs() const noexcept { return 0; }
  std::uint64_t trades_ = 0;
};

// Counts every output and makes the engine write each one out in full.
struct CountingSink {
  explicit CountingSink(const nb::Args&) {}
  void on_report(const ne::ExecReport& r) noexcept {
    ++outputs_;
    escape(&r);
  }
  void on_market_data(const ne::MdEvent& m) noexcept {
    ++outputs_;
    trades_ += m.type == ne::MdType::kTrade;
    escape(&m);
  }
  void end_of_batch() noexcept {}
  std::uint64_t finish() noexcept { return nc::rdtscp(); }
  std::uint64_t trades() const noexcept { return trades_; }
  std::uint64_t outputs() const noexcept { return outputs_; }
  std::uint64_t outputs_ = 0;
  std::uint64_t trades_ = 0;
};

// When the engine's outputs become visible to the consumer.
enum class Publish {
  kPerBatch,   // written unpublished, published at end_of_batch (exchange::RingSink)
  kPerOutput,  // each output published at once
};

// Where the engine builds each output.
enum class Build {
  kInPlace,    // in its ring slot (engine::InPlaceSink, as exchange::RingSink)
  kCopied,     // on the engine's stack, then copied into the slot (on_report/on_market_data)
};

// The rings an SPSC sink writes the engine's outputs into.
struct OutputRings {
  static constexpr std::size_t kCapacity = 4096;
  nc::SpscRing<ne::ExecReport, kCapacity> reports;
  nc::SpscRing<ne::MdEvent, kCapacity> md;
};

// Pushes reports and market data into two SPSC rings drained by a consumer
// thread pinned on cpu_b (as the gateway and the publisher would). The engine
// thread is the only producer; finish() publishes what is left, waits until
// the consumer has taken every output and returns the TSC at that moment.
template <Publish kPublish, Build kBuild = Build::kInPlace>
class SpscSink {
 public:
  explicit SpscSink(const nb::Args& args)
      : rings_(std::make_unique<Rings>()), consumer_("engine-sink", args.cpu_b, [this] { consume(); }) {}
  ~SpscSink() {
    if (!finished_) (void)finish();
  }
  SpscSink(const SpscSink&) = delete;
  SpscSink& operator=(const SpscSink&) = delete;

  // engine::InPlaceSink (only when built in place).
  ne::ExecReport& claim_report() noexcept
    requires(kBuild == Build::kInPlace)
  {
    return claim(rings_->reports);
  }
  void commit_report() noexcept
    requires(kBuild == Build::kInPlace)
  {
    ++pushed_reports_;
    commit(rings_->reports);
  }
  ne::MdEvent& claim_market_data() noexcept
    requires(kBuild == Build::kInPlace)
  {
    return claim(rings_->md);
  }
  void commit_market_data() noexcept
    requires(kBuild == Build::kInPlace)
  {
    ++pushed_md_;
    commit(rings_->md);
  }

  void on_report(const ne::ExecReport& r) noexcept {
    ++pushed_reports_;
    claim(rings_->reports) = r;
    commit(rings_->reports);
  }
  void on_market_data(const ne::MdEvent& m) noexcept {
    ++pushed_md_;
    claim(rings_->md) = m;
    commit(rings_->md);
  }
  void end_of_batch() noexcept {
    rings_->reports.publish();
    rings_->md.publish();
  }
  std::uint64_t finish() {
    end_of_batch();
    target_reports_.store(pushed_reports_, std::memory_order_relaxed);
    target_md_.store(pushed_md_, std::memory_order_relaxed);
    done_.store(true, std::memory_order_release);
    consumer_.join();
    finished_ = true;
    return end_ticks_;
  }
  // After finish(): what the consumer saw.
  std::uint64_t trades() const noexcept { return trades_; }
  std::uint64_t report_seq_sum() const noexcept { return report_seq_sum_; }
  std::uint64_t outputs() const noexcept { return pushed_reports_ + pushed_md_; }

 private:
  static constexpr int kIdlePauses = 32;
  using Rings = OutputRings;

  // The ring's next slot, waiting out a full ring (its consumer is on the other CPU).
  template <typename Ring>
  typename Ring::value_type& claim(Ring& ring) noexcept {
    typename Ring::value_type* slot;
    if constexpr (kPublish == Publish::kPerBatch) {
      while ((slot = ring.try_write_slot()) == nullptr) ++full_spins_;
    } else {
      while ((slot = ring.try_claim()) == nullptr) ++full_spins_;
    }
    return *slot;
  }
  template <typename Ring>
  void commit(Ring& ring) noexcept {
    if constexpr (kPublish == Publish::kPerBatch) {
      ring.end_write();
    } else {
      ring.commit();
    }
  }

  void consume() {
    std::uint64_t got_reports = 0;
    std::uint64_t got_md = 0;
    for (;;) {
      const std::size_t r = rings_->reports.drain([this](const ne::ExecReport& e) { report_seq_sum_ += e.seq; }, 256);
      const std::size_t m =
          rings_->md.drain([this](const ne::MdEvent& e) { trades_ += e.type == ne::MdType::kTrade; }, 256);
      got_reports += r;
      got_md += m;
      if (r + m == 0) {
        // Caught up: let the engine get ahead instead of re-reading the lines it is
        // writing (each re-read would cost it a cache-line transfer per output).
        for (int i = 0; i < kIdlePauses; ++i) _mm_pause();
      }
      if (done_.load(std::memory_order_acquire) && got_reports == target_reports_.load(std::memory_order_relaxed) &&
          got_md == target_md_.load(std::memory_order_relaxed)) {
        end_ticks_ = nc::rdtscp();
        return;
      }
    }
  }

  // Each group on lines of its own: the engine writes its counters once per
  // output and the consumer its own once per output, so a shared line would
  // pass between the two cores about once per output (whether they shared one
  // used to depend on where the sink was allocated; docs/BENCHMARKS.md).
  std::unique_ptr<Rings> rings_;  // read by both, written by neither
  // Engine thread only.
  alignas(nc::kCacheLine) std::uint64_t pushed_reports_ = 0;
  std::uint64_t pushed_md_ = 0;
  std::uint64_t full_spins_ = 0;
  bool finished_ = false;
  // Handed over once, at the end.
  alignas(nc::kCacheLine) std::atomic<std::uint64_t> target_reports_{0};
  std::atomic<std::uint64_t> target_md_{0};
  std::atomic<bool> done_{false};
  // Consumer thread only (read after join).
  alignas(nc::kCacheLine) std::uint64_t report_seq_sum_ = 0;
  std::uint64_t trades_ = 0;
  std::uint64_t end_ticks_ = 0;
  alignas(nc::kCacheLine) nc::NamedThread consumer_;  // last: starts once everything above exists
};

// The SPSC sink's rings and in-place writes, published per batch, with the
// consumer's reading done on the engine's own thread at the end of each batch:
// all that the SPSC sink costs except moving the lines to the other core. The
// difference between the two is the cross-core hand-off.
class SameCoreRingSink {
 public:
  explicit SameCoreRingSink(const nb::Args&) : rings_(std::make_unique<OutputRings>()) {}

  ne::ExecReport& claim_report() noexcept { return claim(rings_->reports); }
  void commit_report() noexcept {
    ++pushed_;
    rings_->reports.end_write();
  }
  ne::MdEvent& claim_market_data() noexcept { return claim(rings_->md); }
  void commit_market_data() noexcept {
    ++pushed_;
    rings_->md.end_write();
  }
  void on_report(const ne::ExecReport& r) noexcept {
    claim_report() = r;
    commit_report();
  }
  void on_market_data(const ne::MdEvent& m) noexcept {
    claim_market_data() = m;
    commit_market_data();
  }
  void end_of_batch() noexcept {
    rings_->reports.publish();
    rings_->md.publish();
    drain();
  }
  std::uint64_t finish() noexcept {
    end_of_batch();
    return nc::rdtscp();
  }
  std::uint64_t trades() const noexcept { return trades_; }
  std::uint64_t report_seq_sum() const noexcept { return report_seq_sum_; }
  std::uint64_t outputs() const noexcept { return pushed_; }

 private:
  // A batch that fills a ring (a sweep through many levels) is drained on the spot.
  template <typename Ring>
  typename Ring::value_type& claim(Ring& ring) noexcept {
    typename Ring::value_type* slot;
    while ((slot = ring.try_write_slot()) == nullptr) drain();
    return *slot;
  }
  void drain() noexcept {
    rings_->reports.drain([this](const ne::ExecReport& e) { report_seq_sum_ += e.seq; });
    rings_->md.drain([this](const ne::MdEvent& e) { trades_ += e.type == ne::MdType::kTrade; });
  }

  std::unique_ptr<OutputRings> rings_;
  std::uint64_t pushed_ = 0;
  std::uint64_t report_seq_sum_ = 0;
  std::uint64_t trades_ = 0;
};

}  // namespace nanotick::bench
