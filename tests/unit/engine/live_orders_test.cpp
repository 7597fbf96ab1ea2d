// The live-order index (engine/live_orders.hpp): find, insert and erase
// against a std::unordered_map model under churn, and for_each.
#include "engine/live_orders.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "engine/order.hpp"

namespace nanotick::engine {
namespace {

TEST(LiveOrders, ShouldFindInsertAndEraseLikeAMapUnderChurn) {
  constexpr std::size_t kCapacity = 300;
  LiveOrders index(kCapacity);
  std::vector<Order> orders(kCapacity);
  std::unordered_map<std::uint64_t, Order*> model;
  std::vector<Order*> free_orders;
  for (auto& o : orders) free_orders.push_back(&o);
  std::mt19937_64 rng(9);
  for (int i = 0; i < 200'000; ++i) {
    const std::uint64_t key = rng() % 1000;
    if (auto it = model.find(key); it != model.end()) {
      ASSERT_EQ(index.find(key), it->second);
      index.erase(key);
      free_orders.push_back(it->second);
      model.erase(it);
    } else if (!free_orders.empty()) {
      ASSERT_EQ(index.find(key), nullptr);
      Order* o = free_orders.back();
      free_orders.pop_back();
      index.insert(key, o);
      model[key] = o;
    }
    ASSERT_EQ(index.size(), model.size());
  }
  std::size_t seen = 0;
  index.for_each([&](std::uint64_t key, const Order* o) {
    ++seen;
    EXPECT_EQ(model.at(key), o);
  });
  EXPECT_EQ(seen, model.size());
}

}  // namespace
}  // namespace nanotick::engine
