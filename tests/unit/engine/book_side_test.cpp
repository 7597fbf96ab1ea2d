// BookSide against std::set under random churn: insertions anywhere in wide
// books (block splits), removals anywhere (blocks emptied), books kept near
// capacity while prices move (the block pool runs dry: repacks), both sides.
#include "engine/book_side.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <vector>

#include "support/stress.hpp"

namespace nanotick::engine {
namespace {

// Each level holds one fake order (a non-null head) while it is in the side.
Order* const kSomeOrder = reinterpret_cast<Order*>(alignof(Order));

class BookSideModel {
 public:
  BookSideModel(Side side, std::uint32_t capacity) : side_(side), real_(side, capacity), capacity_(capacity) {}

  void insert(Price price) {
    if (levels_.count(price) == 0 && levels_.size() == capacity_) return;  // the engine checks this first
    const LevelIndex index = real_.find_or_insert(price);
    auto [it, fresh] = levels_.emplace(price, index);
    ASSERT_EQ(it->second, index) << "find_or_insert of an existing price made a new level";
    if (fresh) {
      real_.level(index).head = real_.level(index).tail = kSomeOrder;
      real_.level(index).orders = 1;
    }
  }
  void erase(Price price) {
    const auto it = levels_.find(price);
    if (it == levels_.end()) return;
    real_.level(it->second) = PriceLevel{real_.level(it->second).price};
    real_.level_emptied(it->second);
    levels_.erase(it);
  }
  void check() const {
    ASSERT_EQ(real_.inconsistency(), nullptr) << real_.inconsistency();
    ASSERT_EQ(real_.size(), levels_.size());
    std::vector<Price> walked;
    real_.walk([&](const PriceLevel& l) {
      walked.push_back(l.price);
      return true;
    });
    std::vector<Price> expected;
    if (side_ == Side::kBuy) {
      for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) expected.push_back(it->first);
    } else {
      for (const auto& [p, i] : levels_) expected.push_back(p);
    }
    ASSERT_EQ(walked, expected);
    if (!expected.empty()) {
      ASSERT_EQ(real_.best()->price, expected.front());
    } else {
      ASSERT_EQ(real_.best(), nullptr);
    }
  }
  void check_find(Price price) const {
    const PriceLevel* found = real_.find(price);
    const auto it = levels_.find(price);
    if (it == levels_.end()) {
      ASSERT_EQ(found, nullptr) << price;
    } else {
      ASSERT_EQ(found, &real_.level(it->second)) << price;
    }
  }
  std::size_t size() const { return levels_.size(); }
  std::uint64_t repacks() const { return real_.repacks(); }
  Price nth(std::size_t n) const { return std::next(levels_.begin(), static_cast<std::ptrdiff_t>(n))->first; }

 private:
  Side side_;
  BookSide real_;
  std::uint32_t capacity_;
  std::map<Price, LevelIndex> levels_;
};

TEST(BookSide, ShouldStaySortedLikeAStdSetUnderRandomChurn) {
  // 8,000 steps under sanitizers (20,000 took ~13 s there), else 60,000; the test below forces the repacks.
  const int steps = static_cast<int>(test::stress_items(60'000, 8'000));
  for (const Side side : {Side::kBuy, Side::kSell}) {
    for (const std::uint32_t capacity : {1u, 5u, 64u, 65u, 700u, 3000u}) {
      BookSideModel m(side, capacity);
      std::mt19937_64 rng(capacity * 7 + static_cast<unsigned>(side));
      Price mid = 100'000;
      for (int i = 0; i < steps; ++i) {
        mid += static_cast<Price>(rng() % 21) - 10;  // the prices wander: blocks empty and fill elsewhere
        const std::uint64_t what = rng() % 100;
        if (what < 55) {
          m.insert(mid + static_cast<Price>(rng() % 4001) - 2000);  // anywhere in a wide book
        } else if (what < 65) {
          m.insert(mid + static_cast<Price>(rng() % 5));            // near the touch
        } else if (what < 95) {
          if (m.size() != 0) m.erase(m.nth(rng() % m.size()));
        } else {
          m.check_find(mid + static_cast<Price>(rng() % 4001) - 2000);
        }
        if (i % 97 == 0 || capacity < 70) m.check();
        if (HasFatalFailure()) return;
      }
      m.check();
    }
  }
}

// Blocks left half full by appends, then thinned by removals, run the pool dry:
// the side repacks, and stays sorted and complete through it (deterministic,
// whatever the stress size).
TEST(BookSide, ShouldRepackWhenSparseBlocksUseUpThePool) {
  for (const Side side : {Side::kBuy, Side::kSell}) {
    BookSideModel m(side, 700);
    for (Price p = 1; p <= 700; ++p) m.insert(p * 2);  // ascending: each split leaves 32 behind
    m.check();
    for (Price p = 1; p <= 700; p += 2) m.erase(p * 2);  // every other level: no block empties
    m.check();
    ASSERT_EQ(m.repacks(), 0u);
    for (Price p = 701; p <= 1050; ++p) {
      m.insert(p * 2);
      m.check();
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(m.repacks(), 0u) << "the block pool never ran dry";
    EXPECT_EQ(m.size(), 700u);
    for (Price p = 2; p <= 700; p += 2) m.check_find(p * 2);
  }
}

TEST(BookSide, ShouldAcceptLevelsUpToCapacityInAnyOrderAndEmptyCompletely) {
  for (const Side side : {Side::kBuy, Side::kSell}) {
    BookSideModel m(side, 4096);
    std::vector<Price> prices;
    for (Price p = 1; p <= 4096; ++p) prices.push_back(p * 3);
    std::mt19937_64 rng(11);
    std::shuffle(prices.begin(), prices.end(), rng);
    for (const Price p : prices) m.insert(p);
    m.check();
    ASSERT_EQ(m.size(), 4096u);
    std::shuffle(prices.begin(), prices.end(), rng);
    for (std::size_t i = 0; i < prices.size(); ++i) {
      m.erase(prices[i]);
      if (i % 512 == 0) m.check();
    }
    m.check();
    ASSERT_EQ(m.size(), 0u);
  }
}

}  // namespace
}  // namespace nanotick::engine
