// The exchange server's parts (exchange_server.cpp includes this, nothing
// else does): its state (ExchangeServer::Impl: the rings, the agents, the
// runners), the two thread layouts' pipelines (CompactPipeline,
// DedicatedPipeline) and the helpers that make and stop their runners.
// The constructor (exchange_server.cpp) wires them; start-up recovery is
// sequencing/venue_recovery.hpp.
#pragma once

#include "exchange/exchange_server.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/agent.hpp"
#include "core/agent_runner.hpp"
#include "core/counters_file.hpp"
#include "core/tsc_clock.hpp"
#include "engine/book_state.hpp"
#include "engine/types.hpp"
#include "exchange/engine_agent.hpp"
#include "exchange/ledger/report_replay.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "exchange/marketdata/md_publisher.hpp"
#include "exchange/marketdata/md_udp_forwarder.hpp"
#include "exchange/sequencing/journal_lock.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/sequencing/journal_writer.hpp"
#include "exchange/sequencing/recovery_plan.hpp"
#include "exchange/sequencing/sequencer.hpp"
#include "exchange/sequencing/venue_recovery.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "exchange/snapshots/engine_snapshot.hpp"
#include "exchange/snapshots/snapshot_publisher.hpp"
#include "exchange/snapshots/snapshotter.hpp"
#include "ipc/md_ring_server.hpp"
#include "proto/order_entry.hpp"
#include "telemetry/bound_agent.hpp"
#include "telemetry/writer.hpp"

