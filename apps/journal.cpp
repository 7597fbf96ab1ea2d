// nanotick-journal: the operator's view of a journal directory
// (docs/EXCHANGE.md "When the journal is damaged"):
//   verify DIR  what is there, what is wrong, and what the exchange's
//               start-up will do with the directory -- decided by the same
//               function start-up runs (recovery_plan.hpp), with the same
//               snapshot and trade ledger: exit 0 it starts and changes
//               nothing, 3 it cuts a torn tail (journal or ledger) and
//               starts, 4 it refuses to start;
//   dump DIR    every record as CSV (good, after the break, bad);
//   repair DIR  cuts the journal at its first break after keeping a copy of
//               everything it removes (takes the directory's lock: never
//               while an exchange runs on it).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "config/toml_reader.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/sequencing/journal_lock.hpp"
#include "exchange/sequencing/journal_repair.hpp"
#include "exchange/sequencing/journal_scan.hpp"
#include "exchange/sequencing/journal_staging.hpp"
#include "exchange/sequencing/recovery_plan.hpp"
#include "workload/workload_csv.hpp"

namespace {

using namespace nanotick::exchange;
namespace ne = nanotick::engine;

constexpr int kExitTorn = 3;
constexpr int kExitCorrupt = 4;

const char* status_name(SlotStatus s) {
  switch (s) {
    case SlotStatus::kGood: return "good";
    case SlotStatus::kAfterBreak: return "after-break";
    case SlotStatus::kBad: return "bad";
  }
  return "?";
}

// The config's fingerprint, or else the journal's own (its first good
// segment header), or else the ledger's: what start-up would compare with.
std::uint64_t fingerprint_of(const std::string& config_path, const std::string& dir, std::string& source) {
  if (!config_path.empty()) {
    source = config_path;
    return load_exchange_config(config_path).engine_fingerprint();
  }
  for (const auto& s : scan_journal(dir, 0).segments)
    if (s.header_problem.empty()) {
      source = "the journal's first segment (give --config to check against a config)";
      return s.fingerprint;
    }
  try {
    const LedgerContents c = read_trade_ledger(trade_ledger_path(dir));
    source = "the trade ledger (give --config to check against a config)";
    return c.fingerprint;
  } catch (const std::exception&) {
  }
  source = "none found (give --config)";
  return 0;
}

void require_dir(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw JournalError("journal: " + dir + " is not a directory");
}

int verify(const std::string& dir, const std::string& config_path) {
  require_dir(dir);
  std::string source;
  const std::uint64_t fingerprint = fingerprint_of(config_path, dir, source);
  const JournalScan scan = scan_journal(dir, fingerprint);
  std::printf("journal %s: %zu segment file(s); instrument table fingerprint %016" PRIx64 " from %s\n", dir.c_str(),
              scan.segments.size(), fingerprint, source.c_str());
  for (const auto& s : scan.segments) {
    std::printf("  %s  %" PRIu64 " bytes  ", std::filesystem::path(s.path).filename().c_str(), s.file_bytes);
    if (!s.header_problem.empty()) {
      std::printf("header: %s\n", s.header_problem.c_str());
    } else if (s.good_records == 0) {
      std::printf("fingerprint %016" PRIx64 ", no good records%s\n", s.fingerprint, s.cut_short ? ", CUT SHORT" : "");
    } else {
      std::printf("fingerprint %016" PRIx64 ", seq %" PRIu64 "..%" PRIu64 " (%" PRIu64 " good records)%s\n",
                  s.fingerprint, s.first_seq, s.last_seq, s.good_records, s.cut_short ? ", CUT SHORT" : "");
    }
  }
  if (scan.good_records != 0)
    std::printf("good records: seq %" PRIu64 "..%" PRIu64 " (%" PRIu64 ")\n", scan.first_seq, scan.next_seq - 1,
                scan.good_records);
  else std::printf("good records: none\n");
  for (const std::size_t i : scan.fingerprint_mismatch)
    std::printf("wrong instrument table: %s (fingerprint %016" PRIx64 ", %s has %016" PRIx64 ")\n",
                scan.segments[i].path.c_str(), scan.segments[i].fingerprint, source.c_str(), fingerprint);
  if (scan.has_break) std::printf("first problem: %s (%s)\n", scan.describe_break().c_str(), to_string(scan.damage));

  // What start-up will do: the function it runs, without the engine.
  try {
    const RecoveryPlan plan = plan_recovery(dir, fingerprint);
    for (const auto& p : plan.snapshot_problems) std::printf("engine snapshot skipped: %s\n", p.c_str());
    if (plan.snapshot_seq != 0)
      std::printf("engine snapshot: %s (journal seq %" PRIu64 ")\n", plan.snapshot_path.c_str(), plan.snapshot_seq);
    else std::printf("engine snapshot: none (the replay starts at seq 1)\n");
    const LedgerPlan& l = plan.ledger;
    if (l.missing) std::printf("trade ledger: missing (start-up makes it)\n");
    else
      std::printf("trade ledger: %" PRIu64 " trade(s)%s%s\n", l.next_trade_seq - 1,
                  l.cut_bytes != 0 ? "; torn tail: " : "", l.cut_reason.c_str());
    const JournalRecovery& j = plan.journal;
    const bool cuts = !j.truncation.empty() || l.cut_bytes != 0;
    std::printf("start-up: replays %" PRIu64 " request(s)", j.records_replayed);
    if (!j.cut_path.empty())
      std::printf(", cuts the journal's torn tail (%s from offset %" PRIu64 ")", j.cut_path.c_str(), j.cut_offset);
    for (const auto& q : j.to_quarantine) std::printf(", keeps %s aside", q.c_str());
    if (l.cut_bytes != 0) std::printf(", cuts the ledger's torn tail (%" PRIu64 " bytes)", l.cut_bytes);
    if (j.records_staged != 0)
      std::printf(", writes the %" PRIu64 " request(s) a killed run left in the staging ring %s to the files",
                  j.records_staged, j.staging_path.c_str());
    std::printf(", continues at seq %" PRIu64 "\n", j.next_seq);
    if (!j.staging_ignored.empty()) std::printf("staging ring ignored: %s\n", j.staging_ignored.c_str());
    std::printf("verdict: %s\n", cuts ? "torn tail: the exchange cuts it at start-up (nothing after it passes its "
                                        "CRC or proves a record was there: no acknowledged request can be in it)"
                                      : "clean: the exchange starts on it and changes nothing");
    return cuts ? kExitTorn : 0;
  } catch (const JournalError& e) {
    std::printf("verdict: %s: the exchange refuses to start: %s\n",
                scan.damage == JournalDamage::kCorrupt ? "corrupt" : "refused", e.what());
  } catch (const LedgerError& e) {
    std::printf("verdict: corrupt ledger: the exchange refuses to start: %s\n", e.what());
  }
  return kExitCorrupt;
}

int dump(const std::string& dir, std::uint64_t from, std::uint64_t to, bool problems_only) {
  require_dir(dir);
  std::printf(
      "seq,status,segment,offset,type,instrument,client,client_order_id,side,order_type,stp,price,qty,event_id\n");
  const JournalScan scan = scan_journal(
      dir, 0, [&](const JournalSegmentInfo& seg, std::uint64_t off, const JournalRecord& r, SlotStatus st) {
        if (problems_only && st == SlotStatus::kGood) return;
        if (st == SlotStatus::kGood && (r.seq < from || r.seq > to)) return;
        const ne::Request& q = r.request;
        std::printf("%" PRIu64 ",%s,%s,%" PRIu64 ",%s,%u,%u,%" PRIu64 ",%u,%u,%u,%" PRId64 ",%" PRId64 ",%" PRIu64 "\n",
                    r.seq, status_name(st), std::filesystem::path(seg.path).filename().c_str(), off,
                    nanotick::workload::name_of(q.type).c_str(), unsigned(q.instrument), unsigned(q.client),
                    static_cast<std::uint64_t>(q.client_order_id), unsigned(q.side), unsigned(q.order_type),
                    unsigned(q.stp), static_cast<std::int64_t>(q.price), static_cast<std::int64_t>(q.qty), q.event_id);
      });
  std::fprintf(stderr, "nanotick-journal: %s: %" PRIu64 " good record(s), %s\n", dir.c_str(), scan.good_records,
               scan.has_break ? scan.describe_break().c_str() : "no problems");
  return 0;
}

int repair(const std::string& dir, bool dry_run) {
  require_dir(dir);
  std::unique_ptr<JournalDirLock> lock;
  if (!dry_run)
    lock = std::make_unique<JournalDirLock>(dir, "nanotick-journal repair pid " + std::to_string(::getpid()));
  const JournalScan scan = scan_journal(dir, 0);
  // The staging ring goes with a repair: copied aside, then removed. After
  // a cut its records would continue the journal past the damage the cut
  // removed; on clean files it goes only if start-up would refuse it (it
  // proves records missing).
  const auto set_ring_aside = [&](std::uint64_t files_next_seq, const std::string& backup_dir, bool always) {
    const std::string ring = staging_ring_path(dir);
    if (ring.empty() || !std::filesystem::exists(ring)) return false;
    if (!always) {
      try {
        (void)read_staged_records(dir, scan.segments.empty() ? 0 : scan.segments[0].fingerprint, files_next_seq);
        return false;
      } catch (const JournalError& e) {
        std::printf("staging ring refused: %s\n", e.what());
      }
    }
    const std::string to = backup_dir + "/" + std::filesystem::path(ring).filename().string();
    if (!dry_run) {
      std::filesystem::create_directories(backup_dir);
      std::filesystem::copy_file(ring, to, std::filesystem::copy_options::overwrite_existing);
      std::filesystem::remove(ring);
    }
    std::printf("%s copy the staging ring %s to %s, then remove it\n", dry_run ? "would" : "did", ring.c_str(),
                to.c_str());
    return true;
  };
  if (!scan.has_break) {
    const std::string backup = repair_backup_dir_name(dir);
    if (!set_ring_aside(scan.next_seq == 0 ? 1 : scan.next_seq, backup, false))
      std::printf("journal %s is clean: nothing to repair\n", dir.c_str());
    return 0;
  }
  std::printf("problem: %s\n", scan.describe_break().c_str());
  const JournalRepair r = repair_journal(scan, dry_run);
  const char* verb = dry_run ? "would" : "did";
  std::printf("%s cut the journal at seq %" PRIu64 " (it continues from there)\n", verb, r.cut_seq);
  for (const auto& f : r.copied)
    std::printf("%s copy %s to %s/, then zero it after its last good record\n", verb, f.c_str(), r.backup_dir.c_str());
  for (const auto& f : r.moved) std::printf("%s move %s to %s/\n", verb, f.c_str(), r.backup_dir.c_str());
  if (r.removed_valid != 0)
    std::printf("LOST TO THE VENUE: %" PRIu64 " record(s) that pass their CRC (seq %" PRIu64 "..%" PRIu64
                "); acknowledged orders among them must be reconciled with their clients (nanotick journal dump %s)\n",
                r.removed_valid, r.removed_valid_min_seq, r.removed_valid_max_seq, r.backup_dir.c_str());
  else std::printf("no record that passes its CRC is removed\n");
  (void)set_ring_aside(r.cut_seq, r.backup_dir, true);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Verify, dump or repair an exchange journal directory (docs/EXCHANGE.md)", "nanotick-journal"};
  app.require_subcommand(1);
  std::string dir;
  std::string config_path;
  auto* v = app.add_subcommand(
      "verify",
      "what the journal holds, what is wrong, and what the exchange's start-up will do (exit 0 starts "
      "unchanged, 3 cuts a torn tail, 4 refuses)");
  v->add_option("dir", dir, "journal directory")->required();
  v->add_option("--config,-c", config_path, "also check every segment against this exchange config's instrument table")
      ->check(CLI::ExistingFile);
  std::uint64_t from = 0;
  std::uint64_t to = UINT64_MAX;
  bool problems_only = false;
  auto* d =
      app.add_subcommand("dump", "every record as CSV on stdout (good ones in seq order, then what follows a break)");
  d->add_option("dir", dir, "journal directory (or a repair backup directory)")->required();
  d->add_option("--from", from, "first good seq to print");
  d->add_option("--to", to, "last good seq to print");
  d->add_flag("--problems", problems_only, "only the slots at and after the first break");
  bool dry_run = false;
  auto* r = app.add_subcommand("repair", "cut the journal at its first break, keeping a copy of everything removed");
  r->add_option("dir", dir, "journal directory (no exchange may be running on it)")->required();
  r->add_flag("--dry-run,-n", dry_run, "say what would be done, change nothing");
  CLI11_PARSE(app, argc, argv);
  try {
    if (v->parsed()) return verify(dir, config_path);
    if (d->parsed()) return dump(dir, from, to, problems_only);
    return repair(dir, dry_run);
  } catch (const nanotick::config::ConfigError& e) {
    std::fprintf(stderr, "nanotick-journal: config error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-journal: error: %s\n", e.what());
    return 1;
  }
}
