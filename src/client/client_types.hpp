// Types shared by the client side of the protocol (the order-entry session
// and the market data consumer) and by whatever trades on top of it
// (trading/trading_types.hpp re-exports them): the market's scalar types, the
// time unit, and the trade a market data feed prints. Plain values:
// thread-safe.
#pragma once

#include <cstdint>

#include "market/types.hpp"

namespace nanotick::client {

using market::ClientOrderId;
using market::InstrumentId;
using market::OrderId;
using market::OrderType;
using market::Price;
using market::Qty;
using market::Side;

// Monotonic time in nanoseconds (the caller's clock, e.g. the calibrated TSC
// converted once per event). Same unit and type as the exchange's gateway.
using TimeNs = std::uint64_t;

constexpr bool is_valid(Side side) noexcept { return side == Side::kBuy || side == Side::kSell; }

// A trade printed on the market data feed (PROTOCOL.md Trade message): any
// participant's, ours included. `aggressor` is the side of the incoming
// (taker) order.
struct TradeEvent {
  InstrumentId instrument = 0;
  Side aggressor = Side::kBuy;
  Price price = 0;
  Qty qty = 0;
};

}  // namespace nanotick::client
