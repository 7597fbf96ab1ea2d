// PositionKeeper: average-cost position, realised and unrealised PnL through
// partial fills and position flips (values computed by hand in the
// comments), the rounding of a partial close carried into the remaining
// cost, totals over instruments, marks, every refused fill counted and
// leaving the state unchanged, a randomized cash-flow identity, and no
// allocation once built.
#include "trading/position_keeper.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/allocation_counter.hpp"

namespace nt = nanotick::trading;

namespace {

constexpr nt::Side kBuy = nt::Side::kBuy;
constexpr nt::Side kSell = nt::Side::kSell;

nt::FillEvent fill(nt::InstrumentId inst, nt::Side side, nt::Price price, nt::Qty qty) {
  nt::FillEvent f;
  f.instrument = inst;
  f.side = side;
  f.price = price;
  f.qty = qty;
  return f;
}

void apply(nt::PositionKeeper& k, nt::InstrumentId inst, nt::Side side, nt::Price price, nt::Qty qty) {
  ASSERT_EQ(k.on_fill(fill(inst, side, price, qty)), nt::FillResult::kOk);
}

TEST(PositionKeeper, ShouldRefuseZeroInstruments) { EXPECT_THROW(nt::PositionKeeper(0), std::invalid_argument); }

TEST(PositionKeeper, ShouldStartFlatWithNoMark) {
  const nt::PositionKeeper k(2);
  const nt::InstrumentPosition& p = *k.position(1);
  EXPECT_EQ(p.position, 0);
  EXPECT_EQ(p.open_cost, 0);
  EXPECT_EQ(p.realised, 0);
  EXPECT_EQ(p.unrealised, 0.0);
  EXPECT_TRUE(std::isnan(p.mark));
  EXPECT_TRUE(std::isnan(p.average_open_price()));
  EXPECT_EQ(k.position(2), nullptr);
  EXPECT_EQ(k.net(2), 0);
  EXPECT_EQ(k.total_pnl(), 0.0);
}

TEST(PositionKeeper, ShouldOpenFromFlatAtTheFillPriceAndMarkToItUntilAMarkArrives) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 10);
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, 10);
  EXPECT_EQ(p.open_cost, 1000);
  EXPECT_DOUBLE_EQ(p.average_open_price(), 100.0);
  EXPECT_EQ(p.realised, 0);
  EXPECT_EQ(p.mark, 100.0);
  EXPECT_EQ(p.unrealised, 0.0);
  EXPECT_EQ(p.volume, 10);
  EXPECT_EQ(p.fills, 1u);
  // A second fill before any mark moves the mark to its price: 10 @ 100 + 10 @ 102, marked at 102.
  apply(k, 0, kBuy, 102, 10);
  EXPECT_EQ(p.mark, 102.0);
  EXPECT_DOUBLE_EQ(p.unrealised, 20.0 * 102 - 2020);  // 20
  // Once marked, fills no longer move the mark.
  ASSERT_TRUE(k.mark(0, 101.5));
  apply(k, 0, kBuy, 90, 1);
  EXPECT_EQ(p.mark, 101.5);
  EXPECT_DOUBLE_EQ(p.unrealised, 21 * 101.5 - 2110);  // 21.5
}

TEST(PositionKeeper, ShouldAverageTheOpenPriceOverFillsOnTheSameSide) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 10);
  apply(k, 0, kBuy, 104, 30);
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, 40);
  EXPECT_EQ(p.open_cost, 4120);  // 1000 + 3120
  EXPECT_DOUBLE_EQ(p.average_open_price(), 103.0);
  EXPECT_EQ(p.realised, 0);
  EXPECT_EQ(p.volume, 40);
}

TEST(PositionKeeper, ShouldRealiseAPartialCloseAgainstTheAveragePrice) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 10);
  apply(k, 0, kBuy, 104, 30);  // 40 @ 103
  apply(k, 0, kSell, 110, 10);  // closes 10: +7 each
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, 30);
  EXPECT_EQ(p.realised, 70);
  EXPECT_EQ(p.open_cost, 3090);  // 30 @ 103: the average is unchanged by a close
  EXPECT_DOUBLE_EQ(p.average_open_price(), 103.0);
  ASSERT_TRUE(k.mark(0, 105.0));
  EXPECT_DOUBLE_EQ(p.unrealised, 60.0);  // 30 x (105 - 103)
  EXPECT_DOUBLE_EQ(p.pnl(), 130.0);
  EXPECT_EQ(p.volume, 50);
}

