// Read-only views of a book, returned by the engines' introspection API (tests,
// snapshots, tools). Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "engine/types.hpp"

namespace nanotick::engine {

// The best level of each side (nullopt: that side is empty).
struct TopOfBookView {
  std::optional<LevelView> bid;
  std::optional<LevelView> ask;
};

// One resting order as seen from outside the engine.
struct OrderView {
  OrderId order_id;
  ClientId client;
  ClientOrderId client_order_id;
  Side side;
  Price price;
  Qty order_qty;
  Qty cum_qty;
  Qty open_qty;
  StpMode stp;
};

}  // namespace nanotick::engine
