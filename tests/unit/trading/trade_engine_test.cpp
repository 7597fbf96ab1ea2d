// TradeEngine with the market maker, liquidity taker and random strategies:
// a recording sender stands in for the order gateway (the real one is
// covered by order_entry_client_test and the integration tests); books are fed
// directly. Checks what goes out, the risk manager's place in the path,
// positions from fills, stale instruments, and tick-to-trade stamping.
#include "trading/trade_engine.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/order_replies.hpp"
#include "trading/strategies/liquidity_taker.hpp"
#include "trading/strategies/market_maker.hpp"
#include "trading/strategies/random_strategy.hpp"

namespace nt = nanotick::trading;
namespace ne = nanotick::market;
namespace np = nanotick::proto;
namespace nb = nanotick::book;

namespace {

using RecordingSender = nanotick::test::RecordingSender;
using Sent = nanotick::test::SentMessage;

ne::InstrumentTable venue() {
  ne::InstrumentTable c;
  for (const char* sym : {"AAA", "BBB"}) {
    ne::InstrumentConfig i;
    i.symbol = sym;
    i.tick_size = 5;
    i.min_price = 5;
    i.max_price = 100'000;
    i.max_orders = 1024;
    i.max_levels = 256;
    c.instruments.push_back(i);
  }
  return c;
}

std::vector<nb::InstrumentCapacity> capacities() { return {{1024, 256}, {1024, 256}}; }

template <typename Strategy>
struct Rig {
  explicit Rig(std::vector<nt::StrategyParams> params, Strategy s, nt::InstrumentRiskLimits limits = {})
      : caps(capacities()),
        books(caps),
        strategy(std::move(s)),
        engine(make_config(params, limits), strategy, sender, books) {}

  static typename nt::TradeEngine<Strategy, RecordingSender>::Config make_config(
      const std::vector<nt::StrategyParams>& params, nt::InstrumentRiskLimits limits) {
    typename nt::TradeEngine<Strategy, RecordingSender>::Config c;
    c.instruments = venue();
    nt::FeatureConfig f;
    f.trade_flow = true;
    f.trade_flow_alpha = 1.0;
    c.features = {f, f};
    c.risk = {limits, limits};
    // The throttle runs on the real clock, the random test on simulated time:
    // keep it out of the way (the risk manager's own tests cover it).
    c.global_risk.orders_per_second = 1'000'000;
    c.global_risk.burst = 100'000;
    c.global_risk.max_open_orders = 10'000;
    for (const auto& p : params) c.reference_prices.push_back(p.reference_price);
    return c;
  }
  void logon_and_go_live() {
    engine.on_logon(np::make_message<np::LogonAck>(1));
    engine.on_instrument_live(0, 0);
    engine.on_instrument_live(1, 0);
  }
  np::ExecutionReport report(const Sent& s, np::ExecType type, nt::Qty last_qty = 0, nt::Qty cum = 0) {
    auto r = np::make_message<np::ExecutionReport>(0);
    r.client_order_id = s.id;
    r.order_id = 1000 + s.id;
    r.instrument = s.instrument;
    r.ref_seq = s.seq;
    r.exec_type = type;
    r.side = static_cast<std::uint8_t>(s.side);
    r.price = s.price;
    r.order_qty = s.qty;
    r.last_price = s.price;
    r.last_qty = last_qty;
    r.cum_qty = cum;
    r.leaves_qty = s.qty - cum;
    return r;
  }