TEST(PositionKeeper, ShouldCloseAShortWithBuysAndRealiseTheDifference) {
  nt::PositionKeeper k(1);
  apply(k, 0, kSell, 100, 4);  // -4 @ 100, cost -400
  apply(k, 0, kBuy, 98, 1);    // +2
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, -3);
  EXPECT_EQ(p.open_cost, -300);
  EXPECT_DOUBLE_EQ(p.average_open_price(), 100.0);
  EXPECT_EQ(p.realised, 2);
  ASSERT_TRUE(k.mark(0, 101.0));
  EXPECT_DOUBLE_EQ(p.unrealised, -3.0);  // -3 x 101 + 300
}

TEST(PositionKeeper, ShouldFlipLongToShortInOneFillClosingAtTheFillPriceAndOpeningTheRestThere) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 5);
  apply(k, 0, kSell, 90, 8);  // closes 5 at 90 (-10 each), opens -3 @ 90
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, -3);
  EXPECT_EQ(p.realised, -50);
  EXPECT_EQ(p.open_cost, -270);
  EXPECT_DOUBLE_EQ(p.average_open_price(), 90.0);
  ASSERT_TRUE(k.mark(0, 92.0));
  EXPECT_DOUBLE_EQ(p.unrealised, -6.0);  // -3 x 92 + 270
  apply(k, 0, kBuy, 95, 3);               // closes the short: 3 x (90 - 95)
  EXPECT_EQ(p.position, 0);
  EXPECT_EQ(p.realised, -65);
  EXPECT_EQ(p.open_cost, 0);
  EXPECT_EQ(p.unrealised, 0.0);
  EXPECT_EQ(p.volume, 16);
  EXPECT_EQ(p.fills, 3u);
}

TEST(PositionKeeper, ShouldFlipShortToLongInOneFill) {
  nt::PositionKeeper k(1);
  apply(k, 0, kSell, 50, 4);
  apply(k, 0, kBuy, 45, 10);  // closes -4 at 45 (+5 each), opens +6 @ 45
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, 6);
  EXPECT_EQ(p.realised, 20);
  EXPECT_EQ(p.open_cost, 270);
  EXPECT_DOUBLE_EQ(p.average_open_price(), 45.0);
}

TEST(PositionKeeper, ShouldGiveTheSameResultForAnOrderFilledInPartsAsForOneFill) {
  nt::PositionKeeper parts(1);
  nt::PositionKeeper whole(1);
  apply(parts, 0, kBuy, 100, 6);
  apply(whole, 0, kBuy, 100, 6);
  // A sell of 10 at 103 that flips, in three partial fills: 3 + 3 + 4.
  apply(parts, 0, kSell, 103, 3);
  EXPECT_EQ(parts.position(0)->realised, 9);
  apply(parts, 0, kSell, 103, 3);
  EXPECT_EQ(parts.position(0)->realised, 18);
  EXPECT_EQ(parts.position(0)->position, 0);
  apply(parts, 0, kSell, 103, 4);
  apply(whole, 0, kSell, 103, 10);
  for (const nt::PositionKeeper* k : {&parts, &whole}) {
    EXPECT_EQ(k->position(0)->position, -4);
    EXPECT_EQ(k->position(0)->realised, 18);
    EXPECT_EQ(k->position(0)->open_cost, -412);
  }
}

TEST(PositionKeeper, ShouldCarryThePartialCloseRoundingInTheOpenCostSoARoundTripIsExact) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 3);
  apply(k, 0, kBuy, 101, 1);  // 4 @ 100.25, cost 401
  const nt::InstrumentPosition& p = *k.position(0);
  apply(k, 0, kSell, 102, 1);  // closes 401 x 1/4 = 100.25 -> 100: realised 2 (exactly 1.75)
  EXPECT_EQ(p.realised, 2);
  EXPECT_EQ(p.open_cost, 301);
  apply(k, 0, kSell, 102, 1);  // 301 / 3 = 100.33 -> 100: realised 2 more
  EXPECT_EQ(p.realised, 4);
  EXPECT_EQ(p.open_cost, 201);
  apply(k, 0, kSell, 99, 2);  // closes the rest: 198 - 201
  EXPECT_EQ(p.realised, 1);   // cash: 102 + 102 + 198 - 401
  EXPECT_EQ(p.open_cost, 0);
}

