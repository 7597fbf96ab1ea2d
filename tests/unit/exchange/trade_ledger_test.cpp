// The trade ledger's file (exchange/trade_ledger.hpp) with real files: the
// tap pairs a taker's and a maker's fill into one record with both sides;
// the writer appends them with CRCs and reopens where it left off; a torn
// tail (a partial record, a record whose CRC fails) is cut at open and
// reported; a file of another venue config is refused; the reader names
// what is wrong; and the tap leaves out trades of requests the file already
// holds (a replay's), so none is recorded twice.
#include "exchange/trade_ledger.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "exchange/trade_tap.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;

namespace {

struct TempFile {
  TempFile()
      : path(std::filesystem::temp_directory_path() /
             ("nt-ledger-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".ledger")) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
  static inline int counter = 0;
};

ne::ExecReport fill(ne::ClientId client, ne::Side side, bool maker, ne::Seq seq, ne::Seq request, ne::Qty qty) {
  ne::ExecReport r{};
  r.type = ne::ReportType::kFill;
  r.client = client;
  r.side = side;
  r.is_maker = maker;
  r.seq = seq;
  r.request_seq = request;
  r.instrument = 2;
  r.order_id = 100 + seq;
  r.client_order_id = 1000 + seq;
  r.last_price = 250;
  r.last_qty = qty;
  return r;
}

// Trades of requests first..last (one each, taker client 1 buying from maker client 2) through a tap.
void trade(nx::TradeTap& tap, ne::Seq first, ne::Seq last) {
  for (ne::Seq rq = first; rq <= last; ++rq) {
    tap.on_report(fill(1, ne::Side::kBuy, false, 2 * rq, rq, 3));
    tap.on_report(fill(2, ne::Side::kSell, true, 2 * rq + 1, rq, 3));
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
      tap.on_report(fill(1, ne::Side::kBuy, false, 10 + 2 * k, 7, 1));
      tap.on_report(fill(2 + static_cast<ne::ClientId>(k), ne::Side::kSell, true, 11 + 2 * k, 7, 1));
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
  // A flipped byte in record 2: records 2 and 3 go.
  {
    std::fstream io(f.path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(64 + 128 + 40);
    io.put('\x7f');
  }
  const nx::LedgerContents c = nx::read_trade_ledger(f.path.string());
  EXPECT_EQ(c.trades.size(), 1u);
  EXPECT_NE(c.problem.find("record 2"), std::string::npos) << c.problem;
  nx::TradeLedger ledger(f.path.string(), 5, *ring);
  EXPECT_EQ(ledger.next_trade_seq(), 2u);
  EXPECT_EQ(ledger.cut_reason(), c.problem);
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
