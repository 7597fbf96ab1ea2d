// The trade ledger's file (exchange/trade_ledger.hpp) with real files: the
// tap pairs a taker's and a maker's fill into one record with both sides;
// the writer appends them with CRCs and reopens where it left off; a torn
// tail (a partial record, a record whose CRC fails with nothing valid after
// it) is cut at open and reported; damage in the middle (valid records
// after the bad one) is refused with nothing changed, and repaired only
// explicitly, after a copy; the replay's trades wait in a vector until
// start-up decides; a file of another venue config is refused; the reader names
// what is wrong; and the tap leaves out trades of requests the file already
// holds (a replay's), so none is recorded twice.
#include "exchange/ledger/trade_ledger.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "exchange/ledger/ledger_repair.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "unit/exchange/ledger_test_support.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;

namespace {

using ledger_test::fill;
using TempFile = ledger_test::TempLedger;

// Trades of requests first..last (one each, taker client 1 buying from maker client 2) through a tap.
void trade(nx::TradeTap& tap, ne::Seq first, ne::Seq last) {
  for (ne::Seq rq = first; rq <= last; ++rq) {
    tap.on_report(fill(1, ne::Side::kBuy, false, 2 * rq, rq, 3, 2));
    tap.on_report(fill(2, ne::Side::kSell, true, 2 * rq + 1, rq, 3, 2));
  }
}

TEST(TradeLedger, ShouldRecordBothSidesOfEveryTradeAndReopenWhereItLeftOff) {
  TempFile f;
  auto ring = std::make_unique<nx::LedgerRing>();
  {
    nx::TradeLedger ledger(f.path.string(), 77, *ring);
    EXPECT_EQ(ledger.next_trade_seq(), 1u);
    nx::TradeTap tap(*ring, ledger.next_trade_seq(), ledger.last_exec_seq());
    trade(tap, 1, 10);
    EXPECT_EQ(ledger.do_work(), 10);
    ledger.on_close();
  }
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  ASSERT_EQ(c.trades.size(), 10u);
  EXPECT_TRUE(c.problem.empty()) << c.problem;
  EXPECT_EQ(c.fingerprint, 77u);
  const nx::TradeRecord& t = c.trades[3];
  EXPECT_EQ(t.trade_seq, 4u);
  EXPECT_EQ(t.request_seq, 4u);
  EXPECT_EQ(t.buy_client, 1u);
  EXPECT_EQ(t.sell_client, 2u);
  EXPECT_EQ(t.buy_exec_seq, 8u);
  EXPECT_EQ(t.sell_exec_seq, 9u);
  EXPECT_EQ(t.aggressor, static_cast<std::uint8_t>(ne::Side::kBuy));
  EXPECT_EQ(t.price, 250);
  EXPECT_EQ(t.qty, 3);
  EXPECT_EQ(t.instrument, 2u);
  EXPECT_GT(t.time_ns, 1'700'000'000'000'000'000ull) << "wall-clock ns";

  nx::TradeLedger again(f.path.string(), 77, *ring);
  EXPECT_EQ(again.next_trade_seq(), 11u);
  EXPECT_EQ(again.last_request_seq(), 10u);
  // A replay re-making requests 5..12: only 11 and 12 are new to the file.
  nx::TradeTap tap(*ring, again.next_trade_seq(), again.last_exec_seq());
  trade(tap, 5, 12);
  EXPECT_EQ(again.do_work(), 2);
  again.on_close();
  const nx::LedgerContents after = nx::read_trade_ledger(f.path.string());
  ASSERT_EQ(after.trades.size(), 12u);
  EXPECT_EQ(after.trades.back().request_seq, 12u);
}

TEST(TradeLedger, ShouldPutBackTheRestOfARequestsTradesWhenTheFileHoldsOnlySome) {
  // One request (7) sweeping three makers: three trades; a crash left only
  // the first in the file. The replay must put back the other two -- found
  // by test_accounts.py when the tap skipped by request instead of by report.
  const auto sweep = [](nx::TradeTap& tap) {
    for (ne::Seq k = 0; k < 3; ++k) {
      tap.on_report(fill(1, ne::Side::kBuy, false, 10 + 2 * k, 7, 1, 2));
      tap.on_report(fill(2 + static_cast<ne::ClientId>(k), ne::Side::kSell, true, 11 + 2 * k, 7, 1, 2));
    }
  };
  TempFile f;
  auto ring = std::make_unique<nx::LedgerRing>();
  {
    nx::TradeLedger ledger(f.path.string(), 9, *ring);
    nx::TradeTap tap(*ring, 1, 0);
    sweep(tap);
    EXPECT_EQ(ledger.do_work(), 3);
    ledger.on_close();
  }
  std::filesystem::resize_file(f.path, std::filesystem::file_size(f.path) - 2 * sizeof(nx::TradeRecord));
  nx::TradeLedger again(f.path.string(), 9, *ring);
  EXPECT_EQ(again.last_request_seq(), 7u);
  EXPECT_EQ(again.last_exec_seq(), 11u);
  nx::TradeTap tap(*ring, again.next_trade_seq(), again.last_exec_seq());
  sweep(tap);  // the replay makes the same reports again
  EXPECT_EQ(again.do_work(), 2);
  again.on_close();
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  ASSERT_EQ(c.trades.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.trades[i].trade_seq, i + 1);
    EXPECT_EQ(c.trades[i].sell_client, 2 + i);
  }
}

