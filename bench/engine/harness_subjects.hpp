// The books regime_bench compares, each emitting harness_report.hpp's report
// set into its own ReportQueue: nanotick's engine (its ExecReports translated
// by a sink that takes no market data, so the engine builds none), Liquibook and the two standard-library
// books (their fills and acks through PeerAckSink hooks, their cancels and
// rejects from what process() returned). One subject is one fresh book and one
// fresh queue; the driving thread calls process() per request, end_of_batch()
// per batch and finish() once. Not thread-safe beyond that.
#pragma once

#include <cstdint>
#include <memory>

#include "controls/controlled_engine.hpp"
#include "engine/harness_report.hpp"
#include "engine/liquibook_adapter.hpp"
#include "engine/matching_engine.hpp"
#include "engine/peer_books.hpp"

namespace nanotick::bench {

namespace ne = nanotick::engine;

// nanotick's ExecReports -> HarnessReports. The engine reports a trade as the
// taker's fill followed by the maker's: the taker's key is kept from the first
// and the trade pushed at the second. Takes no market data (no on_market_data:
// engine::TakesMarketData is false), so the engine builds none.
class HarnessEngineSink {
 public:
  explicit HarnessEngineSink(ReportQueue& queue) noexcept : queue_(queue) {}

  NT_ALWAYS_INLINE void on_report(const ne::ExecReport& r) noexcept {
    const std::uint64_t key = ne::order_key(r.client, r.client_order_id);
    switch (r.type) {
      case ne::ReportType::kAccepted: queue_.push(HarnessType::kAck, key, 0, r.price, r.order_qty); break;
      case ne::ReportType::kFill:
        if (!r.is_maker) {
          taker_key_ = key;
        } else {
          queue_.push(HarnessType::kTrade, taker_key_, key, r.last_price, r.last_qty);
        }
        break;
      case ne::ReportType::kCancelled: queue_.push(HarnessType::kCancelled, key, 0, 0, 0); break;
      case ne::ReportType::kModified: queue_.push(HarnessType::kModified, key, 0, r.price, r.order_qty); break;
      case ne::ReportType::kRejected:
      case ne::ReportType::kCancelRejected:
      case ne::ReportType::kModifyRejected: queue_.push(HarnessType::kRejected, key, 0, 0, 0); break;
      case ne::ReportType::kAdminDone: break;  // an admin's answer: no workload here sends admin requests
    }
  }

 private:
  ReportQueue& queue_;
  std::uint64_t taker_key_ = 0;
};

// Ablation: the same reports, and market data built as for a feed (each event
// written out in full, then dropped: not queued, not part of the score). The
// difference to HarnessEngineSink is what a feed costs the engine before any
// publishing.
class HarnessEngineSinkWithMarketData : public HarnessEngineSink {
 public:
  using HarnessEngineSink::HarnessEngineSink;
  NT_ALWAYS_INLINE void on_market_data(const ne::MdEvent& m) noexcept {
    asm volatile("" : : "r"(&m) : "memory");  // the event escapes: every field is stored
  }
};

// Ablation: the same harness reports, and every ExecReport written out in
// full, as the exchange's sinks do (RingSink builds each one in its ring
// slot, DirectSink's gateway encodes it): the compiler may not drop the
// fields HarnessEngineSink never reads. The fair baseline for the venue
// controls, whose settlement reads fields the harness does not.
class HarnessEngineSinkReportsOut : public HarnessEngineSink {
 public:
  using HarnessEngineSink::HarnessEngineSink;
  NT_ALWAYS_INLINE void on_report(const ne::ExecReport& r) noexcept {
    asm volatile("" : : "r"(&r) : "memory");  // the report escapes: every field is stored
    HarnessEngineSink::on_report(r);
  }
};

// What every subject has: the report queue it feeds (built first, so the
// subject's sink can point into it), and the queue's end of batch, finish
// and figures.
class HarnessQueueOwner {
 public:
  explicit HarnessQueueOwner(int consumer_cpu) : queue_(consumer_cpu) {}
  NT_ALWAYS_INLINE void end_of_batch() noexcept { queue_.end_of_batch(); }
  std::uint64_t finish() { return queue_.finish(); }
  const ReportQueue& queue() const noexcept { return queue_; }

