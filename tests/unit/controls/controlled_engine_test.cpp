// The venue's controls one case at a time (docs/CONTROLS.md): each reject
// reason of the 400s from the smallest request that earns it, and the one
// just inside the limit that passes; settlement of both sides in the match's
// step; holds released by fills, cancels, modifies and IOC/FOK ends; market
// orders held at the band's end; negative prices; refusals numbered in the
// engine's own report stream; and no allocation while processing.
#include "controls/controlled_engine.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "reference/recording_sink.hpp"
#include "support/allocation_counter.hpp"
#include "support/small_instrument.hpp"

namespace nanotick::controls {
namespace {

using engine::ClientOrderId;
using engine::OrderType;
using engine::ReportType;
using engine::Side;
using RR = engine::RejectReason;

engine::EngineConfig venue() {
  engine::EngineConfig c;
  engine::InstrumentConfig neg = test::small_instrument("NEG");
  neg.min_price = -500;
  neg.max_price = 500;
  c.instruments = {test::small_instrument("A"), test::small_instrument("B"), neg};
  return c;
}

constexpr InstrumentId kA = 0, kB = 1, kNeg = 2;
constexpr ClientId kBuyer = 1, kSeller = 2, kNoAcct = 3;

ControlsConfig accounts() {
  ControlsConfig c;
  ClientLimits buyer;
  buyer.client = kBuyer;
  buyer.cash = 10'000;
  ClientLimits seller;
  seller.client = kSeller;
  seller.cash = 0;
  seller.positions = {{kA, 50}, {kNeg, 50}};
  c.clients = {buyer, seller};
  return c;
}

struct Venue {
  explicit Venue(ControlsConfig cfg = accounts()) : engine(venue(), cfg, sink) {}
  std::vector<engine::ExecReport> send(const engine::Request& rq) {
    sink.clear();
    engine.process(rq);
    return sink.reports;
  }
  std::vector<engine::ExecReport> buy(ClientId c, ClientOrderId id, Price px, Qty q, OrderType t = OrderType::kLimit,
                                      InstrumentId in = kA) {
    return send(engine::make_new(in, c, id, Side::kBuy, t, px, q));
  }
  std::vector<engine::ExecReport> sell(ClientId c, ClientOrderId id, Price px, Qty q, OrderType t = OrderType::kLimit,
                                       InstrumentId in = kA) {
    return send(engine::make_new(in, c, id, Side::kSell, t, px, q));
  }
  const Accounts::Account& acct(ClientId c) const { return *engine.accounts().find(c); }
  Money cash(ClientId c) const { return acct(c).cash; }
  Money held(ClientId c) const { return acct(c).reserved_cash; }
  Qty position(ClientId c, InstrumentId in = kA) const { return acct(c).holdings[in].position; }
  Qty held_sell(ClientId c, InstrumentId in = kA) const { return acct(c).holdings[in].reserved_sell; }

