// Missed reports through the protocol (docs/PROTOCOL.md §1.8), venue side:
// a client's fills from a real trade ledger file as replayed
// ExecutionReports (ledger/report_replay.hpp), in exec_seq order, only the
// asking client's and only after its exec_seq; trades the engine made but
// the writer had not drained yet are served too; and the gateway's rules
// over loopback TCP -- a ReportsRequest only as the first message after the
// LogonAck (else SessionReject 9), once, answered by the reports and a
// ReportsReplayed.
#include "exchange/ledger/report_replay.hpp"

#include <unistd.h>

#include <filesystem>

#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "unit/exchange/gateway_fixture.hpp"
#include "unit/exchange/ledger_test_support.hpp"

namespace {

using namespace gateway_fixture;

using ledger_test::TempLedger;

// One trade through the engine thread's tap: the taker's fill (exec_seq
// `seq`), then the maker's (seq + 1).
void trade(nx::TradeTap& tap, ne::ClientId taker, ne::Side taker_side, ne::ClientId maker, ne::Seq seq) {
  const ne::Side maker_side = taker_side == ne::Side::kBuy ? ne::Side::kSell : ne::Side::kBuy;
  tap.on_report(ledger_test::fill(taker, taker_side, false, seq, seq, 5, 3));
  tap.on_report(ledger_test::fill(maker, maker_side, true, seq + 1, seq + 1, 5, 3));
}

// The replayer's answers to one request, run until its end.
std::vector<nx::ReplayAnswer> serve(nx::ReportReplayer& replayer, nx::ReplayRequestRing& requests,
                                    nx::ReplayAnswerRing& answers, std::uint32_t client, std::uint64_t after) {
  EXPECT_TRUE(requests.try_push(nx::ReplayRequest{7, 3, client, after}));
  std::vector<nx::ReplayAnswer> out;
  for (int i = 0; i < 10000 && (out.empty() || !out.back().end); ++i) {
    replayer.do_work();
    answers.drain([&](const nx::ReplayAnswer& a) { out.push_back(a); });
  }
  return out;
}

TEST(ReplayedFills, OnlyTheClientsSidesAfterTheGivenSeqInExecSeqOrder) {
  nx::TradeRecord t{};
  t.buy_client = 1;
  t.sell_client = 2;
  t.buy_exec_seq = 10;
  t.sell_exec_seq = 11;
  t.aggressor = static_cast<std::uint8_t>(ne::Side::kBuy);
  t.price = 250;
  t.qty = 5;
  t.buy_order_id = 41;
  t.buy_client_order_id = 51;
  np::ExecutionReport out[2];
  ASSERT_EQ(nx::replayed_fills(t, 1, 0, out), 1u);
  EXPECT_EQ(out[0].exec_seq, 10u);
  EXPECT_EQ(out[0].exec_type, np::ExecType::kFill);
  EXPECT_EQ(out[0].flags, np::kReportReplayed);
  EXPECT_EQ(out[0].side, static_cast<std::uint8_t>(ne::Side::kBuy));
  EXPECT_EQ(out[0].is_maker, 0);
  EXPECT_EQ(out[0].order_id, 41u);
  EXPECT_EQ(out[0].client_order_id, 51u);
  EXPECT_EQ(out[0].last_price, 250);
  EXPECT_EQ(out[0].last_qty, 5);
  EXPECT_EQ(out[0].cum_qty, 0);  // not in a ledger record (§1.8)
  ASSERT_EQ(nx::replayed_fills(t, 2, 0, out), 1u);
  EXPECT_EQ(out[0].is_maker, 1);
  EXPECT_EQ(nx::replayed_fills(t, 2, 11, out), 0u);
  EXPECT_EQ(nx::replayed_fills(t, 3, 0, out), 0u);
  // A trade with itself (sell side the taker): both, the lower exec_seq first.
  t.sell_client = 1;
  t.buy_exec_seq = 21;
  t.sell_exec_seq = 20;
  ASSERT_EQ(nx::replayed_fills(t, 1, 0, out), 2u);
  EXPECT_EQ(out[0].exec_seq, 20u);
  EXPECT_EQ(out[1].exec_seq, 21u);
  ASSERT_EQ(nx::replayed_fills(t, 1, 20, out), 1u);
  EXPECT_EQ(out[0].exec_seq, 21u);
}

TEST(ReportReplayer, ServesTheClientsFillsFromTheLedgerFileIncludingTradesNotYetWritten) {
  TempLedger file;
  auto ledger_ring = std::make_unique<nx::LedgerRing>();
  nx::TradeLedger ledger(file.path.string(), 42, *ledger_ring);
  nx::TradeTap tap(*ledger_ring, ledger.next_trade_seq(), ledger.last_exec_seq());
  trade(tap, 1, ne::Side::kBuy, 2, 2);   // exec 2 (client 1), 3 (client 2)
  trade(tap, 2, ne::Side::kBuy, 1, 4);   // exec 4 (client 2), 5 (client 1)
  ledger.do_work();                      // these two are in the file
  trade(tap, 1, ne::Side::kSell, 2, 6);  // exec 6 (client 1): still in the ring only
  ASSERT_EQ(ledger.trades_written(), 2u);

  auto requests = std::make_unique<nx::ReplayRequestRing>();
  auto answers = std::make_unique<nx::ReplayAnswerRing>();
  nx::ReportReplayer replayer(file.path.string(), &ledger, *requests, *answers);
  auto got = serve(replayer, *requests, *answers, 1, 0);
  ASSERT_EQ(got.size(), 4u);
  for (const auto& a : got) {
    EXPECT_EQ(a.session_index, 7u);
    EXPECT_EQ(a.generation, 3u);
  }
  EXPECT_EQ(got[0].report.exec_seq, 2u);
  EXPECT_EQ(got[1].report.exec_seq, 5u);
  EXPECT_EQ(got[1].report.is_maker, 1);
  EXPECT_EQ(got[2].report.exec_seq, 6u);
  EXPECT_EQ(got[2].report.side, static_cast<std::uint8_t>(ne::Side::kSell));
  ASSERT_TRUE(got[3].end);
  EXPECT_EQ(got[3].done.count, 3u);
  EXPECT_EQ(got[3].done.through_exec_seq, 7u);
  EXPECT_EQ(ledger.trades_written(), 3u);  // the replayer drained the ring first

  got = serve(replayer, *requests, *answers, 1, 5);  // after exec_seq 5: only 6
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].report.exec_seq, 6u);
  EXPECT_EQ(got[1].done.count, 1u);
  got = serve(replayer, *requests, *answers, 9, 0);  // a client without fills
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].done.count, 0u);
  EXPECT_EQ(got[0].done.through_exec_seq, 7u);
  EXPECT_EQ(replayer.requests_served(), 3u);
  EXPECT_EQ(replayer.reports_replayed(), 4u);
  EXPECT_EQ(replayer.read_failures(), 0u);
}