 protected:
  ReportQueue queue_;
};

template <typename Sink>
class BasicEngineHarnessSubject : public HarnessQueueOwner {
 public:
  BasicEngineHarnessSubject(const ne::EngineConfig& config, int consumer_cpu)
      : HarnessQueueOwner(consumer_cpu), sink_(queue_), engine_(config, sink_) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) noexcept { engine_.process(r); }
  NT_ALWAYS_INLINE void prefetch(const ne::Request& next) const noexcept { engine_.prefetch(next); }

 private:
  Sink sink_;
  ne::MatchingEngine<Sink> engine_;
};
using EngineHarnessSubject = BasicEngineHarnessSubject<HarnessEngineSink>;

// The clients of the workload being measured, each given an account by
// ControlledEngineHarnessSubject (set by the bench before it builds one).
inline std::vector<ne::ClientId> g_workload_clients;

// The same engine with the venue's controls around it (docs/CONTROLS.md):
// every client of the workload has an account too large to ever bind (cash
// 2^62, positions and short limits 2^60), so the reports are the bare
// engine's and the digests must agree; what differs is the work: the
// pre-trade checks, the settlement of every report, the holds.
inline nanotick::controls::ControlsConfig never_binding_accounts(const ne::EngineConfig& config) {
  nanotick::controls::ControlsConfig c;
  for (const ne::ClientId id : g_workload_clients) {
    nanotick::controls::ClientLimits l;
    l.client = id;
    l.cash = std::int64_t{1} << 62;
    l.short_limit = std::int64_t{1} << 60;
    for (ne::InstrumentId i = 0; i < config.instruments.size(); ++i) l.positions.push_back({i, std::int64_t{1} << 60});
    c.clients.push_back(std::move(l));
  }
  return c;
}

template <typename Sink>
class BasicControlledEngineHarnessSubject : public HarnessQueueOwner {
 public:
  BasicControlledEngineHarnessSubject(const ne::EngineConfig& config, int consumer_cpu)
      : HarnessQueueOwner(consumer_cpu), sink_(queue_), engine_(config, never_binding_accounts(config), sink_) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) noexcept { engine_.process(r); }
  NT_ALWAYS_INLINE void prefetch(const ne::Request& next) const noexcept { engine_.engine().prefetch(next); }

 private:
  Sink sink_;
  nanotick::controls::ControlledEngine<Sink> engine_;
};
using ControlledEngineHarnessSubject = BasicControlledEngineHarnessSubject<HarnessEngineSink>;
// Both with every report written out in full (HarnessEngineSinkReportsOut).
using EngineReportsOutSubject = BasicEngineHarnessSubject<HarnessEngineSinkReportsOut>;
using ControlledEngineReportsOutSubject = BasicControlledEngineHarnessSubject<HarnessEngineSinkReportsOut>;

// The controls' cost split into its stages (docs/CONTROLS.md "Where the
// time goes"): each row runs one stage of ControlledEngine alone around the
// bare engine, with the same never-binding accounts, so its reports are the
// engine's and its cost over the "nanotick" row is that stage's.
// Pre-trade alone: every new order and modify checked, nothing settled (the
// holds stay 0: the checks do the same arithmetic on other values).
class PreTradeOnlyHarnessSubject : public HarnessQueueOwner {
 public:
  PreTradeOnlyHarnessSubject(const ne::EngineConfig& config, int consumer_cpu)
      : HarnessQueueOwner(consumer_cpu),
        sink_(queue_),
        accounts_(config, never_binding_accounts(config)),
        engine_(config, sink_) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) noexcept {
    const ne::RejectReason why = nanotick::controls::pre_trade_check(accounts_, engine_, r);
    if (why != ne::RejectReason::kNone) [[unlikely]]
      return engine_.refuse(r, why);
    engine_.process(r);
  }
  NT_ALWAYS_INLINE void prefetch(const ne::Request& next) const noexcept { engine_.prefetch(next); }

 private:
  HarnessEngineSink sink_;
  nanotick::controls::Accounts accounts_;
  ne::MatchingEngine<HarnessEngineSink> engine_;
};