  std::vector<nb::InstrumentCapacity> caps;
  nb::BookReplica books;
  RecordingSender sender;
  Strategy strategy;
  nt::TradeEngine<Strategy, RecordingSender> engine;
};

std::vector<nt::StrategyParams> mm_params() {
  nt::StrategyParams p;
  p.reference_price = 10'000;
  p.market_maker.enabled = true;
  p.market_maker.quote_qty = 10;
  p.market_maker.half_spread_ticks = 2;
  p.market_maker.skew_ticks_per_unit = 0.1;
  nt::StrategyParams off = p;
  off.market_maker.enabled = false;
  return {p, off};
}

TEST(TradeEngineMarketMaker, QuotesAroundTheReferencePriceOfAnEmptyBook) {
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()));
  rig.logon_and_go_live();
  ASSERT_EQ(rig.sender.sent.size(), 2u);  // instrument 1 is not enabled
  EXPECT_EQ(rig.sender.sent[0].side, nt::Side::kBuy);
  EXPECT_EQ(rig.sender.sent[0].price, 10'000 - 2 * 5);
  EXPECT_EQ(rig.sender.sent[1].side, nt::Side::kSell);
  EXPECT_EQ(rig.sender.sent[1].price, 10'000 + 2 * 5);
  EXPECT_EQ(rig.engine.orders().exposure().open_orders(), 2u);
}

TEST(TradeEngineMarketMaker, FillUpdatesPositionAndSkewsTheNextQuoteDown) {
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()));
  rig.logon_and_go_live();
  const Sent bid = rig.sender.sent[0];
  rig.engine.on_execution_report(rig.report(bid, np::ExecType::kAccepted));
  rig.engine.on_execution_report(rig.report(bid, np::ExecType::kFill, 10, 10));  // bought 10 at 9990
  const nt::InstrumentPosition* p = rig.engine.positions().position(0);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->position, 10);
  // The bid finished: a new one goes out, 10 units x 0.1 tick lower = 1 tick.
  ASSERT_GE(rig.sender.sent.size(), 3u);
  const Sent& next = rig.sender.sent.back();
  EXPECT_EQ(next.type, np::MsgType::kNewOrder);
  EXPECT_EQ(next.side, nt::Side::kBuy);
  EXPECT_EQ(next.price, 10'000 - 2 * 5 - 5);
}