TEST(TradeLedger, ShouldCutATornTailAtOpenAndSayWhat) {
  TempFile f;
  auto ring = std::make_unique<nx::LedgerRing>();
  {
    nx::TradeLedger ledger(f.path.string(), 5, *ring);
    nx::TradeTap tap(*ring, 1, 0);
    trade(tap, 1, 4);
    (void)ledger.do_work();
    ledger.on_close();
  }
  const auto size = std::filesystem::file_size(f.path);
  std::filesystem::resize_file(f.path, size - 50);  // the last record half written
  EXPECT_NE(nx::read_trade_ledger(f.path.string()).problem.find("partial record"), std::string::npos);
  {
    nx::TradeLedger ledger(f.path.string(), 5, *ring);
    EXPECT_EQ(ledger.next_trade_seq(), 4u);
    EXPECT_EQ(ledger.cut_bytes(), 78u);
  }
  EXPECT_EQ(std::filesystem::file_size(f.path), 64u + 3 * 128u);
  // A flipped byte in the last record (3): nothing after it passes its CRC, a torn tail.
  {
    std::fstream io(f.path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(64 + 2 * 128 + 40);
    io.put('\x7f');
  }
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  EXPECT_EQ(c.trades.size(), 2u);
  EXPECT_EQ(c.damage, nx::LedgerDamage::kTornTail);
  EXPECT_NE(c.problem.find("record 3"), std::string::npos) << c.problem;
  nx::TradeLedger ledger(f.path.string(), 5, *ring);
  EXPECT_EQ(ledger.next_trade_seq(), 3u);
  EXPECT_EQ(ledger.cut_reason(), c.problem);
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Records 1..n written and closed.
void write_trades(const std::filesystem::path& path, ne::Seq n) {
  auto ring = std::make_unique<nx::LedgerRing>();
  nx::TradeLedger ledger(path.string(), 5, *ring);
  nx::TradeTap tap(*ring, 1, 0);
  trade(tap, 1, n);
  (void)ledger.do_work();
  ledger.on_close();
}

TEST(TradeLedger, ShouldRefuseDamageInTheMiddleAndChangeNothing) {
  TempFile f;
  write_trades(f.path, 7);
  // The repro: one byte flipped inside the 3rd record of 7.
  {
    std::fstream io(f.path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(64 + 2 * 128 + 40);
    io.put('\xff');
  }
  const std::string before = file_bytes(f.path);
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  EXPECT_EQ(c.damage, nx::LedgerDamage::kCorrupt);
  EXPECT_EQ(c.trades.size(), 2u);
  EXPECT_EQ(c.valid_after_break, 4u);  // records 4..7
  EXPECT_EQ(c.valid_after_min_seq, 4u);
  EXPECT_EQ(c.valid_after_max_seq, 7u);
  try {
    (void)nx::plan_trade_ledger(f.path.string(), 5);
    FAIL() << "a ledger damaged in the middle was accepted";
  } catch (const nx::LedgerError& e) {
    EXPECT_NE(std::string(e.what()).find("damaged in the middle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trade_seq 4..7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ledger repair"), std::string::npos) << e.what();
  }
  auto ring = std::make_unique<nx::LedgerRing>();
  EXPECT_THROW(nx::TradeLedger(f.path.string(), 5, *ring), nx::LedgerError);
  EXPECT_EQ(file_bytes(f.path), before) << "a refused open changed the file";

  // The operator's way on: a copy of everything, then the cut.
  const nx::LedgerRepair plan = nx::repair_trade_ledger(f.path.string(), true);
  EXPECT_EQ(plan.kept_trades, 2u);
  EXPECT_EQ(plan.removed_valid, 4u);
  EXPECT_EQ(file_bytes(f.path), before) << "a dry run changed the file";
  const nx::LedgerRepair done = nx::repair_trade_ledger(f.path.string(), false);
  EXPECT_EQ(file_bytes(done.backup_path), before);
  EXPECT_EQ(std::filesystem::file_size(f.path), 64u + 2 * 128u);
  EXPECT_EQ(nx::read_trade_ledger(f.path.string()).damage, nx::LedgerDamage::kNone);
  std::filesystem::remove_all(std::filesystem::path(done.backup_path).parent_path());
}

TEST(TradeLedger, ShouldWriteTheReplaysTradesOnlyWhenToldAndMakeItsFilePrivate) {
  TempFile f;
  const nx::LedgerPlan plan = nx::plan_trade_ledger(f.path.string(), 5);
  EXPECT_TRUE(plan.missing);
  EXPECT_FALSE(std::filesystem::exists(f.path)) << "planning made the file";
  auto ring = std::make_unique<nx::LedgerRing>();
  std::vector<nx::TradeRecord> replayed;
  nx::TradeTap tap(*ring, plan.next_trade_seq, plan.last_exec_seq);
  tap.collect_replay_into(&replayed);
  trade(tap, 1, 100'000);  // more than the ring holds: a replay must not wait for a writer that is not running
  EXPECT_EQ(replayed.size(), 100'000u);
  EXPECT_TRUE(ring->empty());
  tap.end_replay();
  {
    nx::TradeLedger ledger(plan, 5, *ring);
    ledger.write_recovered(replayed);
    trade(tap, 100'001, 100'002);  // live again: through the ring
    (void)ledger.do_work();
    ledger.on_close();
  }
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  ASSERT_EQ(c.trades.size(), 100'002u);
  for (std::size_t i = 0; i < c.trades.size(); ++i) ASSERT_EQ(c.trades[i].trade_seq, i + 1);
  const auto perms = std::filesystem::status(f.path).permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

TEST(TradeLedger, ShouldRefuseAnotherVenuesFileAndGarbage) {
  TempFile f;
  auto ring = std::make_unique<nx::LedgerRing>();
  { nx::TradeLedger ledger(f.path.string(), 5, *ring); }
  try {
    nx::TradeLedger other(f.path.string(), 6, *ring);
    FAIL() << "a ledger of another fingerprint was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another venue config"), std::string::npos) << e.what();
  }
  std::ofstream(f.path, std::ios::trunc) << std::string(200, 'x');
  EXPECT_THROW((void)nx::read_trade_ledger(f.path.string()), std::runtime_error);
  std::ofstream(f.path, std::ios::trunc) << "short";
  EXPECT_THROW((void)nx::read_trade_ledger(f.path.string()), std::runtime_error);
}

}  // namespace
