// The instrument the controls' scenario tests trade: tick 1, band 1..1,000,
// at most 1,000 an order, room for 64 orders on 32 levels. Small enough that
// every limit a test needs is a few orders away. Plain data.
#pragma once

#include <string>

#include "engine/matching_engine.hpp"

namespace nanotick::test {

inline engine::InstrumentConfig small_instrument(std::string symbol) {
  engine::InstrumentConfig in;
  in.symbol = std::move(symbol);
  in.tick_size = 1;
  in.min_price = 1;
  in.max_price = 1'000;
  in.max_order_qty = 1'000;
  in.max_orders = 64;
  in.max_levels = 32;
  return in;
}

}  // namespace nanotick::test
