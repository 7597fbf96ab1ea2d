// Price helpers the strategies share: ticks and the price band. Pure
// functions: thread-safe.
#pragma once

#include <cmath>

#include "market/instrument_table.hpp"
#include "market/types.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

inline Price floor_to_tick(double price, Price tick) noexcept {
  return static_cast<Price>(std::floor(price / static_cast<double>(tick))) * tick;
}
inline Price ceil_to_tick(double price, Price tick) noexcept {
  return static_cast<Price>(std::ceil(price / static_cast<double>(tick))) * tick;
}
inline Price round_to_tick(double price, Price tick) noexcept {
  return static_cast<Price>(std::llround(price / static_cast<double>(tick))) * tick;
}

// The nearest prices inside the instrument's band that are on its tick.
inline Price clamp_to_band(const market::InstrumentConfig& ic, Price p) noexcept {
  const Price lo = ((ic.min_price + ic.tick_size - 1) / ic.tick_size) * ic.tick_size;
  const Price hi = (ic.max_price / ic.tick_size) * ic.tick_size;
  return p < lo ? lo : (p > hi ? hi : p);
}

}  // namespace nanotick::trading
