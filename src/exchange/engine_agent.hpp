// The matching engine as an agent (docs/EXCHANGE.md "Pipeline"): pops
// sequenced requests and processes them; outputs go to the Sink, which in
// compact mode hands them straight to the gateway and the market data
// publisher on this same thread (DirectSink) and in dedicated mode pushes them
// into rings for their threads (RingSink). Not thread-safe: one thread.
//
// Telemetry (docs/TELEMETRY.md), when a recorder is bound to the agent's
// thread: ex_engine_in and ex_engine_out around each request, and one timer
// for the same span by request kind -- fn_book_add for a new order that did
// not trade, fn_book_match for one that did (the sinks count the trade events
// they pass on), fn_book_cancel, fn_engine_process for a modify. Two clock
// readings per request serve all three records. The engine itself stays pure:
// it is timed from here -- but for the stage split (fn_pre_trade,
// fn_matching, fn_settlement, fn_ledger: controls/stage_ticks.hpp), which
// needs clock reads inside the step: ControlledEngine::process_staged and
// the ledger's tap take them, only on this recorded path.
#pragma once

#include <immintrin.h>

#include <string_view>

#include "controls/controlled_engine.hpp"
#include "core/counter.hpp"
#include "engine/matching_engine.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "exchange/pipeline.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::exchange {

// Compact mode: the gateway and the publisher run on the engine's thread.
// `muted` drops everything (journal replay at start-up: those outputs were
// sent before the restart, or never acknowledged).
template <typename Gateway, typename Publisher>
struct DirectSink {
  Gateway* gateway;
  Publisher* publisher;
  bool muted = false;
  std::uint64_t trades = 0;  // trade events passed on (EngineAgent tells a match from an add by it)
  // The trade ledger's tap (trade_tap.hpp): sees every report, muted ones too
  // (a replay's trades the ledger file lacks go in then). nullptr: no ledger.
  TradeTap* tap = nullptr;

  FirstAnswerTsc first_answer{};  // EngineAgent sets it before each request

  void on_report(const engine::ExecReport& r) noexcept {
    if (tap != nullptr) tap->on_report(r);
    // Same thread: the receive TSC goes to the gateway as an argument.
    if (!muted) gateway->on_report(r, first_answer.take(r));
  }
  void on_market_data(const engine::MdEvent& m) noexcept {
    trades += m.type == engine::MdType::kTrade ? 1 : 0;
    if (!muted) publisher->on_md(m);
  }
  // Compact mode publishes inside the engine step (each event encoded, full
  // packets sent as they fill); the batch's last partial packet goes out here
  // and is what fn_md_publish times in this layout. The batch's answers are
  // written first: an acknowledgement does not wait for the market data
  // sendto() (one loopback multicast send per receiver, microseconds).
  void end_of_batch() noexcept {
    if (muted) return;
    gateway->flush_answers();
    if constexpr (requires(const Publisher& p) { p.pending(); }) {
      if (!publisher->pending()) return;  // nothing left to send: no publishing step to time
    }
    NT_TIMED(fn_md_publish);
    publisher->flush();
  }
};

// Dedicated mode: outputs cross to the gateway's and publisher's threads,
// published once per batch of requests (core::SpscRing try_write_slot +
// publish: the consumers do not pull the line being written from under the
// engine before every output; a batch is at most EngineAgent::kBatch
// requests). The engine builds each output in its ring slot (an
// engine::InPlaceSink: no copy). A full ring publishes what it holds and is
// waited out (its consumer runs on another thread); the waits are counted.
class RingSink {
 public:
  RingSink(ReportRing& reports, MdRing& market_data, bool start_muted) noexcept
      : muted(start_muted), reports_(&reports), market_data_(&market_data) {}

  bool muted;
  TradeTap* tap = nullptr;  // as DirectSink::tap
  FirstAnswerTsc first_answer{};  // as DirectSink::first_answer
  core::Counter full_waits;
  std::uint64_t trades = 0;  // trade events passed on (EngineAgent tells a match from an add by it)

