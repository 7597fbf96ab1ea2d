// The matching engine as an agent (docs/EXCHANGE.md "Pipeline"): pops
// sequenced requests and processes them; outputs go to the Sink, which in
// compact mode hands them straight to the gateway and the market data
// publisher on this same thread (DirectSink) and in dedicated mode pushes them
// into rings for their threads (RingSink). Not thread-safe: one thread.
#pragma once

#include <immintrin.h>

#include <string_view>

#include "core/counter.hpp"
#include "engine/matching_engine.hpp"
#include "exchange/pipeline.hpp"

namespace nanotick::exchange {

// Compact mode: the gateway and the publisher run on the engine's thread.
// `muted` drops everything (journal replay at start-up: those outputs were
// sent before the restart, or never acknowledged).
template <typename Gateway, typename Publisher>
struct DirectSink {
  Gateway* gateway;
  Publisher* publisher;
  bool muted = false;

  void on_report(const engine::ExecReport& r) noexcept {
    if (!muted) gateway->on_report(r);
  }
  void on_market_data(const engine::MdEvent& m) noexcept {
    if (!muted) publisher->on_md(m);
  }
  void end_of_batch() noexcept {
    if (!muted) publisher->flush();
  }
};

// Dedicated mode: outputs cross to the gateway's and publisher's threads. A
// full ring is waited out (its consumer runs on another thread); the waits
// are counted.
struct RingSink {
  ReportRing* reports;
  MdRing* market_data;
  bool muted = false;
  core::Counter full_waits;

  void on_report(const engine::ExecReport& r) noexcept {
    if (muted) return;
    while (!reports->try_push(r)) wait();
  }
  void on_market_data(const engine::MdEvent& m) noexcept {
    if (muted) return;
    while (!market_data->try_push(m)) wait();
  }
  void end_of_batch() noexcept {}

 private:
  void wait() noexcept {
    full_waits.add();
    _mm_pause();
  }
};

template <typename Sink>
class EngineAgent {
 public:
  static constexpr std::size_t kBatch = 64;

  EngineAgent(const engine::EngineConfig& config, RequestRing& in, Sink& sink) : in_(in), sink_(sink), engine_(config, sink) {}

  std::string_view role_name() const noexcept { return "engine"; }

  int do_work() noexcept {
    std::size_t n = 0;
    for (; n < kBatch; ++n) {
      const InboundRequest* rq = in_.front();
      if (rq == nullptr) break;
      engine_.process(rq->request);
      in_.pop();
    }
    if (n != 0) sink_.end_of_batch();
    return static_cast<int>(n);
  }

  engine::MatchingEngine<Sink>& engine() noexcept { return engine_; }
  const engine::MatchingEngine<Sink>& engine() const noexcept { return engine_; }

 private:
  RequestRing& in_;
  Sink& sink_;
  engine::MatchingEngine<Sink> engine_;
};

// Dedicated mode: drains the engine's reports into the gateway on its thread.
template <typename Gateway>
class ReportDrainer {
 public:
  ReportDrainer(ReportRing& ring, Gateway& gateway) noexcept : ring_(ring), gateway_(gateway) {}
  std::string_view role_name() const noexcept { return "reports"; }
  int do_work() noexcept {
    return static_cast<int>(ring_.drain([this](const engine::ExecReport& r) { gateway_.on_report(r); }, 256));
  }

 private:
  ReportRing& ring_;
  Gateway& gateway_;
};

// Dedicated mode: drains market data events into the publisher on its thread.
template <typename Publisher>
class MdDrainer {
 public:
  MdDrainer(MdRing& ring, Publisher& publisher) noexcept : ring_(ring), publisher_(publisher) {}
  std::string_view role_name() const noexcept { return "md-publisher"; }
  int do_work() noexcept {
    const auto n = ring_.drain([this](const engine::MdEvent& m) { publisher_.on_md(m); }, 256);
    if (n != 0) publisher_.flush();
    return static_cast<int>(n) + publisher_.do_work();
  }

 private:
  MdRing& ring_;
  Publisher& publisher_;
};

}  // namespace nanotick::exchange
