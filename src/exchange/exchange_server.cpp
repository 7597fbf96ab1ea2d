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
#include "exchange/engine_snapshot.hpp"
#include "exchange/journal_lock.hpp"
#include "exchange/journal_recovery.hpp"
#include "exchange/journal_writer.hpp"
#include "exchange/md_publisher.hpp"
#include "exchange/order_gateway.hpp"
#include "exchange/sequencer.hpp"
#include "exchange/snapshot_publisher.hpp"
#include "exchange/snapshotter.hpp"
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

core::RunnerOptions runner_options(const ExchangeConfig& c, std::size_t position, const char* name) {
  core::RunnerOptions o;
  o.thread_name = name;
  o.cpu = position < c.threads.cpus.size() ? c.threads.cpus[position] : -1;
  return o;
}

core::IdleConfig idle_config(const ExchangeConfig& c) {
  core::IdleConfig i;
  i.kind = c.threads.idle;
  return i;
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

// The part of the server whose types depend on the thread layout: the engine
// (its sink differs) and the runners. Cold interface: virtual calls at
// start-up and shutdown only.
struct Layout {
  virtual ~Layout() = default;
  virtual void replay(const engine::Request& rq) = 0;  // muted: recovery
  virtual void import_state(const engine::EngineState& state) = 0;
  virtual engine::EngineState export_state() const = 0;
  virtual std::uint64_t state_hash() const = 0;
  virtual void unmute() = 0;
  virtual void seed_snapshots(SnapshotPublisher& snapshots) = 0;
  virtual std::vector<engine::ClientId> clients_with_orders() const = 0;  // of the recovered engine
  virtual std::uint64_t last_md_seq() const = 0;
  virtual void place_counters(core::CountersFile& file) = 0;  // the layout's own (start-up)
  virtual void start() = 0;
  virtual void stop(const ExchangeServer::Log& log) = 0;  // never throws: failures are logged
  virtual std::string failure() const = 0;
};

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
  std::unique_ptr<JournalDirLock> journal_lock;  // first made, last released: the directory is ours throughout
  std::unique_ptr<JournalWriter> journal;
  std::unique_ptr<OrderGateway> gateway;
  std::unique_ptr<Sequencer> sequencer;
  std::unique_ptr<MdPublisher> publisher;
  std::unique_ptr<SnapshotPublisher> snapshots;
  std::unique_ptr<JournalSyncer> syncer;
  std::unique_ptr<Snapshotter> snapshotter;
  std::unique_ptr<Layout> layout;
  // Off the critical path, both layouts: snapshot feed + journal syncing on
  // one thread, the snapshotter (milliseconds per snapshot) on another.
  using Aux = core::CompositeAgent<SnapshotPublisher&, JournalSyncer&>;
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

namespace {

// Compact: gateway, sequencer, engine and publisher on one thread; the
// engine's outputs go straight to the gateway and the publisher.
class CompactLayout final : public Layout {
 public:
  using Sink = DirectSink<OrderGateway, MdPublisher>;
  // The engine's answers are written before its market data goes out
  // (DirectSink::end_of_batch).
  using Critical = core::CompositeAgent<OrderGateway&, Sequencer&, EngineAgent<Sink>&, MdPublisher&>;
  using BoundCritical = telemetry::BoundAgent<Critical&>;

  explicit CompactLayout(ExchangeServer::Impl& s)
      : s_(s),
        sink_{nullptr, nullptr, true, 0},
        engine_(s.config.engine, s.sequencer_to_engine, sink_),
        recorder_(s.recorder("critical")) {}

  void replay(const engine::Request& rq) override { engine_.engine().process(rq); }
  void import_state(const engine::EngineState& st) override { engine_.engine().import_state(st); }
  engine::EngineState export_state() const override { return engine_.engine().export_state(); }
  std::uint64_t state_hash() const override { return engine::state_hash(engine_.engine()); }
  void unmute() override {
    sink_.gateway = s_.gateway.get();
    sink_.publisher = s_.publisher.get();
    sink_.muted = false;
  }
  void seed_snapshots(SnapshotPublisher& snapshots) override { snapshots.seed_from(engine_.engine()); }
  std::vector<engine::ClientId> clients_with_orders() const override {
    return exchange::clients_with_orders(engine_.engine());
  }
  std::uint64_t last_md_seq() const override { return engine_.engine().last_md_seq(); }
  void place_counters(core::CountersFile&) override {}  // the engine's outputs are direct calls: nothing to wait on

  void start() override {
    critical_ = std::make_unique<Critical>(*s_.gateway, *s_.sequencer, engine_, *s_.publisher);
    bound_ = std::make_unique<BoundCritical>(*critical_, recorder_);
    critical_runner_.emplace(core::make_agent_runner(*bound_, runner_options(s_.config, 0, "nt-critical"),
                                                     idle_config(s_.config)));
    critical_runner_->start();
  }
  void stop(const ExchangeServer::Log& log) override { stop_runner(critical_runner_, "critical", log); }
  std::string failure() const override {
    if (critical_runner_ && critical_runner_->has_failed()) return "critical thread failed: " + describe(*critical_runner_);
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

// Dedicated: one thread per critical agent, rings between them.
class DedicatedLayout final : public Layout {
 public:
  using Engine = EngineAgent<RingSink>;
  using GatewayThread =
      core::CompositeAgent<OrderGateway&, ReportDrainer<OrderGateway>, AnswerFlusher<OrderGateway>>;
  using BoundGateway = telemetry::BoundAgent<GatewayThread&>;
  using BoundSequencer = telemetry::BoundAgent<Sequencer&>;
  using BoundEngine = telemetry::BoundAgent<Engine&>;
  using BoundMd = telemetry::BoundAgent<MdDrainer<MdPublisher>&>;

  explicit DedicatedLayout(ExchangeServer::Impl& s)
      : s_(s),
        sink_{s.reports, s.md_to_publisher, true},
        engine_(s.config.engine, s.sequencer_to_engine, sink_),
        gateway_recorder_(s.recorder("gateway")),
        sequencer_recorder_(s.recorder("sequencer")),
        engine_recorder_(s.recorder("engine")),
        md_recorder_(s.recorder("md")) {}

  void replay(const engine::Request& rq) override { engine_.engine().process(rq); }
  void import_state(const engine::EngineState& st) override { engine_.engine().import_state(st); }
  engine::EngineState export_state() const override { return engine_.engine().export_state(); }
  std::uint64_t state_hash() const override { return engine::state_hash(engine_.engine()); }
  void unmute() override { sink_.muted = false; }
  void seed_snapshots(SnapshotPublisher& snapshots) override { snapshots.seed_from(engine_.engine()); }
  std::vector<engine::ClientId> clients_with_orders() const override {
    return exchange::clients_with_orders(engine_.engine());
  }
  std::uint64_t last_md_seq() const override { return engine_.engine().last_md_seq(); }
  void place_counters(core::CountersFile& file) override {
    file.begin_group();
    file.place(sink_.full_waits, "engine.output_ring_full_waits");
  }

  void start() override {
    gateway_ = std::make_unique<GatewayThread>(*s_.gateway, ReportDrainer<OrderGateway>(s_.reports, *s_.gateway),
                                               AnswerFlusher<OrderGateway>(*s_.gateway));
    md_ = std::make_unique<MdDrainer<MdPublisher>>(s_.md_to_publisher, *s_.publisher);
    bound_gateway_ = std::make_unique<BoundGateway>(*gateway_, gateway_recorder_);
    bound_sequencer_ = std::make_unique<BoundSequencer>(*s_.sequencer, sequencer_recorder_);
    bound_engine_ = std::make_unique<BoundEngine>(engine_, engine_recorder_);
    bound_md_ = std::make_unique<BoundMd>(*md_, md_recorder_);
    const auto idle = idle_config(s_.config);
    gateway_runner_.emplace(core::make_agent_runner(*bound_gateway_, runner_options(s_.config, 0, "nt-gateway"), idle));
    sequencer_runner_.emplace(
        core::make_agent_runner(*bound_sequencer_, runner_options(s_.config, 1, "nt-sequencer"), idle));
    engine_runner_.emplace(core::make_agent_runner(*bound_engine_, runner_options(s_.config, 2, "nt-engine"), idle));
    md_runner_.emplace(core::make_agent_runner(*bound_md_, runner_options(s_.config, 3, "nt-md"), idle));
    gateway_runner_->start();
    sequencer_runner_->start();
    engine_runner_->start();
    md_runner_->start();
  }
  // Upstream first: no new input, then the engine while its consumers still
  // drain the report and market data rings (a full ring would otherwise hold
  // the engine forever), then the consumers.
  void stop(const ExchangeServer::Log& log) override {
    stop_runner(sequencer_runner_, "sequencer", log);
    stop_runner(engine_runner_, "engine", log);
    stop_runner(md_runner_, "market data", log);
    stop_runner(gateway_runner_, "gateway", log);
  }
  std::string failure() const override {
    if (gateway_runner_ && gateway_runner_->has_failed()) return "gateway thread failed: " + describe(*gateway_runner_);
    if (sequencer_runner_ && sequencer_runner_->has_failed()) return "sequencer thread failed: " + describe(*sequencer_runner_);
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

}  // namespace

ExchangeServer::ExchangeServer(const ExchangeConfig& config, Log log, telemetry::Writer* telemetry,
                               const std::string& counters_path)
    : impl_(std::make_unique<Impl>(config, std::move(log), telemetry, counters_path)) {
  Impl& s = *impl_;
  if (config.threads.mode == ThreadMode::kDedicated) {
    s.layout = std::make_unique<DedicatedLayout>(s);
  } else {
    s.layout = std::make_unique<CompactLayout>(s);
  }
  // The journal directory is this process's alone before anything in it is
  // read: a second exchange on it would reuse our sequence numbers.
  char host[256] = "?";
  (void)::gethostname(host, sizeof host - 1);
  s.journal_lock = std::make_unique<JournalDirLock>(
      config.journal.dir, "nanotick-exchange pid " + std::to_string(::getpid()) + " on " + host + ", order entry " +
                              config.server.order_entry);
  // Recovery: the newest good engine snapshot, then the journal after it,
  // replayed with the outputs muted.
  const auto t0 = Clock::now();
  std::vector<std::string> problems;
  const std::uint64_t fingerprint = config.engine_fingerprint();
  std::uint64_t from_seq = 0;
  if (auto snap = load_latest_snapshot(config.journal.dir, fingerprint, problems)) {
    s.layout->import_state(snap->state);
    from_seq = snap->journal_seq;
    s.log("engine snapshot " + snap->path + " loaded (journal seq " + std::to_string(from_seq) + ")");
  }
  for (const auto& p : problems) s.log("engine snapshot skipped: " + p);
  const JournalRecovery rec = recover_journal(config.journal.dir, fingerprint, from_seq,
                                              [&](const JournalRecord& r) { s.layout->replay(r.request); });
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(s.layout->state_hash()));
  s.log("journal " + config.journal.dir + ": " + std::to_string(rec.segments) + " segment(s), replayed " +
        std::to_string(rec.records_replayed) + " request(s) in " + std::to_string(ms) + " ms; next seq " +
        std::to_string(rec.tail.next_seq) + ", market data seq " + std::to_string(s.layout->last_md_seq()) +
        ", state hash " + hash);
  if (!rec.truncation.empty())
    s.log("journal: cut a torn tail: " + rec.truncation + " (" + std::to_string(rec.truncated_bytes) +
          " bytes zeroed)");
  for (const auto& q : rec.quarantined) s.log("journal: later segment kept aside, not replayed: " + q);

  s.journal = std::make_unique<JournalWriter>(config.journal.dir, config.journal.segment_bytes,
                                              config.engine_fingerprint(), rec.tail);
  s.sequencer = std::make_unique<Sequencer>(s.gateway_to_sequencer, s.sequencer_to_engine, *s.journal,
                                            config.journal.fsync);
  s.syncer = std::make_unique<JournalSyncer>(*s.journal, config.journal.fsync, config.journal.batch_window_us);
  s.snapshotter = std::make_unique<Snapshotter>(config, *s.journal, s.layout->export_state(), rec.tail.next_seq - 1);
  s.publisher = std::make_unique<MdPublisher>(config.market_data, s.md_to_snapshots, s.layout->last_md_seq() + 1);
  const auto caps = s.capacities();
  s.snapshots = std::make_unique<SnapshotPublisher>(config.market_data, caps, s.md_to_snapshots);
  s.layout->seed_snapshots(*s.snapshots);
  s.gateway = std::make_unique<OrderGateway>(
      config, s.gateway_to_sequencer,
      static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
              .count())
          << 20,
      telemetry != nullptr ? kAnswerStampSlots : 0);
  // Recovered resting orders of cancel-on-disconnect clients have no session
  // any more: a mass cancel per such client goes first (sequenced and
  // journaled, executed by the engine like any request).
  std::size_t orphaned = 0;
  for (const engine::ClientId client : s.layout->clients_with_orders()) {
    const ClientConfig* c = config.find_client(client);
    if (c == nullptr || !c->cancel_on_disconnect) continue;
    s.gateway->queue_mass_cancel(client);
    ++orphaned;
  }
  if (orphaned != 0)
    s.log("cancel on disconnect: a mass cancel for each of " + std::to_string(orphaned) +
          " client(s) whose recovered resting orders have no session");
  s.layout->unmute();
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
  s.layout->place_counters(f);
  s.publisher->place_counters(f);
  s.snapshots->place_counters(f);
  s.snapshotter->place_counters(f);
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
  const std::size_t aux_cpu = s.config.threads.mode == ThreadMode::kDedicated ? 4 : 1;
  s.aux = std::make_unique<Impl::Aux>(*s.snapshots, *s.syncer);
  const core::IdleConfig background{core::IdleKind::backoff, {}, {}};
  s.aux_runner.emplace(core::make_agent_runner(*s.aux, runner_options(s.config, aux_cpu, "nt-aux"), background));
  s.snapshot_runner.emplace(
      core::make_agent_runner(*s.snapshotter, runner_options(s.config, aux_cpu + 1, "nt-snapshot"), background));
  s.aux_runner->start();
  s.snapshot_runner->start();
  s.layout->start();
}

std::string ExchangeServer::failure() const {
  const Impl& s = *impl_;
  if (s.sequencer->halted()) {
    const std::string why = s.journal->error().empty() ? s.journal->sync_error() : s.journal->error();
    return "journal: " + why + " (order entry stopped: nothing unjournaled was acknowledged)";
  }
  if (s.syncer->failed()) return "journal: " + s.journal->sync_error();
  if (s.aux_runner && s.aux_runner->has_failed()) return "auxiliary thread failed: " + describe(*s.aux_runner);
  // A snapshotter failure is logged (shutdown), not fatal: the journal alone recovers everything.
  return s.layout->failure();
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
    s.layout->stop(s.log);
    // Last: the snapshot feed's ring may still be drained by the publisher above.
    stop_runner(s.aux_runner, "auxiliary", s.log);
    stop_runner(s.snapshot_runner, "snapshotter", s.log);
    s.gateway->publish_latency_summaries();  // the gateway's thread is done: its histograms are final
  }
  try {
    if (s.journal && s.config.journal.fsync != FsyncPolicy::kNone && !s.journal->sync())
      s.log("shutdown: final journal fdatasync failed: " + s.journal->sync_error());
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
