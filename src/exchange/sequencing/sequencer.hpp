// The FIFO sequencer (docs/EXCHANGE.md "Pipeline"): takes the gateway's
// requests in arrival order, gives each the next journal sequence number by
// appending it to the journal, and forwards it to the engine. With the
// `every` fsync policy a batch goes on only after it is written and
// fdatasync'ed (group commit): no acknowledgement can leave before its
// request is on disk. With `batch` and `none` the append (into the staging
// ring, which a kill -9 does not lose) is enough to forward; the auxiliary
// thread's JournalSyncer writes the files and does the fdatasyncs.
//
// When the staging ring is full (the journal thread a whole ring behind)
// the sequencer takes no more requests until it has room: back-pressure,
// never a drop. If the journal fails (disk full), the sequencer halts: it
// forwards nothing more, so nothing unjournaled is ever acknowledged, and
// the server reports the error and stops. An agent; not thread-safe.
//
// Telemetry (docs/TELEMETRY.md), when a recorder is bound to its thread:
// ex_sequencer_in as each request is taken from the gateway's ring,
// ex_sequencer_out for each request forwarded (one clock reading for the
// batch: they leave together), and fn_sequencer for the pass, from its start
// to that reading.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/pipeline.hpp"
#include "exchange/sequencing/journal_writer.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::exchange {

class Sequencer {
 public:
  // Requests taken per pass: 64, so that the first of a batch does not wait
  // long for the others to be appended; with `every`, up to 1,024, so that
  // one fdatasync commits everything that arrived while the last one ran
  // (group commit: the rate it sustains is the batch over the fdatasync time).
  static constexpr std::size_t kBatch = 64;
  static constexpr std::size_t kGroupCommitBatch = 1024;

  Sequencer(RequestRing& in, RequestRing& out, JournalWriter& journal, FsyncPolicy policy) noexcept
      : in_(in),
        out_(out),
        journal_(journal),
        policy_(policy),
        batch_limit_(policy == FsyncPolicy::kEvery ? kGroupCommitBatch : kBatch) {}

  std::string_view role_name() const noexcept { return "sequencer"; }

  int do_work() noexcept {
    if (halted_.load(std::memory_order_relaxed)) return 0;
    if (journal_.failed()) [[unlikely]] {
      halted_.store(true, std::memory_order_release);
      return 0;
    }
    // Nothing to move, or no room to move it: not a pass (fn_sequencer times passes that move requests).
    if (in_.empty() || out_.size() == RequestRing::capacity()) return 0;
    busy_.store(true, std::memory_order_release);  // a batch is between its pop and its push
    int n = 0;
    // Compiled out with the switch off: no null-recorder path for the compiler to warn about.
    if constexpr (NANOTICK_TELEMETRY != 0) {
      if (telemetry::Recorder* const recorder = NT_RECORDER(); recorder != nullptr) [[unlikely]]
        n = sequence_batch<true>(recorder);
      else n = sequence_batch<false>(nullptr);
    } else {
      n = sequence_batch<false>(nullptr);
    }
    busy_.store(false, std::memory_order_release);
    return n;
  }

  // The journal failed: see journal().error(). Readable from any thread.
  bool halted() const noexcept { return halted_.load(std::memory_order_acquire); }
  // A batch taken from the input is not yet forwarded (shutdown's drain check). Any thread.
  bool busy() const noexcept { return busy_.load(std::memory_order_acquire); }
  std::uint64_t sequenced() const noexcept { return sequenced_.get(); }
  std::uint64_t batches() const noexcept { return batches_.get(); }
  // Start-up, before the sequencer's thread runs.
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    file.place(sequenced_, "requests_sequenced");
    file.place(batches_, "sequencer_batches");
  }

 private:
  // kRecord: telemetry records on this thread (`recorder` is then not null).
  template <bool kRecord>
  int sequence_batch(telemetry::Recorder* recorder) noexcept {
    std::uint64_t pass_start = 0;
    if constexpr (kRecord) pass_start = recorder->now();
    const std::size_t room = RequestRing::capacity() - out_.size();
    std::size_t n = 0;
    while (n < std::min(batch_limit_, room)) {
      const InboundRequest* rq = in_.front();
      if (rq == nullptr) break;
      batch_[n] = *rq;
      if constexpr (kRecord)
        (void)recorder->record(telemetry::Point::ex_sequencer_in, telemetry_order_key(rq->request.event_id));
      if (!journal_.append(batch_[n].request)) {
        if (journal_.failed()) halted_.store(true, std::memory_order_release);
        break;  // this request and everything after it stay unacknowledged (for now, or for good)
      }
      in_.pop();
      ++n;
    }
    if (n == 0) return 0;
    if (policy_ == FsyncPolicy::kEvery && (!journal_.flush() || !journal_.sync())) {
      halted_.store(true, std::memory_order_release);
      return static_cast<int>(n);
    }
    for (std::size_t i = 0; i < n; ++i) (void)out_.try_push(batch_[i]);  // room checked above
    if constexpr (kRecord) stamp_forwarded(*recorder, pass_start, n);
    sequenced_.add(n);
    batches_.add();
    return static_cast<int>(n);
  }

  void stamp_forwarded(telemetry::Recorder& recorder, std::uint64_t pass_start, std::size_t n) noexcept {
    const std::uint64_t now = recorder.now();
    for (std::size_t i = 0; i < n; ++i)
      (void)recorder.record_at(now, telemetry::Point::ex_sequencer_out, telemetry_order_key(batch_[i].request.event_id),
                               0, 0);
    (void)recorder.record_at(pass_start, telemetry::Point::fn_sequencer, 0, 0,
                             telemetry::saturate_ticks(pass_start, now));
  }

  RequestRing& in_;
  RequestRing& out_;
  JournalWriter& journal_;
  FsyncPolicy policy_;
  std::size_t batch_limit_;
  std::array<InboundRequest, kGroupCommitBatch> batch_{};
  std::atomic<bool> halted_{false};
  std::atomic<bool> busy_{false};
  core::Counter sequenced_;
  core::Counter batches_;
};

// The journal's background work on the auxiliary thread. Policies batch and
// none: writes the records the sequencer appended into the segment files
// (flush) as soon as there are any. Batch: at most one fdatasync per batch
// window, only when something was written since. None: closes replaced
// segments' descriptors (no sync). Every: nothing (the sequencer writes and
// syncs).
class JournalSyncer {
 public:
  JournalSyncer(JournalWriter& journal, FsyncPolicy policy, std::uint32_t window_us,
                const core::TscClock& clock = core::TscClock::global()) noexcept
      : journal_(journal), clock_(clock), policy_(policy), window_ns_(core::ns_from_us(window_us)) {}

  std::string_view role_name() const noexcept { return "journal-sync"; }

  int do_work() noexcept;

  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

 private:
  JournalWriter& journal_;
  const core::TscClock& clock_;
  FsyncPolicy policy_;
  std::uint64_t window_ns_;
  std::uint64_t last_sync_ns_ = 0;
  std::uint64_t last_segments_ = 0;
  std::atomic<bool> failed_{false};
};

}  // namespace nanotick::exchange
