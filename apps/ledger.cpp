// nanotick-ledger: the venue's trade ledger for an auditor (docs/CONTROLS.md
// "Trade ledger"):
//   list LEDGER      every trade as CSV (filters: --client, --instrument,
//                    --from/--to trade_seq), symbols named with --config;
//   balances LEDGER  per client and instrument: bought and sold quantity
//                    and notional, net position change and cash moved -- what
//                    the exchange's end-of-run balances must equal, opening
//                    included, and what each trader's own books must say.
//   verify LEDGER    what the file holds and what start-up will do with it:
//                    exit 0 clean, 3 a torn tail it cuts, 4 damage in the
//                    middle it refuses to start on;
//   repair LEDGER    cuts a damaged ledger at its first bad record after
//                    copying it into repair-<time>/ beside it (takes the
//                    journal directory's lock: never while an exchange runs).
// LEDGER is the file or the journal directory holding trades.ledger. Every
// record's CRC and the trade_seq chain are checked; a torn tail is reported
// on stderr and makes the exit code 3, damage in the middle 4.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "config/toml_reader.hpp"
#include "controls/account_limits.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/ledger/ledger_repair.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/sequencing/journal_lock.hpp"

namespace {

using namespace nanotick::exchange;

constexpr int kExitTorn = 3;
constexpr int kExitCorrupt = 4;

std::string ledger_path(const std::string& arg) {
  if (std::filesystem::is_directory(arg)) return (std::filesystem::path(arg) / "trades.ledger").string();
  return arg;
}

std::string iso_time(std::uint64_t ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000ull);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09" PRIu64 "Z", static_cast<std::uint64_t>(ns % 1'000'000'000u));
  return buf;
}

struct Filter {
  std::int64_t client = -1;
  std::int64_t instrument = -1;
  std::uint64_t from = 0;
  std::uint64_t to = UINT64_MAX;
  bool keeps(const TradeRecord& t) const {
    if (t.trade_seq < from || t.trade_seq > to) return false;
    if (instrument >= 0 && t.instrument != static_cast<std::uint64_t>(instrument)) return false;
    if (client >= 0 && t.buy_client != static_cast<std::uint64_t>(client) &&
        t.sell_client != static_cast<std::uint64_t>(client))
      return false;
    return true;
  }
};

std::vector<std::string> symbols_of(const std::string& config_path) {
  std::vector<std::string> out;
  if (config_path.empty()) return out;
  for (const auto& in : load_exchange_config(config_path).engine.instruments) out.push_back(in.symbol);
  return out;
}

std::string symbol(const std::vector<std::string>& symbols, std::uint32_t instrument) {
  return instrument < symbols.size() ? symbols[instrument] : std::to_string(instrument);
}

int finish(const LedgerContents& c, const std::string& path) {
  if (c.damage == LedgerDamage::kCorrupt) {
    std::fprintf(stderr, "nanotick-ledger: %s: %zu trade(s) before the damage; %s\n", path.c_str(), c.trades.size(),
                 corrupt_ledger_message(path, c).c_str());
    return kExitCorrupt;
  }
  std::fprintf(stderr, "nanotick-ledger: %s: %zu trade(s)%s%s\n", path.c_str(), c.trades.size(),
               c.problem.empty() ? "" : "; torn tail: ", c.problem.c_str());
  return c.problem.empty() ? 0 : kExitTorn;
}

int verify(const std::string& arg) {
  const std::string path = ledger_path(arg);
  const LedgerContents c = read_trade_ledger(path);
  std::printf("trade ledger %s: %" PRIu64 " bytes, fingerprint %016" PRIx64 ", %zu good trade(s)\n", path.c_str(),
              c.file_bytes, c.fingerprint, c.trades.size());
  switch (c.damage) {
    case LedgerDamage::kNone: std::printf("verdict: clean\n"); return 0;
    case LedgerDamage::kTornTail:
      std::printf(
          "first problem: %s; nothing after it passes its CRC\nverdict: torn tail: the exchange cuts it at "
          "start-up and puts back from the journal the trades it holds\n",
          c.problem.c_str());
      return kExitTorn;
    case LedgerDamage::kCorrupt:
      std::printf("verdict: corrupt: %s\n", corrupt_ledger_message(path, c).c_str());
      return kExitCorrupt;
  }
  return kExitCorrupt;
}

int repair(const std::string& arg, bool dry_run) {
  const std::string path = ledger_path(arg);
  std::unique_ptr<JournalDirLock> lock;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (!dry_run)
    lock = std::make_unique<JournalDirLock>(dir.empty() ? "." : dir,
                                            "nanotick-ledger repair pid " + std::to_string(::getpid()));
  const LedgerRepair r = repair_trade_ledger(path, dry_run);
  if (r.backup_path.empty()) {
    std::printf("trade ledger %s is clean: nothing to repair\n", path.c_str());
    return 0;
  }
  const char* verb = dry_run ? "would" : "did";
  std::printf("%s copy %s to %s, then cut it after trade_seq %" PRIu64 " (%" PRIu64 " bytes)\n", verb, path.c_str(),
              r.backup_path.c_str(), r.kept_trades, r.cut_bytes);
  if (r.removed_valid != 0)
    std::printf("REMOVED: %" PRIu64 " record(s) that pass their CRC (trade_seq %" PRIu64 "..%" PRIu64
                "); the exchange's next start puts back those whose requests are in the journal after its engine "
                "snapshot (its log names the rest); the copy keeps them all\n",
                r.removed_valid, r.removed_valid_min_seq, r.removed_valid_max_seq);
  return 0;
}