  reference::RecordingSink sink;
  ControlledEngine<reference::RecordingSink> engine;
};

RR reason_of(const std::vector<engine::ExecReport>& rs) { return rs.empty() ? RR::kNone : rs.front().reason; }

TEST(ControlledEngine, InsufficientCashCountsWhatWorkingOrdersHold) {
  Venue v;
  EXPECT_EQ(v.buy(kBuyer, 1, 100, 60).front().type, ReportType::kAccepted);  // holds 6,000
  EXPECT_TRUE(v.held(kBuyer) == 6'000);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 2, 100, 41)), RR::kInsufficientCash) << "4,100 > the 4,000 left";
  EXPECT_EQ(v.buy(kBuyer, 3, 100, 40).front().type, ReportType::kAccepted) << "exactly what is left";
  EXPECT_TRUE(v.held(kBuyer) == 10'000);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 4, 1, 1)), RR::kInsufficientCash);
  // A cancel frees its hold at once.
  (void)v.send(engine::make_cancel(kA, kBuyer, 1));
  EXPECT_TRUE(v.held(kBuyer) == 4'000);
  EXPECT_EQ(v.buy(kBuyer, 5, 100, 60).front().type, ReportType::kAccepted);
}

TEST(ControlledEngine, InsufficientPositionCountsWorkingSellsAndTheShortLimit) {
  ControlsConfig cfg = accounts();
  cfg.clients[1].short_limit = 10;
  Venue v(cfg);
  EXPECT_EQ(v.sell(kSeller, 1, 200, 40).front().type, ReportType::kAccepted);
  EXPECT_EQ(v.held_sell(kSeller), 40);
  EXPECT_EQ(reason_of(v.sell(kSeller, 2, 200, 21)), RR::kInsufficientPosition) << "50 - 40 + 10 = 20 left";
  EXPECT_EQ(v.sell(kSeller, 3, 200, 20).front().type, ReportType::kAccepted);
  EXPECT_EQ(reason_of(v.sell(kSeller, 4, 200, 1)), RR::kInsufficientPosition);
}

TEST(ControlledEngine, AFillSettlesBothSidesAtTheTradePriceAndReleasesTheHolds) {
  Venue v;
  (void)v.sell(kSeller, 1, 90, 10);
  const auto rs = v.buy(kBuyer, 1, 100, 10);  // trades at the maker's 90
  ASSERT_GE(rs.size(), 3u);
  EXPECT_TRUE(v.cash(kBuyer) == 10'000 - 900);
  EXPECT_TRUE(v.held(kBuyer) == 0) << "the buy held 1,000 at its limit, released whole";
  EXPECT_EQ(v.position(kBuyer), 10);
  EXPECT_TRUE(v.cash(kSeller) == 900);
  EXPECT_EQ(v.position(kSeller), 40);
  EXPECT_EQ(v.held_sell(kSeller), 0);
  EXPECT_EQ(v.acct(kBuyer).working_orders, 0u);
  EXPECT_EQ(v.acct(kSeller).working_orders, 0u);
}

TEST(ControlledEngine, APartialFillKeepsHoldingTheRest) {
  Venue v;
  (void)v.buy(kBuyer, 1, 100, 30);
  (void)v.sell(kSeller, 1, 100, 10);
  EXPECT_TRUE(v.held(kBuyer) == 2'000);
  EXPECT_TRUE(v.cash(kBuyer) == 9'000);
  EXPECT_EQ(v.acct(kBuyer).working_orders, 1u);
}

TEST(ControlledEngine, IocAndFokReleaseWhatTheyDidNotTrade) {
  Venue v;
  (void)v.sell(kSeller, 1, 100, 5);
  (void)v.buy(kBuyer, 1, 100, 20, OrderType::kIoc);
  EXPECT_TRUE(v.held(kBuyer) == 0);
  EXPECT_TRUE(v.cash(kBuyer) == 9'500);
  EXPECT_EQ(v.position(kBuyer), 5);
  (void)v.sell(kSeller, 2, 100, 5);
  (void)v.buy(kBuyer, 2, 100, 20, OrderType::kFok);  // unfillable: nothing trades
  EXPECT_TRUE(v.held(kBuyer) == 0);
  EXPECT_EQ(v.acct(kBuyer).working_orders, 0u);
}

TEST(ControlledEngine, AMarketBuyIsCheckedAtTheBandsTop) {
  Venue v;
  (void)v.sell(kSeller, 1, 10, 5);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 1, 0, 11, OrderType::kMarket)), RR::kInsufficientCash) << "11 x 1,000 > 10,000";
  const auto rs = v.buy(kBuyer, 2, 0, 10, OrderType::kMarket);
  EXPECT_EQ(rs.front().type, ReportType::kAccepted);
  EXPECT_TRUE(v.cash(kBuyer) == 10'000 - 50) << "traded 5 at 10";
  EXPECT_TRUE(v.held(kBuyer) == 0);
}

TEST(ControlledEngine, AModifyIsCheckedOnWhatItWouldAddAndMovesTheHold) {
  Venue v;
  (void)v.buy(kBuyer, 1, 100, 50);  // 5,000
  EXPECT_EQ(v.send(engine::make_modify(kA, kBuyer, 1, 100, 101)).front().reason, RR::kInsufficientCash)
      << "10,100 > 10,000";
  EXPECT_EQ(v.send(engine::make_modify(kA, kBuyer, 1, 200, 50)).front().type, ReportType::kModified)
      << "exactly 10,000";
  EXPECT_TRUE(v.held(kBuyer) == 10'000);
  EXPECT_EQ(v.send(engine::make_modify(kA, kBuyer, 1, 100, 20)).front().type, ReportType::kModified);
  EXPECT_TRUE(v.held(kBuyer) == 2'000) << "lowering a hold always passes and frees the difference";
}

TEST(ControlledEngine, NegativePricesHoldCashOnTheSellSide) {
  ControlsConfig cfg = accounts();
  cfg.clients[1].cash = 1'000;
  Venue w(cfg);
  EXPECT_EQ(reason_of(w.sell(kSeller, 1, -200, 6, OrderType::kLimit, kNeg)), RR::kInsufficientCash)
      << "selling at -200 pays 1,200";
  EXPECT_EQ(w.sell(kSeller, 2, -200, 5, OrderType::kLimit, kNeg).front().type, ReportType::kAccepted);
  EXPECT_TRUE(w.held(kSeller) == 1'000);
  (void)w.buy(kBuyer, 1, -200, 5, OrderType::kLimit, kNeg);  // a buy at a negative price holds nothing
  EXPECT_TRUE(w.cash(kSeller) == 0);
  EXPECT_TRUE(w.cash(kBuyer) == 11'000);
  EXPECT_TRUE(w.held(kSeller) == 0);
}

TEST(ControlledEngine, EachClientLimitRefusesJustBeyondItAndPassesAtIt) {
  ControlsConfig cfg = accounts();
  ClientLimits& b = cfg.clients[0];
  b.cash = 1'000'000;
  b.instruments = {kA};
  b.max_order_qty = 100;
  b.max_notional = 5'000;
  b.collar = 10;
  b.max_open_orders = 2;
  Venue v(cfg);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 1, 10, 1, OrderType::kLimit, kB)), RR::kInstrumentNotPermitted);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 2, 10, 101)), RR::kClientQuantityLimit);
  EXPECT_EQ(reason_of(v.buy(kBuyer, 3, 51, 100)), RR::kClientNotionalLimit) << "5,100 > 5,000";
  EXPECT_EQ(v.buy(kBuyer, 4, 50, 100).front().type, ReportType::kAccepted) << "5,000";
  // A trade at 60 sets the last trade the collar is around.
  (void)v.sell(kSeller, 1, 60, 1);
  (void)v.buy(kSeller + 10, 1, 60, 1);  // no account, not required: unchecked
  EXPECT_EQ(reason_of(v.buy(kBuyer, 5, 49, 1)), RR::kClientCollar) << "11 from 60";
  EXPECT_EQ(v.buy(kBuyer, 6, 50, 1).front().type, ReportType::kAccepted) << "10 from 60";
  EXPECT_EQ(reason_of(v.buy(kBuyer, 7, 55, 1)), RR::kTooManyOpenOrders) << "two working already";
  (void)v.send(engine::make_cancel(kA, kBuyer, 6));
  EXPECT_EQ(v.buy(kBuyer, 8, 55, 1).front().type, ReportType::kAccepted);
}

TEST(ControlledEngine, AccountsRequiredRefusesAClientWithoutOneButNotItsCancels) {
  ControlsConfig cfg = accounts();
  cfg.accounts_required = true;
  Venue v(cfg);
  EXPECT_EQ(reason_of(v.buy(kNoAcct, 1, 10, 1)), RR::kNoAccount);
  EXPECT_EQ(reason_of(v.send(engine::make_cancel(kA, kNoAcct, 1))), RR::kUnknownOrder) << "cancels reach the engine";
  Venue open;  // not required: unchecked
  EXPECT_EQ(open.buy(kNoAcct, 1, 10, 1'000'000 / 1'000).front().type, ReportType::kAccepted);
}

TEST(ControlledEngine, RefusalsAreNumberedInTheEnginesOwnReportStream) {
  Venue v;
  const auto a = v.buy(kBuyer, 1, 100, 1);
  const auto r = v.buy(kBuyer, 2, 100, 1'000);
  const auto c = v.buy(kBuyer, 3, 100, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type, ReportType::kRejected);
  EXPECT_EQ(r[0].seq, a.back().seq + 1);
  EXPECT_EQ(c.front().seq, r[0].seq + 1);
  EXPECT_EQ(r[0].request_seq, 2u);
  EXPECT_EQ(v.engine.refused(), 1u);
  EXPECT_EQ(v.send(engine::make_modify(kA, kBuyer, 1, 100, 100'000)).front().type, ReportType::kModifyRejected);
}

TEST(ControlledEngine, ProcessingDoesNotAllocate) {
  struct Counting {
    std::uint64_t reports = 0;
    void on_report(const engine::ExecReport&) noexcept { ++reports; }
  };
  Counting sink;
  ControlledEngine<Counting> e(venue(), accounts(), sink);
  const nanotick::test::AllocationScope scope;
  for (ClientOrderId i = 1; i <= 200; ++i) {
    e.process(engine::make_new(kA, kSeller, i, Side::kSell, OrderType::kLimit, 100, 1));
    e.process(engine::make_new(kA, kBuyer, i, Side::kBuy, OrderType::kLimit, 100, 1));
    e.process(engine::make_modify(kA, kBuyer, i, 90, 2));
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GT(sink.reports, 600u);
}

TEST(ControlledEngine, ProcessStagedTimesEachStageInsideTheStep) {
  Venue v;
  ASSERT_EQ(v.sell(kSeller, 1, 100, 5).front().type, ReportType::kAccepted);
  const core::TscClock& clock = core::TscClock::global();
  StageTicks t;
  t.ledger = 12345;  // zeroed first: nothing left from an earlier request
  v.sink.clear();
  const std::uint64_t before = clock.now();
  v.engine.process_staged(engine::make_new(kA, kBuyer, 1, Side::kBuy, OrderType::kLimit, 100, 5), clock, t);
  const std::uint64_t after = clock.now();
  // The same as process(): accepted, then both fills, settled.
  ASSERT_EQ(v.sink.reports.size(), 3u);
  EXPECT_EQ(v.position(kBuyer), 5);
  EXPECT_TRUE(v.cash(kBuyer) == 10'000 - 500);
  // No ledger here: only the exchange's tap times into it.
  EXPECT_EQ(t.ledger, 0u);
  EXPECT_GT(t.matching, 0u);
  EXPECT_GT(t.settlement, 0u) << "three reports settled, each timed";
  EXPECT_LE(t.pre_trade + t.matching + t.settlement, after - before) << "the stages are timed inside the step";

  // Once over, settlement is no longer timed: a later process() leaves `t` alone.
  const StageTicks kept = t;
  v.buy(kBuyer, 2, 100, 1);
  EXPECT_EQ(t.settlement, kept.settlement);
}

TEST(ControlledEngine, ABadConfigIsRefusedNamingTheClientAndField) {
  const auto error_of = [](ControlsConfig c) -> std::string {
    try {
      reference::RecordingSink s;
      ControlledEngine<reference::RecordingSink> e(venue(), c, s);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  ControlsConfig c = accounts();
  c.clients[0].cash = -1;
  EXPECT_EQ(error_of(c), "client 1: cash must be >= 0, got -1");
  c = accounts();
  c.clients[1].client = kBuyer;
  EXPECT_EQ(error_of(c), "client 1: has two accounts");
  c = accounts();
  c.clients[1].positions.push_back({7, 1});
  EXPECT_EQ(error_of(c), "client 2: position in unknown instrument 7");
  c = accounts();
  c.clients[1].positions = {{kA, -1}};
  EXPECT_EQ(error_of(c), "client 2: position -1 in instrument 0 is below -short_limit");
  c = accounts();
  c.clients[0].instruments = {9};
  EXPECT_EQ(error_of(c), "client 1: permission for unknown instrument 9");
}

}  // namespace
}  // namespace nanotick::controls