TEST(PositionKeeper, ShouldRoundHalvesAwayFromZeroOnBothSides) {
  nt::PositionKeeper k(2);
  apply(k, 0, kBuy, 100, 1);
  apply(k, 0, kBuy, 101, 1);   // cost 201
  apply(k, 0, kSell, 101, 1);  // 100.5 -> 101 closed: realised 0
  EXPECT_EQ(k.position(0)->realised, 0);
  EXPECT_EQ(k.position(0)->open_cost, 100);
  apply(k, 1, kSell, 100, 1);
  apply(k, 1, kSell, 101, 1);  // cost -201
  apply(k, 1, kBuy, 100, 1);   // -100.5 -> -101 closed: realised 101 - 100
  EXPECT_EQ(k.position(1)->realised, 1);
  EXPECT_EQ(k.position(1)->open_cost, -100);
  apply(k, 1, kBuy, 100, 1);
  EXPECT_EQ(k.position(1)->realised, 1);  // cash: 201 - 200
}

TEST(PositionKeeper, ShouldHandleNegativePrices) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, -10, 2);
  EXPECT_DOUBLE_EQ(k.position(0)->average_open_price(), -10.0);
  apply(k, 0, kSell, -5, 2);
  EXPECT_EQ(k.position(0)->realised, 10);
}

TEST(PositionKeeper, ShouldKeepTotalsOverInstrumentsAndZeroTheUnrealisedTotalWhenFlat) {
  nt::PositionKeeper k(3);
  apply(k, 0, kBuy, 100, 10);
  apply(k, 2, kSell, 50, 4);
  ASSERT_TRUE(k.mark(0, 100.1));
  ASSERT_TRUE(k.mark(2, 49.7));
  EXPECT_NEAR(k.total_unrealised(), 10 * 0.1 + 4 * 0.3, 1e-9);
  apply(k, 0, kSell, 103, 10);  // +30
  apply(k, 2, kBuy, 52, 4);     // -8
  EXPECT_EQ(k.total_realised(), 22);
  EXPECT_EQ(k.total_unrealised(), 0.0);  // exactly: every instrument is flat
  EXPECT_EQ(k.total_pnl(), 22.0);
  EXPECT_EQ(k.total_volume(), 28);
  EXPECT_EQ(k.total_fills(), 4u);
  EXPECT_EQ(k.position(1)->fills, 0u);
}

