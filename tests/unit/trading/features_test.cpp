// FeatureEngine: touch, mid, spread, microprice and mid fair price, top-N
// imbalance, fair price volatility and trade flow EWMAs, aggressive trade
// ratio, all on hand-computed books; switched-off features reading NaN;
// config validation; the hinted update (one changed level) giving exactly
// the full recompute's values over a random event stream; no allocation on
// the update paths.
#include "trading/features.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "book/instrument_book.hpp"
#include "support/allocation_counter.hpp"

namespace nt = nanotick::trading;
namespace nb = nanotick::book;

namespace {

constexpr nt::Side kBuy = nt::Side::kBuy;
constexpr nt::Side kSell = nt::Side::kSell;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A book plus the next order id; add() asserts the book took the order.
struct Book {
  nb::InstrumentBook book{256, 64};
  nt::OrderId next_id = 1;

  nt::OrderId add(nt::Side side, nt::Price price, nt::Qty qty) {
    const nt::OrderId id = next_id++;
    EXPECT_EQ(book.add(id, side, price, qty), nb::BookResult::kOk);
    return id;
  }
};

nt::FeatureConfig all_features() {
  nt::FeatureConfig c;
  c.imbalance = true;
  c.volatility = true;
  c.trade_flow = true;
  return c;
}

nt::TradeEvent trade(nt::Side aggressor, nt::Price price, nt::Qty qty) {
  nt::TradeEvent t;
  t.aggressor = aggressor;
  t.price = price;
  t.qty = qty;
  return t;
}

// NaN-aware exact comparison of two feature sets.
void expect_same(const nt::FeatureValues& a, const nt::FeatureValues& b) {
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  EXPECT_EQ(a.has_bid, b.has_bid);
  EXPECT_EQ(a.has_ask, b.has_ask);
  EXPECT_EQ(a.bid_price, b.bid_price);
  EXPECT_EQ(a.bid_qty, b.bid_qty);
  EXPECT_EQ(a.ask_price, b.ask_price);
  EXPECT_EQ(a.ask_qty, b.ask_qty);
  EXPECT_TRUE(same(a.mid, b.mid)) << a.mid << " vs " << b.mid;
  EXPECT_TRUE(same(a.spread, b.spread));
  EXPECT_TRUE(same(a.fair_price, b.fair_price));
  EXPECT_TRUE(same(a.imbalance, b.imbalance)) << a.imbalance << " vs " << b.imbalance;
  EXPECT_TRUE(same(a.volatility, b.volatility)) << a.volatility << " vs " << b.volatility;
}

TEST(FeatureEngine, ShouldReadNaNOnAnEmptyBook) {
  Book b;
  nt::FeatureEngine fe(all_features());
  fe.on_book_update(b.book);
  const nt::FeatureValues& v = fe.values();
  EXPECT_FALSE(v.has_bid);
  EXPECT_FALSE(v.has_ask);
  EXPECT_TRUE(std::isnan(v.mid));
  EXPECT_TRUE(std::isnan(v.spread));
  EXPECT_TRUE(std::isnan(v.fair_price));
  EXPECT_TRUE(std::isnan(v.imbalance));
  EXPECT_TRUE(std::isnan(v.volatility));
  EXPECT_TRUE(std::isnan(v.aggressive_ratio));
  EXPECT_EQ(v.trade_flow, 0.0);  // enabled, no trade yet
  EXPECT_EQ(v.book_updates, 1u);
}

TEST(FeatureEngine, ShouldComputeTouchMidSpreadAndMicroprice) {
  Book b;
  b.add(kBuy, 100, 10);
  b.add(kBuy, 100, 20);
  b.add(kBuy, 99, 50);
  b.add(kSell, 104, 10);
  b.add(kSell, 105, 70);
  nt::FeatureEngine fe(nt::FeatureConfig{});
  fe.on_book_update(b.book);
  const nt::FeatureValues& v = fe.values();
  EXPECT_TRUE(v.has_bid && v.has_ask);
  EXPECT_EQ(v.bid_price, 100);
  EXPECT_EQ(v.bid_qty, 30);
  EXPECT_EQ(v.ask_price, 104);
  EXPECT_EQ(v.ask_qty, 10);
  EXPECT_EQ(v.mid, 102.0);
  EXPECT_EQ(v.spread, 4.0);
  // (100 x 10 + 104 x 30) / 40: the bid is heavier, so the fair price leans to the ask.
  EXPECT_DOUBLE_EQ(v.fair_price, 103.0);
}

TEST(FeatureEngine, ShouldUseTheMidAsFairPriceWhenConfigured) {
  Book b;
  b.add(kBuy, 100, 30);
  b.add(kSell, 103, 10);
  nt::FeatureConfig c;
  c.fair_price_kind = nt::FairPriceKind::kMid;
  nt::FeatureEngine fe(c);
  fe.on_book_update(b.book);
  EXPECT_EQ(fe.values().fair_price, 101.5);
}

TEST(FeatureEngine, ShouldHaveNoFairPriceWithOneSideEmptyButKeepTheOtherSidesTouch) {
  Book b;
  const nt::OrderId ask = b.add(kSell, 104, 10);
  b.add(kBuy, 100, 30);
  nt::FeatureEngine fe(nt::FeatureConfig{});
  fe.on_book_update(b.book);
  EXPECT_FALSE(std::isnan(fe.values().fair_price));
  ASSERT_EQ(b.book.remove(ask), nb::BookResult::kOk);
  fe.on_book_update(b.book, kSell, 104);
  const nt::FeatureValues& v = fe.values();
  EXPECT_TRUE(v.has_bid);
  EXPECT_FALSE(v.has_ask);
  EXPECT_EQ(v.ask_qty, 0);
  EXPECT_EQ(v.bid_price, 100);
  EXPECT_TRUE(std::isnan(v.fair_price));
  EXPECT_TRUE(std::isnan(v.mid));
  EXPECT_TRUE(std::isnan(v.spread));
}

TEST(FeatureEngine, ShouldComputeTheImbalanceOverTheTopNLevels) {
  Book b;
  b.add(kBuy, 100, 10);
  b.add(kBuy, 99, 20);
  b.add(kBuy, 98, 30);
  b.add(kBuy, 97, 1000);
  b.add(kSell, 101, 5);
  b.add(kSell, 102, 5);
  b.add(kSell, 103, 40);
  b.add(kSell, 104, 1000);
  nt::FeatureConfig c;
  c.imbalance = true;
  c.imbalance_levels = 3;
  nt::FeatureEngine top3(c);
  top3.on_book_update(b.book);
  EXPECT_DOUBLE_EQ(top3.values().imbalance, (60.0 - 50.0) / 110.0);
  c.imbalance_levels = 1;
  nt::FeatureEngine top1(c);
  top1.on_book_update(b.book);
  EXPECT_DOUBLE_EQ(top1.values().imbalance, (10.0 - 5.0) / 15.0);
  c.imbalance_levels = 10;  // more than the book has: all levels
  nt::FeatureEngine top10(c);
  top10.on_book_update(b.book);
  EXPECT_DOUBLE_EQ(top10.values().imbalance, (1060.0 - 1050.0) / 2110.0);
}

TEST(FeatureEngine, ShouldSkipChangesBehindTheNthLevelAndPickUpALevelMovingIntoTheTopN) {
  Book b;
  b.add(kBuy, 100, 10);
  const nt::OrderId at99 = b.add(kBuy, 99, 20);
  b.add(kBuy, 98, 30);
  b.add(kBuy, 97, 1000);
  b.add(kSell, 101, 50);
  nt::FeatureConfig c;
  c.imbalance = true;
  c.imbalance_levels = 3;
  nt::FeatureEngine fe(c);
  fe.on_book_update(b.book);
  EXPECT_DOUBLE_EQ(fe.values().imbalance, (60.0 - 50.0) / 110.0);
  b.add(kBuy, 96, 7);  // behind the 3rd level (98): the top 3 are unchanged
  fe.on_book_update(b.book, kBuy, 96);
  EXPECT_DOUBLE_EQ(fe.values().imbalance, (60.0 - 50.0) / 110.0);
  ASSERT_EQ(b.book.remove(at99), nb::BookResult::kOk);  // 97 moves into the top 3
  fe.on_book_update(b.book, kBuy, 99);
  EXPECT_DOUBLE_EQ(fe.values().imbalance, (1040.0 - 50.0) / 1090.0);
  b.add(kBuy, 97, 3);  // at the new 3rd level: counted
  fe.on_book_update(b.book, kBuy, 97);
  EXPECT_DOUBLE_EQ(fe.values().imbalance, (1043.0 - 50.0) / 1093.0);
}

TEST(FeatureEngine, ShouldTakeAVolatilitySampleOnlyWhenTheFairPriceMoves) {
  Book b;
  const nt::OrderId bid100 = b.add(kBuy, 100, 10);
  const nt::OrderId ask102 = b.add(kSell, 102, 10);
  nt::FeatureConfig c;
  c.fair_price_kind = nt::FairPriceKind::kMid;
  c.volatility = true;
  c.volatility_alpha = 0.5;
  nt::FeatureEngine fe(c);
  fe.on_book_update(b.book);  // fair 101: no previous fair, no sample
  EXPECT_TRUE(std::isnan(fe.values().volatility));
  b.add(kBuy, 100, 5);  // queue change, the mid stays at 101: no sample
  fe.on_book_update(b.book, kBuy, 100);
  EXPECT_TRUE(std::isnan(fe.values().volatility));
  b.add(kSell, 99 + 5, 1);  // deep ask: nothing moves
  fe.on_book_update(b.book, kSell, 104);
  EXPECT_TRUE(std::isnan(fe.values().volatility));
  b.add(kBuy, 102 - 1, 1);  // bid 101: mid 101.5, change 0.5 -> variance 0.25 (first sample seeds)
  fe.on_book_update(b.book, kBuy, 101);
  EXPECT_DOUBLE_EQ(fe.values().volatility, 0.5);
  ASSERT_EQ(b.book.remove(ask102), nb::BookResult::kOk);  // ask 104: mid 102.5, change 1
  fe.on_book_update(b.book, kSell, 102);
  EXPECT_DOUBLE_EQ(fe.values().volatility, std::sqrt(0.25 + 0.5 * (1.0 - 0.25)));  // sqrt(0.625)
  // A gap (no bid at all) restarts the chain: no sample across it.
  for (nt::OrderId id : {bid100, nt::OrderId{3}, nt::OrderId{5}}) ASSERT_EQ(b.book.remove(id), nb::BookResult::kOk);
  fe.on_book_update(b.book, kBuy, 100);
  EXPECT_TRUE(std::isnan(fe.values().fair_price));
  EXPECT_DOUBLE_EQ(fe.values().volatility, std::sqrt(0.625));
  b.add(kBuy, 90, 1);  // mid 97, 5.5 away from the last fair price: not a sample
  fe.on_book_update(b.book, kBuy, 90);
  EXPECT_DOUBLE_EQ(fe.values().volatility, std::sqrt(0.625));
  b.add(kBuy, 92, 1);  // mid 98: change 1 -> 0.625 + 0.5 x (1 - 0.625)
  fe.on_book_update(b.book, kBuy, 92);
  EXPECT_DOUBLE_EQ(fe.values().volatility, std::sqrt(0.8125));
}

TEST(FeatureEngine, ShouldMeasureTheAggressiveRatioAgainstTheTouchBeforeTheTrade) {
  Book b;
  const nt::OrderId bid = b.add(kBuy, 100, 30);
  const nt::OrderId ask = b.add(kSell, 101, 40);
  nt::FeatureEngine fe(nt::FeatureConfig{});
  fe.on_book_update(b.book);
  // A buy aggressor takes 10 of the 40 at the ask: trade first, then the book change.
  ASSERT_TRUE(fe.on_trade(trade(kBuy, 101, 10)));
  EXPECT_DOUBLE_EQ(fe.values().aggressive_ratio, 0.25);
  ASSERT_EQ(b.book.trade(ask, 101, 10), nb::BookResult::kOk);
  fe.on_book_update(b.book, kSell, 101);
  // A sell aggressor clears the whole bid.
  ASSERT_TRUE(fe.on_trade(trade(kSell, 100, 30)));
  EXPECT_DOUBLE_EQ(fe.values().aggressive_ratio, 1.0);
  ASSERT_EQ(b.book.trade(bid, 100, 30), nb::BookResult::kOk);
  fe.on_book_update(b.book, kBuy, 100);
  // No bid left to hit: no ratio.
  ASSERT_TRUE(fe.on_trade(trade(kSell, 100, 1)));
  EXPECT_TRUE(std::isnan(fe.values().aggressive_ratio));
  EXPECT_EQ(fe.values().trades, 3u);
  EXPECT_EQ(fe.values().last_trade_price, 100);
  EXPECT_EQ(fe.values().last_trade_qty, 1);
  EXPECT_EQ(fe.values().last_aggressor, kSell);
}

TEST(FeatureEngine, ShouldTrackTradeFlowAsAnEwmaOfSignedAggressorVolume) {
  nt::FeatureConfig c;
  c.trade_flow = true;
  c.trade_flow_alpha = 0.5;
  nt::FeatureEngine fe(c);
  ASSERT_TRUE(fe.on_trade(trade(kBuy, 100, 10)));
  EXPECT_DOUBLE_EQ(fe.values().trade_flow, 5.0);  // 0 + 0.5 x (10 - 0)
  ASSERT_TRUE(fe.on_trade(trade(kSell, 100, 4)));
  EXPECT_DOUBLE_EQ(fe.values().trade_flow, 0.5);  // 5 + 0.5 x (-4 - 5)
  ASSERT_TRUE(fe.on_trade(trade(kSell, 99, 7)));
  EXPECT_DOUBLE_EQ(fe.values().trade_flow, -3.25);  // 0.5 + 0.5 x (-7 - 0.5)
}

TEST(FeatureEngine, ShouldRefuseAnInvalidTradeAndChangeNothing) {
  nt::FeatureConfig c;
  c.trade_flow = true;
  nt::FeatureEngine fe(c);
  EXPECT_FALSE(fe.on_trade(trade(static_cast<nt::Side>(0), 100, 1)));
  EXPECT_FALSE(fe.on_trade(trade(kBuy, 100, 0)));
  EXPECT_FALSE(fe.on_trade(trade(kBuy, 100, -3)));
  EXPECT_EQ(fe.values().trades, 0u);
  EXPECT_EQ(fe.values().trade_flow, 0.0);
}

TEST(FeatureEngine, ShouldReadNaNForFeaturesThatAreSwitchedOff) {
  Book b;
  b.add(kBuy, 100, 10);
  b.add(kSell, 102, 10);
  nt::FeatureConfig c;
  c.mid = false;
  c.spread = false;
  c.fair_price = false;
  c.aggressive_ratio = false;
  nt::FeatureEngine fe(c);
  fe.on_book_update(b.book);
  ASSERT_TRUE(fe.on_trade(trade(kBuy, 102, 5)));
  const nt::FeatureValues& v = fe.values();
  EXPECT_EQ(v.bid_price, 100);  // the touch is always kept
  for (double x : {v.mid, v.spread, v.fair_price, v.imbalance, v.volatility, v.trade_flow, v.aggressive_ratio})
    EXPECT_TRUE(std::isnan(x));
}

TEST(FeatureEngine, ShouldRejectInvalidConfigsNamingTheField) {
  auto message_of = [](const nt::FeatureConfig& c) -> std::string {
    try {
      nt::FeatureEngine fe(c);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  nt::FeatureConfig c;
  c.imbalance_levels = 0;
  EXPECT_NE(message_of(c).find("imbalance_levels"), std::string::npos);
  c = {};
  c.imbalance_levels = nt::FeatureConfig::kMaxImbalanceLevels + 1;
  EXPECT_NE(message_of(c).find("imbalance_levels"), std::string::npos);
  for (double bad : {0.0, -0.1, 1.5, kNaN}) {
    c = {};
    c.volatility_alpha = bad;
    EXPECT_NE(message_of(c).find("volatility_alpha"), std::string::npos) << bad;
    c = {};
    c.trade_flow_alpha = bad;
    EXPECT_NE(message_of(c).find("trade_flow_alpha"), std::string::npos) << bad;
  }
  c = {};
  c.volatility = true;
  c.fair_price = false;
  EXPECT_NE(message_of(c).find("enable fair_price"), std::string::npos);
  c = {};
  c.fair_price_kind = static_cast<nt::FairPriceKind>(7);
  EXPECT_NE(message_of(c).find("fair_price_kind"), std::string::npos);
  c = {};
  c.volatility_alpha = 1.0;  // the bounds themselves are valid
  c.imbalance_levels = nt::FeatureConfig::kMaxImbalanceLevels;
  EXPECT_EQ(message_of(c), "");
}

TEST(FeatureEngine, ShouldForgetEverythingOnReset) {
  Book b;
  b.add(kBuy, 100, 10);
  b.add(kSell, 102, 10);
  nt::FeatureEngine fe(all_features());
  fe.on_book_update(b.book);
  ASSERT_TRUE(fe.on_trade(trade(kBuy, 102, 5)));
  fe.reset();
  const nt::FeatureValues& v = fe.values();
  EXPECT_FALSE(v.has_bid);
  EXPECT_TRUE(std::isnan(v.fair_price));
  EXPECT_TRUE(std::isnan(v.aggressive_ratio));
  EXPECT_EQ(v.trade_flow, 0.0);
  EXPECT_EQ(v.trades, 0u);
  EXPECT_EQ(v.book_updates, 0u);
  fe.on_book_update(b.book);
  EXPECT_DOUBLE_EQ(fe.values().fair_price, 101.0);
}

// Two engines see the same random event stream, one with the changed level
// as a hint and one recomputing everything; after every event both match,
// and the imbalance matches a direct sum over the book's levels.
TEST(FeatureEngine, ShouldGiveTheSameValuesWithHintsAsWithFullRecomputesOnRandomEvents) {
  for (std::uint32_t levels : {1u, 2u, 3u, 5u}) {
    nt::FeatureConfig c = all_features();
    c.imbalance_levels = levels;
    nt::FeatureEngine hinted(c);
    nt::FeatureEngine full(c);
    Book b;
    std::vector<nt::OrderId> live;
    std::mt19937_64 rng(levels * 7919u);
    std::uniform_int_distribution<int> offset_d(1, 12);
    std::uniform_int_distribution<int> qty_d(1, 9);
    for (int i = 0; i < 4000; ++i) {
      const int op = static_cast<int>(rng() % 4);
      nt::Side side = kBuy;
      nt::Price price = 0;
      if (op == 0 || live.empty() || live.size() < 20) {
        side = (rng() & 1) != 0 ? kBuy : kSell;
        // Bids at or below 100, asks above: the book never crosses.
        price = side == kBuy ? 101 - offset_d(rng) : 100 + offset_d(rng);
        if (b.book.order_count() == b.book.max_orders()) continue;
        const nt::OrderId id = b.next_id++;
        if (b.book.add(id, side, price, qty_d(rng)) != nb::BookResult::kOk) continue;  // level capacity
        live.push_back(id);
      } else {
        const std::size_t at = rng() % live.size();
        const nt::OrderId id = live[at];
        const nb::RestingOrder o = *b.book.find(id);
        side = o.side;
        price = o.price;
        if (op == 1 && o.qty > 1) {
          ASSERT_EQ(b.book.modify(id, o.qty - 1), nb::BookResult::kOk);
        } else if (op == 2) {
          ASSERT_EQ(b.book.trade(id, o.price, o.qty), nb::BookResult::kOk);
          live[at] = live.back();
          live.pop_back();
        } else {
          ASSERT_EQ(b.book.remove(id), nb::BookResult::kOk);
          live[at] = live.back();
          live.pop_back();
        }
      }
      hinted.on_book_update(b.book, side, price);
      full.on_book_update(b.book);
      expect_same(hinted.values(), full.values());
      double bids = 0;
      double asks = 0;
      std::uint32_t n = 0;
      b.book.for_each_level(kBuy, [&](const nanotick::market::LevelView& l) {
        if (n++ < levels) bids += static_cast<double>(l.qty);
      });
      n = 0;
      b.book.for_each_level(kSell, [&](const nanotick::market::LevelView& l) {
        if (n++ < levels) asks += static_cast<double>(l.qty);
      });
      const double want = bids + asks > 0 ? (bids - asks) / (bids + asks) : kNaN;
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(hinted.values().imbalance));
      } else {
        ASSERT_DOUBLE_EQ(hinted.values().imbalance, want) << "event " << i << ", " << levels << " levels";
      }
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_FALSE(std::isnan(hinted.values().volatility));
  }
}

TEST(FeatureEngine, ShouldNotAllocateOnBookUpdatesAndTrades) {
  Book b;
  for (int i = 0; i < 8; ++i) {
    b.add(kBuy, 100 - i, 10 + i);
    b.add(kSell, 101 + i, 10 + i);
  }
  nt::FeatureConfig c = all_features();
  c.imbalance_levels = 4;
  nt::FeatureEngine fe(c);
  const nanotick::test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    const nt::OrderId id = b.next_id++;
    const nt::Side side = i % 2 == 0 ? kBuy : kSell;
    const nt::Price price = side == kBuy ? 100 - i % 6 : 101 + i % 6;
    (void)b.book.add(id, side, price, 1 + i % 4);
    fe.on_book_update(b.book, side, price);
    (void)fe.on_trade(trade(side, price, 1));
    (void)b.book.remove(id);
    fe.on_book_update(b.book, side, price);
  }
  fe.on_book_update(b.book);
  fe.reset();
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
