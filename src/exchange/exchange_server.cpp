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

// A runner for `agent` as the [threads] table configures `role`, on a thread named "nt-<role>".
template <typename A>
core::ConfiguredAgentRunner<A> make_runner(A& agent, const ExchangeConfig& c, const char* role) {
  const core::RunnerConfig& r = c.threads.runner(role);
  core::IdleConfig idle;
  idle.kind = r.idle;
  return core::make_agent_runner(agent, core::RunnerOptions{.thread_name = std::string("nt-") + role, .cpu = r.cpu},
                                 idle);
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
    critical_runner_.emplace(make_runner(*bound_, s_.config, "critical"));
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
    gateway_runner_.emplace(make_runner(*bound_gateway_, s_.config, "gateway"));
    sequencer_runner_.emplace(make_runner(*bound_sequencer_, s_.config, "sequencer"));
    engine_runner_.emplace(make_runner(*bound_engine_, s_.config, "engine"));
    md_runner_.emplace(make_runner(*bound_md_, s_.config, "md"));
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

ExchangeServer::ExchangeServer(const ExchangeConfig& config, Log log, telemetry::Writer* telemetry,
                               const std::string& counters_path)
    : impl_(std::make_unique<Impl>(config, std::move(log), telemetry, counters_path)) {
  Impl& s = *impl_;
  if (config.threads.mode == ThreadMode::kDedicated) {
    s.dedicated = std::make_unique<DedicatedPipeline>(s);
  } else {
    s.compact = std::make_unique<CompactPipeline>(s);
  }
  const auto with_engine = [&s](auto&& fn) -> decltype(auto) {
    return on_pipeline(s, [&](auto& p) -> decltype(auto) { return fn(p.engine()); });
  };
  // The journal directory is this process's alone before anything in it is
  // read: a second exchange on it would reuse our sequence numbers.
  char host[256] = "?";
  (void)::gethostname(host, sizeof host - 1);
  s.journal_lock = std::make_unique<JournalDirLock>(
      config.journal.dir, "nanotick-exchange pid " + std::to_string(::getpid()) + " on " + host + ", order entry " +
                              config.server.order_entry);
  // Recovery (recovery_plan.hpp): the trade ledger judged, the newest good
  // engine snapshot loaded, the journal after it replayed with the outputs
  // muted -- all read-only, so that a refusal (thrown from plan_recovery)
  // leaves the directory as it was. The ledger's tap takes the trades the
  // replay re-makes that the file lacks (a crash between the match and the
  // write), into a vector written once the start is decided.
  const std::uint64_t fingerprint = config.engine_fingerprint();
  const auto t0 = Clock::now();
  std::vector<TradeRecord> replayed_trades;
  RecoveryHooks hooks;
  hooks.on_ledger = [&](const LedgerPlan& ledger) {
    s.trade_tap = std::make_unique<TradeTap>(s.ledger_ring, ledger.next_trade_seq, ledger.last_exec_seq);
    s.trade_tap->collect_replay_into(&replayed_trades);
    on_pipeline(s, [&s](auto& p) { p.set_trade_tap(s.trade_tap.get()); });
  };
  hooks.on_snapshot = [&](const LoadedSnapshot& snap) {
    with_engine([&](auto& e) { e.import_state(snap.state, snap.controls); });
  };
  hooks.on_record = [&](const JournalRecord& r) { with_engine([&](auto& e) { e.process(r.request); }); };
  RecoveryPlan plan = plan_recovery(config.journal.dir, fingerprint, hooks);
  JournalRecovery& rec = plan.journal;

  // Decided: carry the plan out.
  apply_journal_recovery(rec);
  s.ledger = std::make_unique<TradeLedger>(plan.ledger, fingerprint, s.ledger_ring);
  s.ledger->write_recovered(replayed_trades);
  s.trade_tap->end_replay();
  for (const auto& p : plan.snapshot_problems) s.log("engine snapshot skipped: " + p);
  if (plan.snapshot_seq != 0)
    s.log("engine snapshot " + plan.snapshot_path + " loaded (journal seq " + std::to_string(plan.snapshot_seq) + ")");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(with_engine([](auto& e) { return engine::state_hash(e.engine()); })));
  s.log("journal " + config.journal.dir + ": " + std::to_string(rec.segments) + " segment(s), replayed " +
        std::to_string(rec.records_replayed) + " request(s) in " + std::to_string(ms) + " ms; next seq " +
        std::to_string(rec.next_seq) + ", market data seq " +
        std::to_string(with_engine([](auto& e) { return e.engine().last_md_seq(); })) + ", state hash " + hash);
  if (!rec.truncation.empty())
    s.log("journal: cut a torn tail: " + rec.truncation + " (" + std::to_string(rec.truncated_bytes) +
          " bytes zeroed)");
  for (const auto& q : rec.quarantined) s.log("journal: later segment kept aside, not replayed: " + q);
  if (rec.records_staged != 0)
    s.log("journal: " + std::to_string(rec.records_staged) + " request(s) a killed run left in the staging ring " +
          rec.staging_path + " replayed; written to the journal files now");
  if (!rec.staging_ignored.empty()) s.log("journal: staging ring ignored: " + rec.staging_ignored);
  for (const std::string& line : describe_ledger_recovery(plan, replayed_trades)) s.log(line);

  s.journal = std::make_unique<JournalWriter>(config.journal.dir, config.journal.segment_bytes,
                                              config.engine_fingerprint(), rec.tail);
  s.sequencer =
      std::make_unique<Sequencer>(s.gateway_to_sequencer, s.sequencer_to_engine, *s.journal, config.journal.fsync);
  s.syncer = std::make_unique<JournalSyncer>(*s.journal, config.journal.fsync, config.journal.batch_window_us);
  s.snapshotter =
      std::make_unique<Snapshotter>(config, *s.journal, with_engine([](auto& e) { return e.export_state(); }),
                                    with_engine([](auto& e) { return e.export_controls(); }), s.journal->last_seq());
  s.snapshotter->hold_for_ledger(s.ledger.get());
  s.publisher = std::make_unique<MdPublisher>(config.market_data, s.md_to_snapshots,
                                              with_engine([](auto& e) { return e.engine().last_md_seq(); }) + 1);
  if (!config.market_data.shm_path.empty()) {
    // The incremental packets in shared memory too, for readers on this host;
    // its readers are let in by the publisher's thread.
    s.md_ring = std::make_unique<ipc::MdRingServer>(config.market_data.shm_path, config.market_data.shm_ring_packets);
    s.publisher->share_in(*s.md_ring, config.market_data.udp_from_ring);
    s.log("market data ring at " + s.md_ring->path() + ": " + std::to_string(s.md_ring->slots()) + " packets" +
          (config.market_data.udp_from_ring ? "; the incremental datagrams are sent from it by the aux thread" : ""));
  }
  s.forwarder = std::make_unique<MdUdpForwarder>(config.market_data,
                                                 config.market_data.udp_from_ring ? s.md_ring.get() : nullptr);
  const auto caps = s.capacities();
  s.snapshots = std::make_unique<SnapshotPublisher>(config.market_data, caps, s.md_to_snapshots);
  with_engine([&s](auto& e) {
    s.snapshots->seed_from(e.engine());
    s.snapshots->seed_halted(e.export_controls().halted);
  });
  s.gateway = std::make_unique<OrderGateway>(
      config, s.gateway_to_sequencer,
      static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count())
          << 20,
      telemetry != nullptr ? kAnswerStampSlots : 0);
  s.replayer = std::make_unique<ReportReplayer>(s.ledger->path(), s.ledger.get(), s.replay_requests, s.replay_answers);
  s.gateway->enable_report_replay(s.replay_requests, s.replay_answers);
  // Recovered resting orders of cancel-on-disconnect clients have no session
  // any more: a mass cancel per such client goes first (sequenced and
  // journaled, executed by the engine like any request).
  std::size_t orphaned = 0;
  for (const engine::ClientId client : with_engine([](auto& e) { return clients_with_orders(e.engine()); })) {
    const ClientConfig* c = config.find_client(client);
    if (c == nullptr || !c->cancel_on_disconnect) continue;
    s.gateway->queue_mass_cancel(client);
    ++orphaned;
  }
  if (orphaned != 0)
    s.log("cancel on disconnect: a mass cancel for each of " + std::to_string(orphaned) +
          " client(s) whose recovered resting orders have no session");
  const std::uint64_t recovered_reports = with_engine([](auto& e) { return e.engine().last_report_seq(); });
  if (s.ledger->last_exec_seq() > recovered_reports)
    s.log("trade ledger: it holds trades up to execution report seq " + std::to_string(s.ledger->last_exec_seq()) +
          " but the recovered engine ends at report " + std::to_string(recovered_reports) +
          ": the journal lost requests the ledger had trades of (its unsynced tail, or a repair); new trades are "
          "recorded from here on, after those");
  on_pipeline(s, [](auto& p) { p.unmute(); });
  place_counters();
}

