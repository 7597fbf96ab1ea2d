// The finished-order memory (engine/finished_orders.hpp): two generations of
// `capacity` finishes each, checked against a std::set model; export and
// restore, and the states restore refuses.
#include "engine/finished_orders.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace nanotick::engine {
namespace {

// A model of the two generations with std::set (docs/MATCHING.md "Finished orders").
struct GenerationsModel {
  std::uint32_t capacity;
  std::set<std::uint64_t> previous, current;
  std::uint32_t adds = 0;
  void add(std::uint64_t key) {
    if (adds == capacity) {
      previous = std::move(current);
      current.clear();
      adds = 0;
    }
    current.insert(key);
    ++adds;
  }
  bool contains(std::uint64_t key) const { return current.contains(key) || previous.contains(key); }
};

TEST(FinishedOrders, ShouldRememberTwoGenerationsOfCapacityFinishesUnderChurn) {
  for (std::uint32_t capacity : {1u, 2u, 7u, 64u}) {
    FinishedOrders fin(capacity);
    GenerationsModel model{capacity, {}, {}, 0};
    std::mt19937_64 rng(capacity);
    for (int i = 0; i < 20'000; ++i) {
      const std::uint64_t key = rng() % (3 * capacity + 5);  // many repeats
      fin.add(key);
      model.add(key);
      const std::uint64_t probe = rng() % (3 * capacity + 5);
      ASSERT_EQ(fin.contains(probe), model.contains(probe)) << "capacity " << capacity << " step " << i;
      ASSERT_EQ(fin.current_adds(), model.adds);
      ASSERT_EQ(fin.inconsistency(), nullptr);
    }
    EXPECT_EQ(fin.current_keys(), std::vector<std::uint64_t>(model.current.begin(), model.current.end()));
    EXPECT_EQ(fin.previous_keys(), std::vector<std::uint64_t>(model.previous.begin(), model.previous.end()));
  }
}

TEST(FinishedOrders, ShouldRememberAKeyForAtLeastCapacityAndFewerThanTwiceCapacityFinishes) {
  constexpr std::uint32_t kCapacity = 5;
  for (std::uint32_t offset = 0; offset < kCapacity; ++offset) {  // the key at every place in its generation
    FinishedOrders fin(kCapacity);
    std::uint64_t next = 1000;
    for (std::uint32_t i = 0; i < offset; ++i) fin.add(next++);
    fin.add(7);
    std::uint32_t remembered_for = 0;  // further finishes after which 7 is still known
    for (;;) {
      fin.add(next++);
      if (!fin.contains(7)) break;
      ++remembered_for;
    }
    EXPECT_GE(remembered_for, kCapacity) << "offset " << offset;
    EXPECT_LT(remembered_for, 2 * kCapacity) << "offset " << offset;
    EXPECT_EQ(remembered_for, 2 * kCapacity - 1 - offset) << "offset " << offset;
  }
}

TEST(FinishedOrders, ShouldRestoreExactlyWhatItExported) {
  for (std::uint32_t capacity : {1u, 3u, 50u}) {
    for (int adds : {0, 1, 2, 3, 49, 50, 51, 177}) {
      FinishedOrders a(capacity);
      std::mt19937_64 rng(static_cast<std::uint64_t>(adds));
      for (int i = 0; i < adds; ++i) a.add(rng() % 90);
      FinishedOrders b(capacity);
      b.restore(a.previous_keys(), a.current_keys(), a.current_adds());
      EXPECT_EQ(b.previous_keys(), a.previous_keys());
      EXPECT_EQ(b.current_keys(), a.current_keys());
      EXPECT_EQ(b.current_adds(), a.current_adds());
      for (int i = 0; i < 300; ++i) {  // and both go on alike, generation changes included
        const std::uint64_t key = rng() % 90;
        a.add(key);
        b.add(key);
        const std::uint64_t probe = rng() % 90;
        ASSERT_EQ(a.contains(probe), b.contains(probe)) << capacity << "/" << adds << " step " << i;
      }
    }
  }
}

TEST(FinishedOrders, ShouldRefuseAnInconsistentState) {
  auto refused = [](const std::vector<std::uint64_t>& previous, const std::vector<std::uint64_t>& current,
                    std::uint32_t adds) {
    FinishedOrders fin(3);
    EXPECT_THROW(fin.restore(previous, current, adds), std::invalid_argument);
  };
  refused({}, {1, 1}, 2);        // a key twice in one generation
  refused({}, {1, 2, 3, 4}, 4);  // more keys than the capacity
  refused({}, {1, 2}, 1);        // more keys than adds
  refused({}, {1}, 4);           // more adds than the capacity
  refused({1}, {}, 0);           // a previous generation, no current one
  FinishedOrders used(3);
  used.add(1);
  EXPECT_THROW(used.restore({}, {2}, 1), std::invalid_argument);  // not fresh
}

}  // namespace
}  // namespace nanotick::engine