TEST(PositionKeeper, ShouldRefuseAMarkForAnUnknownInstrumentOrANonFinitePriceKeepingTheOldOne) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 2);
  ASSERT_TRUE(k.mark(0, 101.0));
  EXPECT_FALSE(k.mark(1, 101.0));
  EXPECT_FALSE(k.mark(0, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(k.mark(0, std::numeric_limits<double>::infinity()));
  EXPECT_EQ(k.position(0)->mark, 101.0);
  EXPECT_DOUBLE_EQ(k.position(0)->unrealised, 2.0);
  EXPECT_DOUBLE_EQ(k.total_unrealised(), 2.0);
}

TEST(PositionKeeper, ShouldRefuseBadFillsCountingThemAndChangingNothing) {
  nt::PositionKeeper k(1);
  apply(k, 0, kBuy, 100, 1);
  EXPECT_EQ(k.on_fill(fill(1, kBuy, 100, 1)), nt::FillResult::kUnknownInstrument);
  EXPECT_EQ(k.on_fill(fill(0, static_cast<nt::Side>(3), 100, 1)), nt::FillResult::kBadSide);
  EXPECT_EQ(k.on_fill(fill(0, kBuy, 100, 0)), nt::FillResult::kBadQty);
  EXPECT_EQ(k.on_fill(fill(0, kSell, 100, -5)), nt::FillResult::kBadQty);
  constexpr nt::Price kHuge = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(k.on_fill(fill(0, kBuy, kHuge, 2)), nt::FillResult::kOverflow);  // cost overflows
  EXPECT_EQ(k.refused(nt::FillResult::kUnknownInstrument), 1u);
  EXPECT_EQ(k.refused(nt::FillResult::kBadSide), 1u);
  EXPECT_EQ(k.refused(nt::FillResult::kBadQty), 2u);
  EXPECT_EQ(k.refused(nt::FillResult::kOverflow), 1u);
  const nt::InstrumentPosition& p = *k.position(0);
  EXPECT_EQ(p.position, 1);
  EXPECT_EQ(p.open_cost, 100);
  EXPECT_EQ(p.volume, 1);
  EXPECT_EQ(p.fills, 1u);
  EXPECT_EQ(k.total_fills(), 1u);
  EXPECT_EQ(nt::to_string(nt::FillResult::kOverflow),
            "position, open cost, realised PnL or volume would overflow int64");
}

TEST(PositionKeeper, ShouldRefuseAFillWhoseRealisedPnlWouldOverflow) {
  nt::PositionKeeper k(1);
  constexpr nt::Price kMax = std::numeric_limits<std::int64_t>::max();
  apply(k, 0, kSell, kMax, 1);  // short 1 at the top price: cost -kMax fits
  // Buying it back at -1 realises kMax + 1: does not fit.
  EXPECT_EQ(k.on_fill(fill(0, kBuy, -1, 1)), nt::FillResult::kOverflow);
  EXPECT_EQ(k.refused(nt::FillResult::kOverflow), 1u);
  EXPECT_EQ(k.position(0)->position, -1);
  EXPECT_EQ(k.position(0)->realised, 0);
}

// Whatever the fills, realised + unrealised at an integer mark equals the
// cash flow plus the position valued at the mark, exactly: the rounding of
// partial closes only moves PnL between realised and unrealised.
TEST(PositionKeeper, ShouldMatchTheCashFlowIdentityOverRandomFills) {
  constexpr std::uint32_t kInstruments = 3;
  nt::PositionKeeper k(kInstruments);
  std::vector<std::int64_t> cash(kInstruments, 0);
  std::vector<std::int64_t> net(kInstruments, 0);
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<int> inst_d(0, kInstruments - 1);
  std::uniform_int_distribution<int> price_d(90, 110);
  std::uniform_int_distribution<int> qty_d(1, 25);
  for (int i = 0; i < 20000; ++i) {
    const auto inst = static_cast<nt::InstrumentId>(inst_d(rng));
    const nt::Side side = (rng() & 1) != 0 ? kBuy : kSell;
    const nt::Price price = price_d(rng);
    const nt::Qty qty = qty_d(rng);
    ASSERT_EQ(k.on_fill(fill(inst, side, price, qty)), nt::FillResult::kOk);
    cash[inst] -= nt::sign_of(side) * price * qty;
    net[inst] += nt::sign_of(side) * qty;
    const nt::Price mark = price_d(rng);
    ASSERT_TRUE(k.mark(inst, static_cast<double>(mark)));
    const nt::InstrumentPosition& p = *k.position(inst);
    ASSERT_EQ(p.position, net[inst]);
    ASSERT_EQ(static_cast<double>(p.realised) + p.unrealised, static_cast<double>(cash[inst] + net[inst] * mark))
        << "fill " << i;
  }
}

TEST(PositionKeeper, ShouldNotAllocateOnFillsAndMarks) {
  nt::PositionKeeper k(2);
  const nanotick::test::AllocationScope scope;
  for (int i = 0; i < 1000; ++i) {
    const nt::Side side = i % 3 == 0 ? kSell : kBuy;
    (void)k.on_fill(fill(static_cast<nt::InstrumentId>(i % 2), side, 100 + i % 7, 1 + i % 5));
    (void)k.mark(static_cast<nt::InstrumentId>(i % 2), 100.5 + i % 3);
  }
  (void)k.on_fill(fill(9, kBuy, 1, 1));
  EXPECT_EQ(scope.count(), 0u);
}

}  // namespace
