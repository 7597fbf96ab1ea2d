// BookReplica / InstrumentBook: the feed's events (add, modify, delete, trade)
// and their effect on levels, best prices and priority order; every
// inconsistent event refused with its own result, counted, and leaving the
// book unchanged; capacity limits; clear and snapshot load; no allocation
// once built.
#include "book/book_replica.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "support/allocation_counter.hpp"

namespace nb = nanotick::book;
namespace ne = nanotick::market;

namespace {

constexpr ne::Side kBuy = ne::Side::kBuy;
constexpr ne::Side kSell = ne::Side::kSell;
constexpr nb::BookResult kOk = nb::BookResult::kOk;

nb::BookReplica make_replica(std::uint32_t instruments = 2, std::uint32_t max_orders = 16,
                             std::uint32_t max_levels = 4) {
  const std::vector<nb::InstrumentCapacity> caps(instruments, nb::InstrumentCapacity{max_orders, max_levels});
  return nb::BookReplica(caps);
}

using Row = std::tuple<ne::OrderId, ne::Side, ne::Price, ne::Qty>;

std::vector<Row> orders_of(const nb::BookReplica& r, ne::InstrumentId inst) {
  std::vector<Row> out;
  r.for_each_order(inst, [&](const nb::RestingOrder& o) { out.emplace_back(o.order_id, o.side, o.price, o.qty); });
  return out;
}

using LevelRow = std::tuple<ne::Price, ne::Qty, std::uint32_t>;

std::vector<LevelRow> levels_of(const nb::BookReplica& r, ne::InstrumentId inst, ne::Side side) {
  std::vector<LevelRow> out;
  r.instrument(inst)->for_each_level(side, [&](const ne::LevelView& l) { out.emplace_back(l.price, l.qty, l.orders); });
  return out;
}

TEST(BookReplica, ShouldIterateBidsBestFirstThenAsksBestFirstFifoWithinALevel) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 5), kOk);
  ASSERT_EQ(r.add(0, 2, kBuy, 101, 6), kOk);
  ASSERT_EQ(r.add(0, 3, kBuy, 100, 7), kOk);
  ASSERT_EQ(r.add(0, 4, kSell, 105, 8), kOk);
  ASSERT_EQ(r.add(0, 5, kSell, 103, 9), kOk);
  ASSERT_EQ(r.add(0, 6, kSell, 105, 1), kOk);
  const std::vector<Row> want{{2, kBuy, 101, 6},  {1, kBuy, 100, 5},  {3, kBuy, 100, 7},
                              {5, kSell, 103, 9}, {4, kSell, 105, 8}, {6, kSell, 105, 1}};
  EXPECT_EQ(orders_of(r, 0), want);
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{101, 6, 1}, {100, 12, 2}}));
  EXPECT_EQ(levels_of(r, 0, kSell), (std::vector<LevelRow>{{103, 9, 1}, {105, 9, 2}}));
  ASSERT_TRUE(r.best(0, kBuy).has_value());
  EXPECT_EQ(r.best(0, kBuy)->price, 101);
  EXPECT_EQ(r.best(0, kSell)->price, 103);
  EXPECT_EQ(r.best(0, kSell)->qty, 9);
  EXPECT_EQ(r.order_count(0), 6u);
  EXPECT_EQ(r.order_count(1), 0u);
  EXPECT_TRUE(orders_of(r, 1).empty()) << "instruments are independent";
  EXPECT_EQ(r.applied(), 6u);
}

TEST(BookReplica, ShouldWalkOnlyTheBestLevelsWhenAskedForTheTop) {
  nb::BookReplica r = make_replica(1, 16, 4);
  for (ne::OrderId id = 1; id <= 4; ++id) ASSERT_EQ(r.add(0, id, kBuy, 100 + static_cast<ne::Price>(id), 1), kOk);
  std::vector<ne::Price> seen;
  r.instrument(0)->for_each_top_level(kBuy, 2, [&](const ne::LevelView& l) { seen.push_back(l.price); });
  EXPECT_EQ(seen, (std::vector<ne::Price>{104, 103}));
  seen.clear();
  r.instrument(0)->for_each_top_level(kSell, 2, [&](const ne::LevelView& l) { seen.push_back(l.price); });
  EXPECT_TRUE(seen.empty());
  r.instrument(0)->for_each_top_level(kBuy, 10, [&](const ne::LevelView& l) { seen.push_back(l.price); });
  EXPECT_EQ(seen.size(), 4u);  // fewer levels than asked: all of them
}

