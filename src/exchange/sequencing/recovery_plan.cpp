#include "exchange/sequencing/recovery_plan.hpp"

namespace nanotick::exchange {

std::string trade_ledger_path(const std::string& journal_dir) { return journal_dir + "/trades.ledger"; }

RecoveryPlan plan_recovery(const std::string& dir, std::uint64_t fingerprint, const RecoveryHooks& hooks) {
  RecoveryPlan plan;
  plan.ledger = plan_trade_ledger(trade_ledger_path(dir), fingerprint);
  if (hooks.on_ledger) hooks.on_ledger(plan.ledger);
  if (auto snap = load_latest_snapshot(dir, fingerprint, plan.snapshot_problems)) {
    plan.snapshot_seq = snap->journal_seq;
    plan.snapshot_report_seq = snap->state.report_seq;
    plan.snapshot_path = snap->path;
    if (hooks.on_snapshot) hooks.on_snapshot(*snap);
  }
  plan.journal = plan_journal_recovery(dir, fingerprint, plan.snapshot_seq, hooks.on_record);
  return plan;
}

std::vector<std::string> describe_ledger_recovery(const RecoveryPlan& plan, const std::vector<TradeRecord>& replayed) {
  std::vector<std::string> out;
  const LedgerPlan& l = plan.ledger;
  if (l.cut_bytes != 0)
    out.push_back("trade ledger: cut a torn tail: " + l.cut_reason + " (" + std::to_string(l.cut_bytes) + " bytes)");
  const bool journal_had_requests = plan.snapshot_seq != 0 || plan.journal.records_scanned != 0;
  if (l.missing && journal_had_requests) {
    std::string line = "trade ledger: " + l.path + " was missing (deleted or never synced) and is made anew; ";
    if (plan.snapshot_seq == 0) {
      line += "the journal holds every request from seq 1, so its replay put back every trade (none lost)";
    } else {
      line += "trades with execution reports up to seq " + std::to_string(plan.snapshot_report_seq) +
              " (requests up to journal seq " + std::to_string(plan.snapshot_seq) + ", before the engine snapshot " +
              plan.snapshot_path + ") are NOT in it, if there were any; later ones were put back from the journal";
    }
    out.push_back(std::move(line));
  } else if (!l.missing && l.next_trade_seq > 1 && plan.snapshot_report_seq > l.last_exec_seq) {
    // Compared by execution report seq: the ledger may hold only some of a request's trades.
    out.push_back("trade ledger: its last trade has execution report seq " + std::to_string(l.last_exec_seq) +
                  " and the snapshot is after report " + std::to_string(plan.snapshot_report_seq) +
                  ": trades with reports in between, if there were any, are not in the ledger (the replay starts "
                  "after the snapshot, at request " +
                  std::to_string(plan.snapshot_seq + 1) + ")");
  }
  if (!replayed.empty())
    out.push_back("trade ledger: the journal's replay put back " + std::to_string(replayed.size()) +
                  " trade(s) the file lacked (trade_seq " + std::to_string(replayed.front().trade_seq) + ".." +
                  std::to_string(replayed.back().trade_seq) + ")");
  return out;
}

}  // namespace nanotick::exchange