TEST(TradeEngineMarketMaker, RepricesWithAModifyWhenTheFairPriceMoves) {
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()));
  rig.logon_and_go_live();
  for (std::size_t k = 0; k < 2; ++k)
    rig.engine.on_execution_report(rig.report(rig.sender.sent[k], np::ExecType::kAccepted));
  // Someone else's two-sided book centred on 10'500 (mid): the quotes follow with modifies.
  ASSERT_EQ(rig.books.add(0, 1, nt::Side::kBuy, 10'495, 50), nb::BookResult::kOk);
  ASSERT_EQ(rig.books.add(0, 2, nt::Side::kSell, 10'505, 50), nb::BookResult::kOk);
  rig.engine.on_book_update(0, 123);
  ASSERT_EQ(rig.sender.sent.size(), 4u);
  EXPECT_EQ(rig.sender.sent[2].type, np::MsgType::kModifyOrder);
  EXPECT_EQ(rig.sender.sent[2].price, 10'490);
  EXPECT_EQ(rig.sender.sent[3].type, np::MsgType::kModifyOrder);
  EXPECT_EQ(rig.sender.sent[3].price, 10'510);
  // Both came from a market data packet: written -> tick-to-trade samples.
  rig.engine.on_order_written(rig.sender.sent[2].seq, 500);
  rig.engine.on_order_written(rig.sender.sent[3].seq, 600);
  EXPECT_EQ(rig.engine.tick_to_trade().count(), 2u);
  // The logon-time quotes were not caused by a packet: untimed.
  rig.engine.on_order_written(rig.sender.sent[0].seq, 700);
  EXPECT_EQ(rig.engine.counters().ticks_untimed.get(), 1u);
}

TEST(TradeEngineMarketMaker, StaleInstrumentCancelsQuotesAndRefusesNewOnes) {
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()));
  rig.logon_and_go_live();
  for (std::size_t k = 0; k < 2; ++k)
    rig.engine.on_execution_report(rig.report(rig.sender.sent[k], np::ExecType::kAccepted));
  rig.engine.on_instrument_stale(0);
  ASSERT_EQ(rig.sender.sent.size(), 4u);
  EXPECT_EQ(rig.sender.sent[2].type, np::MsgType::kCancelOrder);
  EXPECT_EQ(rig.sender.sent[3].type, np::MsgType::kCancelOrder);
  const nt::ActionResult r = rig.engine.place(nanotick::test::limit(nt::Side::kBuy, 10'000, 1));
  EXPECT_EQ(r.status, nt::ActionStatus::kInstrumentStale);
  EXPECT_FALSE(r.sent());
  EXPECT_EQ(r.id, 0u);
}

TEST(TradeEngineRisk, BlocksAnOrderOverTheLimitAndSendsNothing) {
  nt::InstrumentRiskLimits limits;
  limits.max_order_qty = 5;  // the market maker quotes 10
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()), limits);
  rig.logon_and_go_live();
  EXPECT_TRUE(rig.sender.sent.empty());
  EXPECT_EQ(rig.engine.risk().blocked(nt::RiskResult::kMaxOrderQty), 2u);
  EXPECT_EQ(rig.engine.counters().risk_blocks.get(), 2u);
  // The result says why.
  const nt::ActionResult r = rig.engine.place(nanotick::test::limit(nt::Side::kBuy, 10'000, 6));
  EXPECT_EQ(r.status, nt::ActionStatus::kBlockedByRisk);
  EXPECT_EQ(r.risk, nt::RiskResult::kMaxOrderQty);
  EXPECT_EQ(r.submit, nt::SubmitStatus::kSent) << "the order manager was not asked";
  EXPECT_EQ(r.id, 0u);
  EXPECT_TRUE(rig.sender.sent.empty());
  EXPECT_EQ(rig.engine.counters().risk_blocks.get(), 3u);
}

TEST(TradeEngineRisk, ResultsCarryTheOrderIdAndTheOrderManagersReason) {
  Rig<nt::MarketMaker> rig(mm_params(), nt::MarketMaker(mm_params()));
  rig.logon_and_go_live();
  // Instrument 1 has no market maker: orders placed there are the test's own.
  const nt::OrderRequest rq = nanotick::test::limit(nt::Side::kSell, 10'010, 3, 1);
  const nt::ActionResult placed = rig.engine.place(rq);
  ASSERT_TRUE(placed.sent());
  EXPECT_EQ(placed.risk, nt::RiskResult::kAllowed);
  EXPECT_EQ(placed.submit, nt::SubmitStatus::kSent);
  EXPECT_EQ(placed.id, rig.sender.sent.back().id);
  const nt::ActionResult early = rig.engine.modify(placed.id, 10'005, 3);
  EXPECT_EQ(early.status, nt::ActionStatus::kRefused);
  EXPECT_EQ(early.submit, nt::SubmitStatus::kRequestInFlight) << "not accepted yet";
  EXPECT_EQ(early.id, placed.id);
  rig.engine.on_execution_report(rig.report(rig.sender.sent.back(), np::ExecType::kAccepted));
  const nt::ActionResult moved = rig.engine.modify(placed.id, 10'005, 3);
  EXPECT_TRUE(moved.sent());
  EXPECT_EQ(rig.engine.orders().exposure().open_sell_qty(1), 3);
  EXPECT_EQ(rig.engine.orders().exposure().open_notional(1), 10'010 * 3) << "the larger version while in flight";
  const nt::ActionResult pending = rig.engine.modify(placed.id, 10'000, 3);
  EXPECT_EQ(pending.status, nt::ActionStatus::kBlockedByRisk);
  EXPECT_EQ(pending.risk, nt::RiskResult::kModifyPending);
  const nt::ActionResult gone = rig.engine.cancel(12345);
  EXPECT_EQ(gone.status, nt::ActionStatus::kRefused);
  EXPECT_EQ(gone.submit, nt::SubmitStatus::kUnknownOrder);
  EXPECT_TRUE(rig.engine.cancel(placed.id).sent());
  rig.sender.status = nanotick::client::SendStatus::kNotLoggedOn;
  const nt::ActionResult offline = rig.engine.place(rq);
  EXPECT_EQ(offline.status, nt::ActionStatus::kRefused);
  EXPECT_EQ(offline.submit, nt::SubmitStatus::kNotLoggedOn);
  EXPECT_EQ(offline.id, 0u) << "no order was placed";
  rig.engine.stop_trading();
  EXPECT_EQ(rig.engine.place(rq).status, nt::ActionStatus::kStopping);
}

TEST(TradeEngineTaker, FollowsAggressiveBuyingWithAnIocAtTheAsk) {
  nt::StrategyParams p;
  p.reference_price = 10'000;
  p.liquidity_taker.enabled = true;
  p.liquidity_taker.flow_threshold = 3.0;
  p.liquidity_taker.min_aggressive_ratio = 0.5;
  p.liquidity_taker.clip_qty = 2;
  std::vector<nt::StrategyParams> params{p, p};
  Rig<nt::LiquidityTaker> rig(params, nt::LiquidityTaker(params));
  rig.logon_and_go_live();
  ASSERT_EQ(rig.books.add(0, 1, nt::Side::kBuy, 9'995, 10), nb::BookResult::kOk);
  ASSERT_EQ(rig.books.add(0, 2, nt::Side::kSell, 10'005, 4), nb::BookResult::kOk);
  ASSERT_EQ(rig.books.add(0, 3, nt::Side::kSell, 10'010, 10), nb::BookResult::kOk);
  rig.engine.on_book_update(0, 1);
  EXPECT_TRUE(rig.sender.sent.empty());
  // A buyer takes the whole best ask (4 of 4): flow +4 >= 3, ratio 1 >= 0.5.
  rig.engine.on_trade(nt::TradeEvent{0, nt::Side::kBuy, 10'005, 4}, 2);
  ASSERT_EQ(rig.books.trade(0, 2, 10'005, 4), nb::BookResult::kOk);
  rig.engine.on_book_update(0, 2);
  ASSERT_EQ(rig.sender.sent.size(), 1u);
  EXPECT_EQ(rig.sender.sent[0].order_type, nt::OrderType::kIoc);
  EXPECT_EQ(rig.sender.sent[0].side, nt::Side::kBuy);
  EXPECT_EQ(rig.sender.sent[0].price, 10'010);
  EXPECT_EQ(rig.sender.sent[0].qty, 2);
}

TEST(TradeEngineRandom, SendsAtAboutItsRateWithItsMixAndTheSameSeedRepeats) {
  nt::StrategyParams p;
  p.reference_price = 10'000;
  p.random.enabled = true;
  p.random.orders_per_second = 1000.0;
  p.random.max_open_orders = 100'000;
  std::vector<nt::StrategyParams> params{p, p};
  nt::InstrumentRiskLimits limits;
  limits.max_open_orders = 1000;
  limits.max_position = 100'000;
  auto run = [&](std::uint64_t seed) {
    Rig<nt::RandomStrategy> rig(params, nt::RandomStrategy(params, seed), limits);
    rig.logon_and_go_live();
    // 1 s of simulated passes every 100 us; the "exchange" answers every
    // request at once: limit orders rest, IOCs find nothing, modifies and
    // cancels succeed.
    for (std::uint64_t t = 1; t <= 10'000; ++t) {
      const std::size_t before = rig.sender.sent.size();
      rig.engine.on_timer(t * 100'000);
      for (std::size_t k = before; k < rig.sender.sent.size(); ++k) {
        const Sent s = rig.sender.sent[k];
        if (s.type == np::MsgType::kNewOrder) {
          rig.engine.on_execution_report(rig.report(s, np::ExecType::kAccepted));
          if (s.order_type == nt::OrderType::kIoc)
            rig.engine.on_execution_report(rig.report(s, np::ExecType::kCancelled));
        } else if (s.type == np::MsgType::kCancelOrder) {
          rig.engine.on_execution_report(rig.report(s, np::ExecType::kCancelled));
        } else {
          rig.engine.on_execution_report(rig.report(s, np::ExecType::kModified));
        }
      }
    }
    return rig.sender.sent;
  };
  const auto a = run(7);
  const auto b = run(7);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k].price, b[k].price);
  // Two instruments x ~1000/s for 1 s.
  EXPECT_GT(a.size(), 700u);
  EXPECT_LT(a.size(), 2300u);
  std::size_t kinds[4] = {};
  for (const Sent& s : a) {
    if (s.type == np::MsgType::kCancelOrder) ++kinds[1];
    else if (s.type == np::MsgType::kModifyOrder) ++kinds[2];
    else if (s.order_type == nt::OrderType::kIoc) ++kinds[3];
    else ++kinds[0];
  }
  for (std::size_t k : kinds) EXPECT_GT(k, 0u);
  for (const Sent& s : a) {
    if (s.type == np::MsgType::kCancelOrder) continue;
    EXPECT_EQ(s.price % 5, 0);
    EXPECT_LE(std::abs(s.price - 10'000), 11 * 5);
    // A resting order stays on its own side of the fair price; an IOC crosses it.
    if (s.type == np::MsgType::kNewOrder && s.order_type == nt::OrderType::kLimit) {
      EXPECT_TRUE(s.side == nt::Side::kBuy ? s.price < 10'000 : s.price > 10'000);
    }
    if (s.type == np::MsgType::kNewOrder && s.order_type == nt::OrderType::kIoc) {
      EXPECT_TRUE(s.side == nt::Side::kBuy ? s.price >= 10'000 : s.price <= 10'000);
    }
  }
}

}  // namespace
