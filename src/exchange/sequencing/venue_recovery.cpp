#include "exchange/sequencing/venue_recovery.hpp"

#include <chrono>
#include <cstdio>

namespace nanotick::exchange {

RecoveredVenue recover_venue(const ExchangeConfig& config, LedgerRing& ledger_ring, const RecoveryEngine& engine) {
  RecoveredVenue out;
  // Planned read-only, so that a refusal (thrown from plan_recovery) leaves
  // the directory as it was. The ledger's tap takes the trades the replay
  // re-makes that the file lacks (a crash between the match and the
  // write), into a vector written once the start is decided.
  const std::uint64_t fingerprint = config.engine_fingerprint();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<TradeRecord> replayed_trades;
  RecoveryHooks hooks;
  hooks.on_ledger = [&](const LedgerPlan& ledger) {
    out.trade_tap = std::make_unique<TradeTap>(ledger_ring, ledger.next_trade_seq, ledger.last_exec_seq);
    out.trade_tap->collect_replay_into(&replayed_trades);
    engine.set_trade_tap(out.trade_tap.get());
  };
  hooks.on_snapshot = [&](const LoadedSnapshot& snap) { engine.import_snapshot(snap); };
  hooks.on_record = [&](const JournalRecord& r) { engine.replay(r.request); };
  out.plan = plan_recovery(config.journal.dir, fingerprint, hooks);
  RecoveryPlan& plan = out.plan;
  const JournalRecovery& rec = plan.journal;

  // Decided: carry the plan out.
  apply_journal_recovery(plan.journal);
  out.ledger = std::make_unique<TradeLedger>(plan.ledger, fingerprint, ledger_ring);
  out.ledger->write_recovered(replayed_trades);
  out.trade_tap->end_replay();

  std::vector<std::string>& log = out.log;
  for (const auto& p : plan.snapshot_problems) log.push_back("engine snapshot skipped: " + p);
  if (plan.snapshot_seq != 0)
    log.push_back("engine snapshot " + plan.snapshot_path + " loaded (journal seq " +
                  std::to_string(plan.snapshot_seq) + ")");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(engine.state_hash()));
  log.push_back("journal " + config.journal.dir + ": " + std::to_string(rec.segments) + " segment(s), replayed " +
                std::to_string(rec.records_replayed) + " request(s) in " + std::to_string(ms) + " ms; next seq " +
                std::to_string(rec.next_seq) + ", market data seq " + std::to_string(engine.last_md_seq()) +
                ", state hash " + hash);
  if (!rec.truncation.empty())
    log.push_back("journal: cut a torn tail: " + rec.truncation + " (" + std::to_string(rec.truncated_bytes) +
                  " bytes zeroed)");
  for (const auto& q : rec.quarantined) log.push_back("journal: later segment kept aside, not replayed: " + q);
  if (rec.records_staged != 0)
    log.push_back("journal: " + std::to_string(rec.records_staged) +
                  " request(s) a killed run left in the staging ring " + rec.staging_path +
                  " replayed; written to the journal files now");
  if (!rec.staging_ignored.empty()) log.push_back("journal: staging ring ignored: " + rec.staging_ignored);
  for (std::string& line : describe_ledger_recovery(plan, replayed_trades)) log.push_back(std::move(line));
  return out;
}

}  // namespace nanotick::exchange
