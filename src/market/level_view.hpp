// One price level as seen from outside a book: its price, total open quantity
// and number of orders. Returned by the engine's introspection API and by the
// book replicas the exchange and the trading client rebuild from market data.
// A plain value: thread-safe.
#pragma once

#include <cstdint>

#include "market/types.hpp"

namespace nanotick::market {

struct LevelView {
  Price price;
  Qty qty;
  std::uint32_t orders;
};

}  // namespace nanotick::market