namespace nanotick::exchange {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until `done()` or `limit` passes; true if done.
template <typename F>
bool wait_for(F&& done, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

template <typename Runner>
std::string describe(Runner& r) {
  try {
    if (const std::exception_ptr e = r.error()) std::rethrow_exception(e);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
  return "no error recorded";
}

// The clients a recovered engine holds resting orders of, ascending.
template <typename Engine>
std::vector<engine::ClientId> clients_with_orders(const Engine& e) {
  std::vector<engine::ClientId> clients;
  for (engine::InstrumentId i = 0; i < e.instrument_count(); ++i)
    for (const engine::Side side : {engine::Side::kBuy, engine::Side::kSell})
      e.for_each_order(i, side, [&](const engine::OrderView& o) { clients.push_back(o.client); });
  std::sort(clients.begin(), clients.end());
  clients.erase(std::unique(clients.begin(), clients.end()), clients.end());
  return clients;
}

// Stops a runner if it was made; a failure it rethrows is logged, not propagated,
// so shutdown always goes on to sync the journal.
template <typename Runner>
void stop_runner(std::optional<Runner>& r, const char* name, const ExchangeServer::Log& log) noexcept {
  if (!r) return;
  try {
    r->stop();
  } catch (const std::exception& e) {
    log(std::string("shutdown: the ") + name + " thread had failed: " + e.what());
  } catch (...) {
    log(std::string("shutdown: the ") + name + " thread had failed");
  }
}

}  // namespace

class CompactPipeline;
class DedicatedPipeline;

// Answers per session that may wait for their write with a telemetry stamp
// pending (past that they are counted as unstamped): 96 KiB per session.
constexpr std::size_t kAnswerStampSlots = 4096;

struct ExchangeServer::Impl {
  Impl(const ExchangeConfig& c, Log l, telemetry::Writer* w, const std::string& counters_path)
      : config(c),
        log(std::move(l)),
        telemetry(w),
        counters(core::CountersFile::Options{.path = counters_path, .process = "exchange"}) {}

  // The recorder named `name` for one critical thread, or nullptr without telemetry.
  telemetry::Recorder* recorder(const char* name) const {
    return telemetry != nullptr ? &telemetry->create_recorder(name) : nullptr;
  }

  const ExchangeConfig& config;
  Log log;
  telemetry::Writer* telemetry;
  // Before every owner of a counter placed in it: destroyed after them all.
  core::CountersFile counters;
  // Ring depths, sampled by the controlling thread (sample_queue_depths()).
  struct QueueDepths {
    core::Counter gateway_to_sequencer, sequencer_to_engine, reports, md_to_publisher, md_to_snapshots;
  } depths;
  RequestRing gateway_to_sequencer;
  RequestRing sequencer_to_engine;
  ReportRing reports;           // dedicated mode: engine -> gateway
  MdRing md_to_publisher;       // dedicated mode: engine -> publisher
  MdRing md_to_snapshots;       // publisher -> snapshot publisher (both modes)
  LedgerRing ledger_ring;       // engine's TradeTap -> the aux thread's TradeLedger
  ReplayRequestRing replay_requests;  // gateway -> the aux thread's ReportReplayer (PROTOCOL.md §1.8)
  ReplayAnswerRing replay_answers;    // ReportReplayer -> gateway
  std::unique_ptr<JournalDirLock> journal_lock;  // first made, last released: the directory is ours throughout
  std::unique_ptr<JournalWriter> journal;
  std::unique_ptr<TradeLedger> ledger;  // <journal dir>/trades.ledger
  std::unique_ptr<TradeTap> trade_tap;  // the engine thread's end of it
  std::unique_ptr<ReportReplayer> replayer;  // ReportsRequests served from it, on its thread
  std::unique_ptr<OrderGateway> gateway;
  std::unique_ptr<Sequencer> sequencer;
  std::unique_ptr<ipc::MdRingServer> md_ring;  // [market_data] shm_path: the incremental feed in shared memory
  std::unique_ptr<MdPublisher> publisher;
  std::unique_ptr<MdUdpForwarder> forwarder;  // market_data.udp_sender = "aux": the datagrams, from md_ring
  std::unique_ptr<SnapshotPublisher> snapshots;
  std::unique_ptr<JournalSyncer> syncer;
  std::unique_ptr<Snapshotter> snapshotter;
  // The layout's own part (its engine's sink type and its critical runners):
  // exactly one of the two (on_pipeline()).
  std::unique_ptr<CompactPipeline> compact;
  std::unique_ptr<DedicatedPipeline> dedicated;
  // Off the critical path, both layouts: snapshot feed + journal syncing on
  // one thread, the snapshotter (milliseconds per snapshot) on another.
  using Aux = core::CompositeAgent<SnapshotPublisher&, JournalSyncer&, MdUdpForwarder&, TradeLedger&, ReportReplayer&>;
  std::unique_ptr<Aux> aux;
  std::optional<core::ConfiguredAgentRunner<Aux>> aux_runner;
  std::optional<core::ConfiguredAgentRunner<Snapshotter>> snapshot_runner;
  bool started = false;
  bool stopped = false;
  // status_line() rate sample (controlling thread only).
  Clock::time_point last_status_time = Clock::now();
  std::uint64_t last_status_sequenced = 0;

  // Nothing in a ring, nothing the gateway still has to push (disconnect
  // cancels) and no sequencer batch between its pop and its push.
  bool pipeline_empty() const {
    return gateway_to_sequencer.empty() && sequencer_to_engine.empty() && reports.empty() && md_to_publisher.empty() &&
           md_to_snapshots.empty() && gateway->pending_cancels() == 0 && !sequencer->busy();
  }
  std::vector<book::InstrumentCapacity> capacities() const {
    std::vector<book::InstrumentCapacity> out;
    for (const auto& in : config.engine.instruments) out.push_back({in.max_orders, in.max_levels});
    return out;
  }
};

// The pipeline, wired here and nowhere else (docs/EXCHANGE.md "Pipeline", "Threads"):
//
//  clients -TCP/shm-> [gateway] -RequestRing-> [sequencer] -RequestRing-> [engine] -reports-> [gateway] -> clients
//                                             | append                   |
//                                             v                          +-md events-> [md publisher]
//                                JournalWriter <- [journal syncer]                        |-UDP-> incremental
//                                             |                                           |-MdRingServer-> shm readers
//                                             +--> [snapshotter]                          +-MdRing-> [snapshot
//                                                  (engine snapshots from the journal)              publisher] -UDP->
//
// Runners ([threads]; config: core::ThreadLayout, roles in exchange_config.hpp):
//   compact    "critical"  gateway + sequencer + engine + md publisher, one thread: the engine
//                          calls the gateway and the publisher directly (DirectSink)
//   dedicated  "gateway"   gateway + report drainer + answer flusher
//              "sequencer", "engine" (its outputs go into ReportRing / MdRing: RingSink),
//              "md"        MdRing drainer + md publisher
//   both       "aux"       snapshot publisher + journal syncer + trade ledger writer + report replayer (+ the
//                          incremental datagrams, sent
//                          from the shm ring, with market_data.udp_sender = "aux");  "snapshotter"
// The engine's type depends on its sink, so each layout is a class of its own
// (CompactPipeline, DedicatedPipeline); what both do with their engine is
// written once, on_pipeline() + engine().

// Compact: the critical agents composed on one runner.
class CompactPipeline {
 public:
  using Sink = DirectSink<OrderGateway, MdPublisher>;
  // The engine's answers are written before its market data goes out
  // (DirectSink::end_of_batch).
  using Critical = core::CompositeAgent<OrderGateway&, Sequencer&, EngineAgent<Sink>&, MdPublisher&>;
  using BoundCritical = telemetry::BoundAgent<Critical&>;

  explicit CompactPipeline(ExchangeServer::Impl& s)
      : s_(s),
        sink_{nullptr, nullptr, true, 0},
        engine_(s.config.engine, s.config.controls(), s.sequencer_to_engine, sink_),
        recorder_(s.recorder("critical")) {}

  controls::ControlledEngine<Sink>& engine() noexcept { return engine_.engine(); }
  void set_trade_tap(TradeTap* tap) noexcept { sink_.tap = tap; }
  void unmute() {
    sink_.gateway = s_.gateway.get();
    sink_.publisher = s_.publisher.get();
    sink_.muted = false;
  }
  void place_counters(core::CountersFile&) {}  // the engine's outputs are direct calls: nothing to wait on

  void start() {
    critical_ = std::make_unique<Critical>(*s_.gateway, *s_.sequencer, engine_, *s_.publisher);
    bound_ = std::make_unique<BoundCritical>(*critical_, recorder_);
    critical_runner_.emplace(core::make_agent_runner(*bound_, s_.config.threads.runner("critical"), "nt-critical"));
    critical_runner_->start();
  }
  void stop(const ExchangeServer::Log& log) { stop_runner(critical_runner_, "critical", log); }
  std::string failure() const {
    if (critical_runner_ && critical_runner_->has_failed())
      return "critical thread failed: " + describe(*critical_runner_);
    return "";
  }

 private:
  ExchangeServer::Impl& s_;
  Sink sink_;
  EngineAgent<Sink> engine_;
  telemetry::Recorder* const recorder_;
  std::unique_ptr<Critical> critical_;
  std::unique_ptr<BoundCritical> bound_;
  std::optional<core::ConfiguredAgentRunner<BoundCritical>> critical_runner_;
};

// Dedicated: one runner per critical agent, rings between them.
class DedicatedPipeline {
 public:
  using Engine = EngineAgent<RingSink>;
  using GatewayThread = core::CompositeAgent<OrderGateway&, ReportDrainer<OrderGateway>, AnswerFlusher<OrderGateway>>;
  using BoundGateway = telemetry::BoundAgent<GatewayThread&>;
  using BoundSequencer = telemetry::BoundAgent<Sequencer&>;
  using BoundEngine = telemetry::BoundAgent<Engine&>;
  using BoundMd = telemetry::BoundAgent<MdDrainer<MdPublisher>&>;

  explicit DedicatedPipeline(ExchangeServer::Impl& s)
      : s_(s),
        sink_{s.reports, s.md_to_publisher, true},
        engine_(s.config.engine, s.config.controls(), s.sequencer_to_engine, sink_),
        gateway_recorder_(s.recorder("gateway")),
        sequencer_recorder_(s.recorder("sequencer")),
        engine_recorder_(s.recorder("engine")),
        md_recorder_(s.recorder("md")) {}

  controls::ControlledEngine<RingSink>& engine() noexcept { return engine_.engine(); }
  void set_trade_tap(TradeTap* tap) noexcept { sink_.tap = tap; }
  void unmute() { sink_.muted = false; }
  void place_counters(core::CountersFile& file) {
    file.begin_group();
    file.place(sink_.full_waits, "engine.output_ring_full_waits");
  }

  void start() {
    gateway_ = std::make_unique<GatewayThread>(*s_.gateway, ReportDrainer<OrderGateway>(s_.reports, *s_.gateway),
                                               AnswerFlusher<OrderGateway>(*s_.gateway));
    md_ = std::make_unique<MdDrainer<MdPublisher>>(s_.md_to_publisher, *s_.publisher);
    bound_gateway_ = std::make_unique<BoundGateway>(*gateway_, gateway_recorder_);
    bound_sequencer_ = std::make_unique<BoundSequencer>(*s_.sequencer, sequencer_recorder_);
    bound_engine_ = std::make_unique<BoundEngine>(engine_, engine_recorder_);
    bound_md_ = std::make_unique<BoundMd>(*md_, md_recorder_);
    gateway_runner_.emplace(
        core::make_agent_runner(*bound_gateway_, s_.config.threads.runner("gateway"), "nt-gateway"));
    sequencer_runner_.emplace(
        core::make_agent_runner(*bound_sequencer_, s_.config.threads.runner("sequencer"), "nt-sequencer"));
    engine_runner_.emplace(core::make_agent_runner(*bound_engine_, s_.config.threads.runner("engine"), "nt-engine"));
    md_runner_.emplace(core::make_agent_runner(*bound_md_, s_.config.threads.runner("md"), "nt-md"));
    gateway_runner_->start();
    sequencer_runner_->start();
    engine_runner_->start();
    md_runner_->start();
  }
  // Upstream first: no new input, then the engine while its consumers still
  // drain the report and market data rings (a full ring would otherwise hold
  // the engine forever), then the consumers.
  void stop(const ExchangeServer::Log& log) {
    stop_runner(sequencer_runner_, "sequencer", log);
    stop_runner(engine_runner_, "engine", log);
    stop_runner(md_runner_, "market data", log);
    stop_runner(gateway_runner_, "gateway", log);
  }
  std::string failure() const {
    if (gateway_runner_ && gateway_runner_->has_failed()) return "gateway thread failed: " + describe(*gateway_runner_);
    if (sequencer_runner_ && sequencer_runner_->has_failed())
      return "sequencer thread failed: " + describe(*sequencer_runner_);
    if (engine_runner_ && engine_runner_->has_failed()) return "engine thread failed: " + describe(*engine_runner_);
    if (md_runner_ && md_runner_->has_failed()) return "market data thread failed: " + describe(*md_runner_);
    return "";
  }

 private:
  ExchangeServer::Impl& s_;
  RingSink sink_;
  Engine engine_;
  telemetry::Recorder* const gateway_recorder_;
  telemetry::Recorder* const sequencer_recorder_;
  telemetry::Recorder* const engine_recorder_;
  telemetry::Recorder* const md_recorder_;
  std::unique_ptr<GatewayThread> gateway_;
  std::unique_ptr<MdDrainer<MdPublisher>> md_;
  std::unique_ptr<BoundGateway> bound_gateway_;
  std::unique_ptr<BoundSequencer> bound_sequencer_;
  std::unique_ptr<BoundEngine> bound_engine_;
  std::unique_ptr<BoundMd> bound_md_;
  std::optional<core::ConfiguredAgentRunner<BoundGateway>> gateway_runner_;
  std::optional<core::ConfiguredAgentRunner<BoundSequencer>> sequencer_runner_;
  std::optional<core::ConfiguredAgentRunner<BoundEngine>> engine_runner_;
  std::optional<core::ConfiguredAgentRunner<BoundMd>> md_runner_;
};

// Calls fn(pipeline) on the layout's pipeline; fn(p.engine()) is where both
// layouts do the same with their engine.
template <typename Impl, typename F>  // Impl: ExchangeServer::Impl, const or not
decltype(auto) on_pipeline(Impl& s, F&& fn) {
  if (s.compact) return fn(*s.compact);
  return fn(*s.dedicated);
}

}  // namespace nanotick::exchange