// Every owner's counters into the counters file, each owner's on cache lines
// of its own, under the names counters_report() has always printed.
void ExchangeServer::place_counters() {
  Impl& s = *impl_;
  core::CountersFile& f = s.counters;
  s.gateway->place_counters(f);
  s.sequencer->place_counters(f);
  s.journal->place_counters(f);
  on_pipeline(s, [&f](auto& p) { p.place_counters(f); });
  s.publisher->place_counters(f);
  if (s.forwarder->on()) s.forwarder->place_counters(f);
  s.snapshots->place_counters(f);
  s.snapshotter->place_counters(f);
  s.ledger->place_counters(f);
  s.replayer->place_counters(f);
  f.begin_group();
  f.place(s.trade_tap->ring_full_waits_counter(), "ledger.ring_full_waits");
  f.begin_group();
  f.place(s.depths.gateway_to_sequencer, "queue.gateway_to_sequencer", core::CounterKind::kGauge);
  f.place(s.depths.sequencer_to_engine, "queue.sequencer_to_engine", core::CounterKind::kGauge);
  if (s.config.threads.mode == ThreadMode::kDedicated) {
    f.place(s.depths.reports, "queue.engine_to_gateway", core::CounterKind::kGauge);
    f.place(s.depths.md_to_publisher, "queue.engine_to_publisher", core::CounterKind::kGauge);
  }
  f.place(s.depths.md_to_snapshots, "queue.publisher_to_snapshots", core::CounterKind::kGauge);
}