// Settlement alone: every report settles into the accounts, nothing checked.
class SettlementOnlyHarnessSubject : public HarnessQueueOwner {
 public:
  SettlementOnlyHarnessSubject(const ne::EngineConfig& config, int consumer_cpu)
      : HarnessQueueOwner(consumer_cpu),
        sink_(queue_),
        accounts_(config, never_binding_accounts(config)),
        settling_(sink_, accounts_),
        engine_(config, settling_) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) noexcept { engine_.process(r); }
  NT_ALWAYS_INLINE void prefetch(const ne::Request& next) const noexcept { engine_.prefetch(next); }

 private:
  HarnessEngineSink sink_;
  nanotick::controls::Accounts accounts_;
  nanotick::controls::SettlingSink<HarnessEngineSink> settling_;
  ne::MatchingEngine<nanotick::controls::SettlingSink<HarnessEngineSink>> engine_;
};
using EngineWithMarketDataSubject = BasicEngineHarnessSubject<HarnessEngineSinkWithMarketData>;

// A peer's fills and acks -> HarnessReports; counts the taker's filled
// quantity so the subject can tell a filled order from one with a residual.
class HarnessPeerSink {
 public:
  explicit HarnessPeerSink(ReportQueue& queue) noexcept : queue_(queue) {}
  NT_ALWAYS_INLINE void on_fill(const PeerFill& f) noexcept {
    taker_filled_ += f.qty;
    queue_.push(HarnessType::kTrade, f.taker_key, f.maker_key, f.price, f.qty);
  }
  NT_ALWAYS_INLINE void on_accepted(std::uint64_t key, ne::Price price, ne::Qty qty) noexcept {
    queue_.push(HarnessType::kAck, key, 0, price, qty);
  }
  NT_ALWAYS_INLINE void on_modified(std::uint64_t key, ne::Price price, ne::Qty qty) noexcept {
    queue_.push(HarnessType::kModified, key, 0, price, qty);
  }
  void begin_request() noexcept { taker_filled_ = 0; }
  ne::Qty taker_filled() const noexcept { return taker_filled_; }

 private:
  ReportQueue& queue_;
  ne::Qty taker_filled_ = 0;
};

// What the engine reports after a peer's process() returned: a cancel for a
// new order that ended with a residual (IOC, market, an unfillable FOK) and for
// a cancel or a modify below the filled quantity; a reject otherwise refused.
NT_ALWAYS_INLINE void push_peer_outcome(ReportQueue& queue, const HarnessPeerSink& sink, const ne::Request& r,
                                        PeerResult result) noexcept {
  const std::uint64_t key = order_key(r.client, r.client_order_id);
  switch (result) {
    case PeerResult::kDone:
      if (r.type == ne::RequestType::kNew && sink.taker_filled() < r.qty)
        queue.push(HarnessType::kCancelled, key, 0, 0, 0);
      break;
    case PeerResult::kRested: break;
    case PeerResult::kCancelled: queue.push(HarnessType::kCancelled, key, 0, 0, 0); break;
    case PeerResult::kRejected:
    case PeerResult::kUnknownOrder: queue.push(HarnessType::kRejected, key, 0, 0, 0); break;
  }
}

template <template <typename> class Book>
class PeerHarnessSubject : public HarnessQueueOwner {
 public:
  PeerHarnessSubject(const ne::EngineConfig& config, int consumer_cpu)
      : HarnessQueueOwner(consumer_cpu), sink_(queue_), book_(config, sink_) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) {
    sink_.begin_request();
    push_peer_outcome(queue_, sink_, r, book_.process(r));
  }
  void prefetch(const ne::Request&) const noexcept {}  // no such hint in these peers

 private:
  HarnessPeerSink sink_;
  Book<HarnessPeerSink> book_;
};

// No book: one ack per message into the same queue. The harness's own
// ceiling -- what a book that did nothing would score.
class QueueOnlySubject : public HarnessQueueOwner {
 public:
  QueueOnlySubject(const ne::EngineConfig&, int consumer_cpu) : HarnessQueueOwner(consumer_cpu) {}
  NT_ALWAYS_INLINE void process(const ne::Request& r) noexcept {
    queue_.push(HarnessType::kAck, order_key(r.client, r.client_order_id), 0, r.price, r.qty);
  }
  void prefetch(const ne::Request&) const noexcept {}
};

using LiquibookHarnessSubject = PeerHarnessSubject<LiquibookAdapter>;
using MapHarnessSubject = PeerHarnessSubject<MapPeerBook>;
using UnorderedHarnessSubject = PeerHarnessSubject<UnorderedPeerBook>;

}  // namespace nanotick::bench
