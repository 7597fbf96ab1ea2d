#include "exchange/exchange_server.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "exchange/server_parts.hpp"

namespace nanotick::exchange {

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
  // Recovery, a phase of its own (sequencing/venue_recovery.hpp): planned
  // with nothing changed, then carried out; the engine recovered in place.
  RecoveryEngine recovery_engine;
  recovery_engine.import_snapshot = [&](const LoadedSnapshot& snap) {
    with_engine([&](auto& e) { e.import_state(snap.state, snap.controls); });
  };
  recovery_engine.replay = [&](const engine::Request& rq) { with_engine([&](auto& e) { e.process(rq); }); };
  recovery_engine.set_trade_tap = [&s](TradeTap* tap) { on_pipeline(s, [tap](auto& p) { p.set_trade_tap(tap); }); };
  recovery_engine.state_hash = [&] { return with_engine([](auto& e) { return engine::state_hash(e.engine()); }); };
  recovery_engine.last_md_seq = [&] { return with_engine([](auto& e) { return e.engine().last_md_seq(); }); };
  RecoveredVenue recovered = recover_venue(config, s.ledger_ring, recovery_engine);
  s.trade_tap = std::move(recovered.trade_tap);
  s.ledger = std::move(recovered.ledger);
  const JournalRecovery& rec = recovered.plan.journal;
  for (const std::string& line : recovered.log) s.log(line);

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
  s.aux_runner.emplace(core::make_agent_runner(*s.aux, s.config.threads.runner("aux"), "nt-aux"));
  s.snapshot_runner.emplace(
      core::make_agent_runner(*s.snapshotter, s.config.threads.runner("snapshotter"), "nt-snapshotter"));
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