TEST(ReportReplayer, AReplayLongerThanTheAnswerRingWaitsForRoom) {
  TempLedger file;
  auto ledger_ring = std::make_unique<nx::LedgerRing>();
  nx::TradeLedger ledger(file.path.string(), 42, *ledger_ring);
  nx::TradeTap tap(*ledger_ring, ledger.next_trade_seq(), ledger.last_exec_seq());
  const std::size_t trades = nx::kReplayAnswerRingCapacity + 100;
  for (std::size_t i = 0; i < trades; ++i) trade(tap, 1, ne::Side::kBuy, 2, 2 + 2 * i);
  auto requests = std::make_unique<nx::ReplayRequestRing>();
  auto answers = std::make_unique<nx::ReplayAnswerRing>();
  nx::ReportReplayer replayer(file.path.string(), &ledger, *requests, *answers);
  ASSERT_TRUE(requests->try_push(nx::ReplayRequest{0, 0, 1, 0}));
  replayer.do_work();  // fills the answer ring and waits
  EXPECT_EQ(answers->size(), nx::kReplayAnswerRingCapacity);
  const auto got = serve(replayer, *requests, *answers, 2, 0);  // drains client 1's whole replay (first end)
  std::size_t first = 0;
  std::uint64_t last_seq = 0;
  for (const auto& a : got) {
    if (a.end) break;
    EXPECT_GT(a.report.exec_seq, last_seq);
    last_seq = a.report.exec_seq;
    ++first;
  }
  EXPECT_EQ(first, trades);
  EXPECT_EQ(got.back().done.count, trades);
}