void ExchangeServer::sample_queue_depths() noexcept {
  Impl& s = *impl_;
  s.depths.gateway_to_sequencer.set(s.gateway_to_sequencer.size());
  s.depths.sequencer_to_engine.set(s.sequencer_to_engine.size());
  s.depths.reports.set(s.reports.size());
  s.depths.md_to_publisher.set(s.md_to_publisher.size());
  s.depths.md_to_snapshots.set(s.md_to_snapshots.size());
}

ExchangeServer::~ExchangeServer() { shutdown(); }

void ExchangeServer::start() {
  Impl& s = *impl_;
  s.started = true;  // first: whatever starts below is stopped by shutdown(), even if a later start throws
  s.aux = std::make_unique<Impl::Aux>(*s.snapshots, *s.syncer, *s.forwarder, *s.ledger, *s.replayer);
  s.aux_runner.emplace(make_runner(*s.aux, s.config, "aux"));
  s.snapshot_runner.emplace(make_runner(*s.snapshotter, s.config, "snapshotter"));
  s.aux_runner->start();
  s.snapshot_runner->start();
  on_pipeline(s, [](auto& p) { p.start(); });
}

std::string ExchangeServer::failure() const {
  const Impl& s = *impl_;
  if (s.sequencer->halted()) {
    const std::string why = s.journal->error().empty() ? s.journal->sync_error() : s.journal->error();
    return "journal: " + why + " (order entry stopped: nothing unjournaled was acknowledged)";
  }
  if (s.syncer->failed()) return "journal: " + (s.journal->failed() ? s.journal->error() : s.journal->sync_error());
  if (s.ledger->failed()) return s.ledger->error() + " (trades are no longer recorded)";
  if (s.aux_runner && s.aux_runner->has_failed()) return "auxiliary thread failed: " + describe(*s.aux_runner);
  // A snapshotter failure is logged (shutdown), not fatal: the journal alone recovers everything.
  return on_pipeline(s, [](auto& p) { return p.failure(); });
}