int list(const std::string& arg, const Filter& f, const std::string& config_path) {
  const std::string path = ledger_path(arg);
  const LedgerContents c = read_trade_ledger(path);
  const std::vector<std::string> symbols = symbols_of(config_path);
  std::printf(
      "trade_seq,request_seq,time_utc,instrument,price,qty,aggressor,buy_client,sell_client,buy_order_id,"
      "sell_order_id,buy_client_order_id,sell_client_order_id,buy_exec_seq,sell_exec_seq\n");
  for (const TradeRecord& t : c.trades) {
    if (!f.keeps(t)) continue;
    std::printf("%" PRIu64 ",%" PRIu64 ",%s,%s,%" PRId64 ",%" PRId64 ",%s,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                t.trade_seq, t.request_seq, iso_time(t.time_ns).c_str(), symbol(symbols, t.instrument).c_str(), t.price,
                t.qty, t.aggressor == 1 ? "buy" : "sell", t.buy_client, t.sell_client, t.buy_order_id, t.sell_order_id,
                t.buy_client_order_id, t.sell_client_order_id, t.buy_exec_seq, t.sell_exec_seq);
  }
  return finish(c, path);
}

int balances(const std::string& arg, const Filter& f, const std::string& config_path) {
  const std::string path = ledger_path(arg);
  const LedgerContents c = read_trade_ledger(path);
  const std::vector<std::string> symbols = symbols_of(config_path);
  struct Sums {
    std::int64_t bought = 0, sold = 0;
    nanotick::controls::Money bought_notional = 0, sold_notional = 0;
  };
  std::map<std::tuple<std::uint32_t, std::uint32_t>, Sums> by;  // (client, instrument)
  for (const TradeRecord& t : c.trades) {
    if (!f.keeps(t)) continue;
    const nanotick::controls::Money value = nanotick::controls::Money{t.price} * t.qty;
    Sums& b = by[{t.buy_client, t.instrument}];
    b.bought += t.qty;
    b.bought_notional += value;
    Sums& s = by[{t.sell_client, t.instrument}];
    s.sold += t.qty;
    s.sold_notional += value;
  }
  std::printf("client,instrument,bought_qty,sold_qty,bought_notional,sold_notional,position_change,cash_moved\n");
  for (const auto& [key, s] : by) {
    if (f.client >= 0 && std::get<0>(key) != static_cast<std::uint64_t>(f.client)) continue;
    using nanotick::controls::to_string;
    std::printf("%u,%s,%" PRId64 ",%" PRId64 ",%s,%s,%" PRId64 ",%s\n", std::get<0>(key),
                symbol(symbols, std::get<1>(key)).c_str(), s.bought, s.sold, to_string(s.bought_notional).c_str(),
                to_string(s.sold_notional).c_str(), s.bought - s.sold,
                to_string(s.sold_notional - s.bought_notional).c_str());
  }
  return finish(c, path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"List, filter and sum the venue's trade ledger (docs/CONTROLS.md)", "nanotick-ledger"};
  app.require_subcommand(1);
  std::string ledger;
  std::string config_path;
  Filter f;
  const auto common = [&](CLI::App* sub) {
    sub->add_option("ledger", ledger, "the ledger file, or the journal directory holding trades.ledger")->required();
    sub->add_option("--config,-c", config_path, "the exchange config: instruments by symbol")->check(CLI::ExistingFile);
    sub->add_option("--client", f.client, "only trades with this client on either side")->check(CLI::Range(0, 65535));
    sub->add_option("--instrument", f.instrument, "only this instrument id")->check(CLI::Range(0, 1 << 30));
    sub->add_option("--from", f.from, "first trade_seq");
    sub->add_option("--to", f.to, "last trade_seq");
  };
  auto* l = app.add_subcommand("list", "every trade as CSV on stdout (exit 3: the file has a torn tail)");
  common(l);
  auto* b = app.add_subcommand("balances", "per client and instrument: bought, sold, position change, cash moved");
  common(b);
  auto* v = app.add_subcommand("verify",
                               "what the ledger holds and what start-up will do (exit 0 clean, 3 torn tail, "
                               "4 damage in the middle: start-up refuses)");
  v->add_option("ledger", ledger, "the ledger file, or the journal directory holding trades.ledger")->required();
  bool dry_run = false;
  auto* r = app.add_subcommand("repair", "cut a damaged ledger at its first bad record, keeping a copy of the file");
  r->add_option("ledger", ledger, "the ledger file, or the journal directory (no exchange may be running on it)")
      ->required();
  r->add_flag("--dry-run,-n", dry_run, "say what would be done, change nothing");
  CLI11_PARSE(app, argc, argv);
  try {
    if (l->parsed()) return list(ledger, f, config_path);
    if (v->parsed()) return verify(ledger);
    if (r->parsed()) return repair(ledger, dry_run);
    return balances(ledger, f, config_path);
  } catch (const nanotick::config::ConfigError& e) {
    std::fprintf(stderr, "nanotick-ledger: config error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-ledger: error: %s\n", e.what());
    return 1;
  }
}