// Over TCP through the gateway.
class ReplayFixture : public Fixture {
 protected:
  void SetUp() override {
    Fixture::SetUp();
    ledger_ring = std::make_unique<nx::LedgerRing>();
    ledger = std::make_unique<nx::TradeLedger>(file.path.string(), 42, *ledger_ring);
    tap = std::make_unique<nx::TradeTap>(*ledger_ring, ledger->next_trade_seq(), ledger->last_exec_seq());
    requests = std::make_unique<nx::ReplayRequestRing>();
    answers = std::make_unique<nx::ReplayAnswerRing>();
    replayer = std::make_unique<nx::ReportReplayer>(file.path.string(), ledger.get(), *requests, *answers);
    gateway->enable_report_replay(*requests, *answers);
  }
  // The test thread is the aux thread too: once the gateway passed the
  // request on, the replayer serves it whole (the answers fit its ring);
  // next() then reads them as the gateway sends them.
  void serve_replay() {
    ASSERT_TRUE(pump([&] { return !requests->empty(); }));
    while (replayer->do_work() != 0) {
    }
  }
  np::ReportsRequest reports_request(std::uint64_t after) {
    auto m = np::make_message<np::ReportsRequest>(0);
    m.after_exec_seq = after;
    return m;
  }
  TempLedger file;
  std::unique_ptr<nx::LedgerRing> ledger_ring;
  std::unique_ptr<nx::TradeLedger> ledger;
  std::unique_ptr<nx::TradeTap> tap;
  std::unique_ptr<nx::ReplayRequestRing> requests;
  std::unique_ptr<nx::ReplayAnswerRing> answers;
  std::unique_ptr<nx::ReportReplayer> replayer;
};

TEST_F(ReplayFixture, TheFirstMessageAfterLogonGetsTheMissedFillsThenReportsReplayed) {
  trade(*tap, 1, ne::Side::kBuy, 2, 2);
  trade(*tap, 2, ne::Side::kSell, 1, 4);
  Client c = connect();
  logged_on(c, 1, kKey1);
  send(c, reports_request(0));
  serve_replay();
  for (const std::uint64_t seq : {2u, 5u}) {
    auto m = next(c);
    ASSERT_TRUE(m);
    ASSERT_EQ(m->header.type, np::MsgType::kExecutionReport) << np::to_string(m->header.type);
    const auto r = m->as<np::ExecutionReport>();
    EXPECT_EQ(r.exec_seq, seq);
    EXPECT_EQ(r.flags, np::kReportReplayed);
    EXPECT_EQ(r.ref_seq, 0u);
  }
  auto end = next(c);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->header.type, np::MsgType::kReportsReplayed);
  EXPECT_EQ(end->as<np::ReportsReplayed>().count, 2u);
  EXPECT_EQ(end->as<np::ReportsReplayed>().through_exec_seq, 5u);
  // Once per session: a second one is not the first message any more.
  send(c, reports_request(0));
  expect_session_reject(c, np::SessionRejectReason::kReportsRequestNotFirst, 3, 4);
  EXPECT_EQ(gateway->counters().replay_requests.get(), 1u);
  EXPECT_EQ(gateway->counters().session_rejects[9].get(), 1u);
}

TEST_F(ReplayFixture, AReportsRequestAfterAnotherMessageIsRejectedAndTheSessionGoesOn) {
  Client c = connect();
  logged_on(c, 1, kKey1);
  send(c, np::make_message<np::Heartbeat>(0));
  send(c, reports_request(0));
  expect_session_reject(c, np::SessionRejectReason::kReportsRequestNotFirst, 3, 4);
  send(c, new_order(1));
  ASSERT_TRUE(pump([&] { return ring->size() == 1; }));
  EXPECT_EQ(replayer->do_work(), 0);  // nothing was passed on
}

TEST_F(ReplayFixture, AnswersForAConnectionThatEndedAreDropped) {
  trade(*tap, 1, ne::Side::kBuy, 2, 2);
  {
    Client c = connect();
    logged_on(c, 1, kKey1);
    send(c, reports_request(0));
    ASSERT_TRUE(pump([&] { return requests->size() == 1; }));
  }  // closed before the replayer ran
  ASSERT_TRUE(pump([&] { return gateway->open_connections() == 0; }));
  replayer->do_work();
  ASSERT_TRUE(pump([&] { return answers->empty(); }));
  EXPECT_EQ(gateway->counters().replay_answers_dropped.get(), 2u);
}

TEST_F(Fixture, WithoutAReplayerAReportsRequestIsAnsweredWithNothingReplayed) {
  Client c = connect();
  logged_on(c, 2, kKey2);
  auto m = np::make_message<np::ReportsRequest>(0);
  m.after_exec_seq = 12;
  send(c, m);
  const auto end = next_of(c, np::MsgType::kReportsReplayed);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->as<np::ReportsReplayed>().count, 0u);
  EXPECT_EQ(end->as<np::ReportsReplayed>().through_exec_seq, 12u);
}

}  // namespace