  engine::ExecReport& claim_report() noexcept {
    claimed_report_ = &scratch_report_;
    if (!muted) {
      while ((claimed_report_ = reports_->try_write_slot()) == nullptr) wait();
    }
    return *claimed_report_;
  }
  void commit_report() noexcept {
    if (tap != nullptr) tap->on_report(*claimed_report_);  // muted ones too: see DirectSink::tap
    if (muted) return;
    // In the slot the engine has just written (pipeline.hpp): no second ring, no bigger slot.
    carry_received_tsc(*claimed_report_, first_answer.take(*claimed_report_));
    reports_->end_write();
  }
  engine::MdEvent& claim_market_data() noexcept {
    claimed_md_ = &scratch_md_;
    if (!muted) {
      while ((claimed_md_ = market_data_->try_write_slot()) == nullptr) wait();
    }
    return *claimed_md_;
  }
  void commit_market_data() noexcept {
    trades += claimed_md_->type == engine::MdType::kTrade ? 1 : 0;
    if (!muted) market_data_->end_write();
  }
  void on_report(const engine::ExecReport& r) noexcept {
    claim_report() = r;
    commit_report();
  }
  void on_market_data(const engine::MdEvent& m) noexcept {
    claim_market_data() = m;
    commit_market_data();
  }
  void end_of_batch() noexcept {
    reports_->publish();
    market_data_->publish();
  }

 private:
  void wait() noexcept {
    full_waits.add();
    _mm_pause();
  }
  ReportRing* reports_;
  MdRing* market_data_;
  engine::MdEvent* claimed_md_ = nullptr;
  engine::ExecReport* claimed_report_ = nullptr;
  // Where a muted sink lets the engine build what it drops.
  engine::ExecReport scratch_report_{};
  engine::MdEvent scratch_md_{};
};

template <typename Sink>
class EngineAgent {
 public:
  static constexpr std::size_t kBatch = 64;

  EngineAgent(const engine::EngineConfig& config, const controls::ControlsConfig& controls, RequestRing& in, Sink& sink)
      : in_(in), sink_(sink), engine_(config, controls, sink) {}

  std::string_view role_name() const noexcept { return "engine"; }

  int do_work() noexcept {
    // Compiled out with the switch off: no null-recorder path for the compiler to warn about.
    if constexpr (NANOTICK_TELEMETRY != 0) {
      if (telemetry::Recorder* const recorder = NT_RECORDER(); recorder != nullptr) [[unlikely]]
        return process_batch<true>(recorder);
    }
    return process_batch<false>(nullptr);
  }

  // The engine with the venue's controls around it (docs/CONTROLS.md):
  // process() there; queries on its engine().
  controls::ControlledEngine<Sink>& engine() noexcept { return engine_; }
  const controls::ControlledEngine<Sink>& engine() const noexcept { return engine_; }

 private:
  // kRecord: telemetry records on this thread (`recorder` is then not null).
  template <bool kRecord>
  int process_batch(telemetry::Recorder* recorder) noexcept {
    if constexpr (kRecord) {
      if (sink_.tap != nullptr) sink_.tap->time_into(&stages_, &recorder->clock());
    }
    std::size_t n = 0;
    for (; n < kBatch; ++n) {
      const InboundRequest* rq = in_.front();
      if (rq == nullptr) break;
      sink_.first_answer.begin_request(rq->received_tsc);
      if constexpr (kRecord) process_recorded(*recorder, rq->request);
      else engine_.process(rq->request);
      in_.pop();
    }
    if constexpr (kRecord) {
      if (sink_.tap != nullptr) sink_.tap->time_into(nullptr, nullptr);
    }
    if (n != 0) sink_.end_of_batch();
    return static_cast<int>(n);
  }