void ExchangeServer::shutdown() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  if (s.started) {
    s.gateway->request_shutdown();
    if (!wait_for([&] { return s.gateway->open_connections() == 0; }, std::chrono::milliseconds(3000)))
      s.log("shutdown: some sessions did not close within 3 s (they are dropped with the threads)");
    if (!wait_for([&] { return s.pipeline_empty() || s.sequencer->halted(); }, std::chrono::milliseconds(3000)))
      s.log("shutdown: the pipeline did not drain within 3 s");
    on_pipeline(s, [&s](auto& p) { p.stop(s.log); });
    // Last: the snapshot feed's ring may still be drained by the publisher above.
    stop_runner(s.aux_runner, "auxiliary", s.log);
    stop_runner(s.snapshot_runner, "snapshotter", s.log);
    s.gateway->publish_latency_summaries();  // the gateway's thread is done: its histograms are final
  }
  try {
    // Everything in the staging ring into the files (and synced, unless
    // fsync = none); the ring itself is then removed.
    if (s.journal && !s.journal->finish(s.config.journal.fsync != FsyncPolicy::kNone))
      s.log("shutdown: final journal write failed: " +
            (s.journal->failed() ? s.journal->error() : s.journal->sync_error()));
    if (s.snapshotter) {
      s.snapshotter->finish();
      if (const std::string e = s.snapshotter->error(); !e.empty()) s.log(e);
    }
  } catch (const std::exception& e) {
    s.log(std::string("shutdown: ") + e.what());
  }
  sample_queue_depths();
  s.counters.mark_stopped();
}

const net::SocketAddress& ExchangeServer::order_entry_address() const noexcept {
  return impl_->gateway->listen_address();
}

std::string ExchangeServer::counters_report() const { return impl_->counters.text_report(); }

std::string ExchangeServer::balances_report() const {
  Impl& s = *impl_;
  return on_pipeline(s, [&s](auto& p) {
    const controls::Accounts& accounts = p.engine().accounts();
    std::string out;
    for (std::size_t i = 0; i < accounts.size(); ++i) {
      const controls::Accounts::Account& a = accounts.at(i);
      const std::string prefix = "account." + std::to_string(a.limits.client) + ".";
      out += prefix + "opening_cash " + std::to_string(a.limits.cash) + "\n";
      for (const controls::OpeningPosition& o : a.limits.positions)
        out += prefix + "opening_position." + s.config.engine.instruments[o.instrument].symbol + " " +
               std::to_string(o.qty) + "\n";
      out += prefix + "cash " + controls::to_string(a.cash) + "\n";
      out += prefix + "cash_held " + controls::to_string(a.reserved_cash) + "\n";
      out += prefix + "working_orders " + std::to_string(a.working_orders) + "\n";
      for (std::size_t k = 0; k < a.holdings.size(); ++k)
        out += prefix + "position." + s.config.engine.instruments[k].symbol + " " +
               std::to_string(a.holdings[k].position) + "\n";
    }
    return out;
  });
}

std::string ExchangeServer::status_line() const {
  Impl& s = *impl_;
  const auto now = Clock::now();
  const std::uint64_t sequenced = s.sequencer->sequenced();
  const double secs = std::chrono::duration<double>(now - s.last_status_time).count();
  const double rate = secs > 0 ? static_cast<double>(sequenced - s.last_status_sequenced) / secs : 0.0;
  s.last_status_time = now;
  s.last_status_sequenced = sequenced;
  const GatewayCounters& g = s.gateway->counters();
  char buf[256];
  std::snprintf(buf, sizeof buf, "exchange: %.0f req/s, %llu sequenced, %llu sessions, %llu msgs out", rate,
                static_cast<unsigned long long>(sequenced), static_cast<unsigned long long>(g.sessions_live.get()),
                static_cast<unsigned long long>(g.messages_out.get()));
  return buf;
}

}  // namespace nanotick::exchange