TEST(BookReplica, ShouldReduceInPlaceOnModifyKeepingPriority) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 5), kOk);
  ASSERT_EQ(r.add(0, 2, kBuy, 100, 6), kOk);
  ASSERT_EQ(r.modify(0, 1, 2), kOk);
  EXPECT_EQ(orders_of(r, 0), (std::vector<Row>{{1, kBuy, 100, 2}, {2, kBuy, 100, 6}}));
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{100, 8, 2}}));
}

TEST(BookReplica, ShouldRemoveOnDeleteAndDropEmptyLevels) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 1, kSell, 100, 5), kOk);
  ASSERT_EQ(r.add(0, 2, kSell, 101, 6), kOk);
  ASSERT_EQ(r.add(0, 3, kSell, 100, 7), kOk);
  ASSERT_EQ(r.remove(0, 1), kOk);
  EXPECT_EQ(levels_of(r, 0, kSell), (std::vector<LevelRow>{{100, 7, 1}, {101, 6, 1}}));
  ASSERT_EQ(r.remove(0, 3), kOk);
  EXPECT_EQ(r.best(0, kSell)->price, 101) << "the best level emptied: the next one is best";
  ASSERT_EQ(r.remove(0, 2), kOk);
  EXPECT_FALSE(r.best(0, kSell).has_value());
  EXPECT_EQ(r.instrument(0)->level_count(kSell), 0u);
  EXPECT_EQ(r.instrument(0)->find(2), nullptr);
}

TEST(BookReplica, ShouldReduceTheMakerOnTradeAndRemoveItAtZero) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 5), kOk);
  ASSERT_EQ(r.add(0, 2, kBuy, 100, 6), kOk);
  ASSERT_EQ(r.trade(0, 1, 100, 3), kOk);
  EXPECT_EQ(r.instrument(0)->find(1)->qty, 2);
  EXPECT_EQ(r.best(0, kBuy)->qty, 8);
  ASSERT_EQ(r.trade(0, 1, 100, 2), kOk);
  EXPECT_EQ(r.instrument(0)->find(1), nullptr);
  EXPECT_EQ(orders_of(r, 0), (std::vector<Row>{{2, kBuy, 100, 6}}));
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{100, 6, 1}}));
}

TEST(BookReplica, ShouldRefuseEachInconsistentEventWithItsResultAndChangeNothing) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 5), kOk);
  ASSERT_EQ(r.add(0, 2, kSell, 102, 4), kOk);
  const std::vector<Row> before = orders_of(r, 0);
  struct Case {
    nb::BookResult got;
    nb::BookResult want;
  };
  const std::vector<Case> cases{
      {r.add(7, 3, kBuy, 100, 1), nb::BookResult::kUnknownInstrument},
      {r.add(0, 3, static_cast<ne::Side>(0), 100, 1), nb::BookResult::kBadSide},
      {r.add(0, 3, static_cast<ne::Side>(3), 100, 1), nb::BookResult::kBadSide},
      {r.add(0, 3, kBuy, 100, 0), nb::BookResult::kBadQty},
      {r.add(0, 3, kBuy, 100, -1), nb::BookResult::kBadQty},
      {r.add(0, 1, kSell, 103, 1), nb::BookResult::kDuplicateOrder},
      {r.modify(0, 9, 1), nb::BookResult::kUnknownOrder},
      {r.modify(0, 1, 0), nb::BookResult::kBadQty},
      {r.modify(0, 1, 5), nb::BookResult::kNotAReduction},
      {r.modify(0, 1, 6), nb::BookResult::kNotAReduction},
      {r.modify(1, 1, 2), nb::BookResult::kUnknownOrder},  // order 1 rests in instrument 0, not 1
      {r.remove(0, 9), nb::BookResult::kUnknownOrder},
      {r.remove(7, 1), nb::BookResult::kUnknownInstrument},
      {r.trade(0, 9, 100, 1), nb::BookResult::kUnknownOrder},
      {r.trade(0, 1, 100, 0), nb::BookResult::kBadQty},
      {r.trade(0, 1, 101, 1), nb::BookResult::kTradePriceMismatch},
      {r.trade(0, 1, 100, 6), nb::BookResult::kTradeExceedsOrder},
      {r.modify(9, 1, 2), nb::BookResult::kUnknownInstrument},
      {r.trade(9, 1, 100, 1), nb::BookResult::kUnknownInstrument},
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(cases[i].got, cases[i].want) << "case " << i << ": got " << nb::to_string(cases[i].got);
  EXPECT_EQ(orders_of(r, 0), before);
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{100, 5, 1}}));
  EXPECT_EQ(levels_of(r, 0, kSell), (std::vector<LevelRow>{{102, 4, 1}}));
  EXPECT_EQ(r.applied(), 2u);
  EXPECT_EQ(r.rejected_total(), cases.size());
  EXPECT_EQ(r.rejected(nb::BookResult::kBadSide), 2u);
  EXPECT_EQ(r.rejected(nb::BookResult::kNotAReduction), 2u);
  EXPECT_EQ(r.rejected(nb::BookResult::kUnknownInstrument), 4u);
  EXPECT_EQ(r.rejected(nb::BookResult::kUnknownOrder), 4u);
}