  // One request with its hops and its timers (see the header comment).
  void process_recorded(telemetry::Recorder& recorder, const engine::Request& rq) noexcept {
    const std::uint64_t key = telemetry_order_key(rq.event_id);
    const std::uint64_t trades_before = sink_.trades;
    const std::uint64_t start = recorder.now();
    (void)recorder.record_at(start, telemetry::Point::ex_engine_in, key, 0, 0);
    engine_.process_staged(rq, recorder.clock(), stages_);
    const std::uint64_t end = recorder.now();
    telemetry::Point timer = telemetry::Point::fn_engine_process;
    switch (rq.type) {
      case engine::RequestType::kNew:
        timer = sink_.trades != trades_before ? telemetry::Point::fn_book_match : telemetry::Point::fn_book_add;
        break;
      case engine::RequestType::kCancel: timer = telemetry::Point::fn_book_cancel; break;
      default: break;
    }
    (void)recorder.record_at(start, timer, key, 0, telemetry::saturate_ticks(start, end));
    record_stages(recorder, rq, start, key);
    (void)recorder.record_at(end, telemetry::Point::ex_engine_out, key, 0, 0);
  }

  // The step's stages (controls/stage_ticks.hpp), stamped at its start: the
  // pre-trade checks of new orders and modifies, matching and settlement of
  // every request, the ledger of one that traded (with a ledger on).
  void record_stages(telemetry::Recorder& recorder, const engine::Request& rq, std::uint64_t start,
                     std::uint64_t key) noexcept {
    const auto ticks = [](std::uint64_t t) { return telemetry::saturate_ticks(0, t); };
    if (rq.type == engine::RequestType::kNew || rq.type == engine::RequestType::kModify)
      (void)recorder.record_at(start, telemetry::Point::fn_pre_trade, key, 0, ticks(stages_.pre_trade));
    (void)recorder.record_at(start, telemetry::Point::fn_matching, key, 0, ticks(stages_.matching));
    (void)recorder.record_at(start, telemetry::Point::fn_settlement, key, 0, ticks(stages_.settlement));
    if (stages_.ledger != 0)
      (void)recorder.record_at(start, telemetry::Point::fn_ledger, key, 0, ticks(stages_.ledger));
  }

  RequestRing& in_;
  Sink& sink_;
  controls::ControlledEngine<Sink> engine_;
  controls::StageTicks stages_;  // the recorded request's, filled by process_staged and the ledger's tap
};

// Dedicated mode: drains the engine's reports into the gateway on its thread.
template <typename Gateway>
class ReportDrainer {
 public:
  ReportDrainer(ReportRing& ring, Gateway& gateway) noexcept : ring_(ring), gateway_(gateway) {}
  std::string_view role_name() const noexcept { return "reports"; }
  int do_work() noexcept {
    return static_cast<int>(
        ring_.drain([this](const engine::ExecReport& r) { gateway_.on_report(r, carried_received_tsc(r)); }, 256));
  }

 private:
  ReportRing& ring_;
  Gateway& gateway_;
};

// Dedicated mode: writes the answers the report drainer just handed to the
// gateway, in the same pass, instead of after the gateway's next
// epoll_wait. (Compact mode writes them in DirectSink::end_of_batch.)
template <typename Gateway>
class AnswerFlusher {
 public:
  explicit AnswerFlusher(Gateway& gateway) noexcept : gateway_(gateway) {}
  std::string_view role_name() const noexcept { return "answers"; }
  int do_work() noexcept { return gateway_.flush_answers(); }

 private:
  Gateway& gateway_;
};

// Dedicated mode: drains market data events into the publisher on its thread.
template <typename Publisher>
class MdDrainer {
 public:
  MdDrainer(MdRing& ring, Publisher& publisher) noexcept : ring_(ring), publisher_(publisher) {}
  std::string_view role_name() const noexcept { return "md-publisher"; }
  // fn_md_publish (telemetry) times one drained batch: its events encoded,
  // the packets that filled sent, and the last partial one flushed.
  int do_work() noexcept {
    if (ring_.empty()) return publisher_.do_work();
    std::size_t n = 0;
    {
      NT_TIMED(fn_md_publish);
      n = ring_.drain([this](const engine::MdEvent& m) { publisher_.on_md(m); }, 256);
      if (n != 0) publisher_.flush();
    }
    return static_cast<int>(n) + publisher_.do_work();
  }

 private:
  MdRing& ring_;
  Publisher& publisher_;
};

}  // namespace nanotick::exchange
