// Types shared by the parts of the trading client's trade engine (features,
// positions, risk, orders): the market's scalar types re-exported, the time
// unit, and the plain event structs that travel between the parts. Plain
// values: thread-safe.
//
// Prices and quantities are the market's integers (market/types.hpp): a price
// is an int64 in the venue's price unit, a quantity an int64 > 0 in a valid
// order. Nothing here converts them to floating point; the parts that need a
// fractional value (a fair price, an average price, an unrealised PnL) say so.
#pragma once

#include <cstdint>
#include <limits>

#include "client/client_types.hpp"
#include "market/types.hpp"

namespace nanotick::trading {

using market::ClientOrderId;
using market::InstrumentId;
using market::OrderId;
using market::OrderType;
using market::Price;
using market::Qty;
using market::Side;

// The client's time unit, validity check and market data trade
// (client/client_types.hpp): the trade engine works in the same terms.
using client::is_valid;
using client::TimeNs;
using client::TradeEvent;

// 128-bit integer for intermediate products and sums of prices and
// quantities: a product of two int64 values always fits, so exact PnL and
// exposure arithmetic cannot overflow before it is range-checked.
__extension__ using Int128 = __int128;

constexpr bool fits_int64(Int128 v) noexcept {
  return v >= std::numeric_limits<std::int64_t>::min() && v <= std::numeric_limits<std::int64_t>::max();
}

// +1 for a buy, -1 for a sell: the sign a fill of this side gives the position.
constexpr std::int64_t sign_of(Side side) noexcept { return side == Side::kBuy ? 1 : -1; }

// One of our orders traded (an ExecutionReport of type Fill): `side` is our
// order's side, `price` and `qty` are the report's last_price and last_qty.
struct FillEvent {
  InstrumentId instrument = 0;
  ClientOrderId client_order_id = 0;
  Side side = Side::kBuy;
  Price price = 0;
  Qty qty = 0;
  bool is_maker = false;  // our order was resting (passive fill)
};

// An order the trade engine wants to send: what the risk manager checks and
// the order manager turns into a NewOrder. `price` is the limit price (a
// market order has none; see RiskManager for how it treats one).
struct OrderRequest {
  InstrumentId instrument = 0;
  ClientOrderId client_order_id = 0;
  Side side = Side::kBuy;
  OrderType type = OrderType::kLimit;
  Price price = 0;
  Qty qty = 0;
};

}  // namespace nanotick::trading