TEST(BookReplica, ShouldRefuseOrdersBeyondCapacityAndAcceptAgainOnceFreed) {
  nb::BookReplica r = make_replica(1, 3, 2);
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 1), kOk);
  ASSERT_EQ(r.add(0, 2, kBuy, 101, 1), kOk);
  EXPECT_EQ(r.add(0, 3, kBuy, 102, 1), nb::BookResult::kLevelCapacity) << "a third bid level";
  ASSERT_EQ(r.add(0, 3, kSell, 102, 1), kOk) << "levels are counted per side";
  EXPECT_EQ(r.add(0, 4, kBuy, 100, 1), nb::BookResult::kOrderCapacity);
  EXPECT_EQ(r.order_count(0), 3u);
  EXPECT_EQ(r.instrument(0)->find(4), nullptr);
  ASSERT_EQ(r.remove(0, 2), kOk);
  ASSERT_EQ(r.add(0, 4, kBuy, 99, 1), kOk) << "the freed order and level are reused";
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{100, 1, 1}, {99, 1, 1}}));
}

TEST(BookReplica, ShouldHandleExtremePricesWithoutOverflow) {
  nb::BookReplica r = make_replica(1, 8, 4);
  constexpr ne::Price kMin = std::numeric_limits<ne::Price>::min();
  constexpr ne::Price kMax = std::numeric_limits<ne::Price>::max();
  ASSERT_EQ(r.add(0, 1, kSell, kMin, 1), kOk);
  ASSERT_EQ(r.add(0, 2, kSell, kMax, 1), kOk);
  ASSERT_EQ(r.add(0, 3, kSell, 0, 1), kOk);
  ASSERT_EQ(r.add(0, 4, kBuy, kMin, 1), kOk);
  ASSERT_EQ(r.add(0, 5, kBuy, kMax, 1), kOk);
  EXPECT_EQ(levels_of(r, 0, kSell), (std::vector<LevelRow>{{kMin, 1, 1}, {0, 1, 1}, {kMax, 1, 1}}));
  EXPECT_EQ(levels_of(r, 0, kBuy), (std::vector<LevelRow>{{kMax, 1, 1}, {kMin, 1, 1}}));
}

TEST(BookReplica, ShouldClearOneInstrumentAndReuseItsCapacity) {
  nb::BookReplica r = make_replica(2, 2, 2);
  ASSERT_EQ(r.add(0, 1, kBuy, 100, 1), kOk);
  ASSERT_EQ(r.add(0, 2, kSell, 101, 1), kOk);
  ASSERT_EQ(r.add(1, 3, kBuy, 100, 1), kOk);
  ASSERT_EQ(r.clear(0), kOk);
  EXPECT_EQ(r.order_count(0), 0u);
  EXPECT_FALSE(r.best(0, kBuy).has_value());
  EXPECT_FALSE(r.best(0, kSell).has_value());
  EXPECT_EQ(r.remove(0, 1), nb::BookResult::kUnknownOrder);
  EXPECT_EQ(orders_of(r, 1), (std::vector<Row>{{3, kBuy, 100, 1}})) << "the other instrument is untouched";
  ASSERT_EQ(r.add(0, 1, kBuy, 90, 2), kOk) << "the id is free again";
  ASSERT_EQ(r.add(0, 5, kBuy, 91, 2), kOk) << "all capacity is back";
  EXPECT_EQ(r.clear(5), nb::BookResult::kUnknownInstrument);
}

TEST(BookReplica, ShouldLoadASnapshotInPriorityOrder) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 99, kBuy, 50, 1), kOk);
  const std::vector<nb::RestingOrder> snap{
      {7, 101, 2, kBuy}, {3, 101, 4, kBuy}, {5, 100, 1, kBuy}, {4, 103, 6, kSell}, {8, 103, 2, kSell}};
  ASSERT_EQ(r.load(0, snap), kOk);
  EXPECT_EQ(orders_of(r, 0),
            (std::vector<Row>{
                {7, kBuy, 101, 2}, {3, kBuy, 101, 4}, {5, kBuy, 100, 1}, {4, kSell, 103, 6}, {8, kSell, 103, 2}}));
  EXPECT_EQ(r.instrument(0)->find(99), nullptr) << "the previous book is replaced";
  EXPECT_EQ(r.applied(), 1u + snap.size());
}

TEST(BookReplica, ShouldLeaveTheBookEmptyWhenASnapshotIsInconsistent) {
  nb::BookReplica r = make_replica();
  ASSERT_EQ(r.add(0, 99, kBuy, 50, 1), kOk);
  const std::vector<nb::RestingOrder> snap{{7, 101, 2, kBuy}, {7, 102, 4, kSell}};
  EXPECT_EQ(r.load(0, snap), nb::BookResult::kDuplicateOrder);
  EXPECT_EQ(r.order_count(0), 0u);
  EXPECT_FALSE(r.best(0, kBuy).has_value());
  EXPECT_EQ(r.rejected(nb::BookResult::kDuplicateOrder), 1u);
  ASSERT_EQ(r.add(0, 7, kSell, 102, 4), kOk) << "nothing of the refused snapshot lingers";
}

TEST(BookReplica, ShouldDeriveCapacitiesFromTheEngineConfig) {
  ne::InstrumentTable cfg;
  cfg.instruments.resize(2);
  cfg.instruments[1].max_orders = 7;
  cfg.instruments[1].max_levels = 3;
  const std::vector<nb::InstrumentCapacity> caps = nb::capacities_of(cfg);
  nb::BookReplica r(caps);
  ASSERT_EQ(r.instrument_count(), 2u);
  EXPECT_EQ(r.instrument(1)->max_orders(), 7u);
  EXPECT_EQ(r.instrument(1)->max_levels(), 3u);
  EXPECT_EQ(r.instrument(2), nullptr);
}

TEST(BookReplica, ShouldRejectAnEmptyTableAndZeroCapacitiesNamingTheInstrument) {
  EXPECT_THROW(nb::BookReplica(std::vector<nb::InstrumentCapacity>{}), std::invalid_argument);
  try {
    nb::BookReplica r(std::vector<nb::InstrumentCapacity>{{4, 4}, {0, 4}});
    FAIL() << "a zero max_orders was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("instrument 1"), std::string::npos) << what;
    EXPECT_NE(what.find("max_orders"), std::string::npos) << what;
  }
  try {
    nb::BookReplica r(std::vector<nb::InstrumentCapacity>{{4, 0}});
    FAIL() << "a zero max_levels was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_levels"), std::string::npos) << e.what();
  }
}

TEST(BookReplica, ShouldNotAllocateOnceBuilt) {
  nb::BookReplica r = make_replica(2, 64, 16);
  nanotick::test::AllocationScope scope;
  for (int round = 0; round < 3; ++round) {
    for (ne::OrderId id = 1; id <= 40; ++id)
      ASSERT_EQ(r.add(0, id, id % 2 ? kBuy : kSell, 100 + static_cast<ne::Price>(id % 12), 10), kOk);
    for (ne::OrderId id = 1; id <= 40; id += 3) ASSERT_EQ(r.modify(0, id, 4), kOk);
    for (ne::OrderId id = 2; id <= 40; id += 3)
      ASSERT_EQ(r.trade(0, id, 100 + static_cast<ne::Price>(id % 12), 10), kOk);
    (void)r.add(0, 1, kBuy, 1, 1);  // refused: duplicate
    ASSERT_EQ(r.clear(0), kOk);
  }
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
