// Why the engine refused a request (the venue's reject reasons, read by the
// exchange to answer and by the trading client to account for them). Codes are grouped in ranges per kind so a
// code tells where it came from (validation 100s, state 200s, capacity 300s,
// the venue's controls on the client's account 400s: docs/CONTROLS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nanotick::market {

enum class RejectReason : std::uint16_t {
  kNone = 0,
  // 1xx: the request itself is invalid
  kUnknownInstrument = 100,
  kInvalidRequestType = 101,
  kInvalidSide = 102,
  kInvalidOrderType = 103,
  kInvalidStpMode = 104,
  kPriceOffTick = 105,
  kPriceOutOfBand = 106,      // outside [min_price, max_price]
  kPriceOutsideCollar = 107,  // further than the collar from the last trade
  kZeroQuantity = 108,        // qty <= 0
  kQuantityTooLarge = 109,    // qty > max_order_qty
  kInvalidClientId = 110,     // > kMaxClientId
  kInvalidClientOrderId = 111,// > kMaxClientOrderId
  kReservedNotZero = 112,
  // 2xx: the request conflicts with the book's state
  kDuplicateClientOrderId = 200,  // a live order of this client already has the id
  kUnknownOrder = 201,            // cancel/modify: no such order ever seen live
  kTooLateToCancel = 202,         // cancel/modify: the order is already filled or cancelled
  kModifyNoChange = 203,          // modify to the same price and quantity
  // 3xx: capacity exhausted (configured at start-up)
  kOrderCapacity = 300,  // no free order slot for the instrument
  kLevelCapacity = 301,  // no free price level for the instrument
  // 4xx: the venue's controls on the client's account (docs/CONTROLS.md)
  kNoAccount = 400,               // accounts are required and this client has none
  kInstrumentNotPermitted = 401,  // the client may not trade this instrument
  kClientQuantityLimit = 402,     // qty above the client's max_order_qty
  kClientNotionalLimit = 403,     // |price| x qty above the client's max_notional
  kClientCollar = 404,            // limit price further than the client's collar from the last trade
  kTooManyOpenOrders = 405,       // the client already has max_open_orders working
  kInsufficientCash = 406,        // buying power: cash not held by working orders < what this order needs
  kInsufficientPosition = 407,    // position not held by working sells + short_limit < this sell
  kClientBlocked = 408,           // an admin blocked the client: no new orders or modifies
  kInstrumentHalted = 409,        // an admin halted the instrument: no new orders or modifies
  kUnknownTargetClient = 410,     // an admin request names a client the venue does not know
  kNotAdmin = 411,                // an admin request from a session whose client is not an admin
  kCashOutOfRange = 412,          // an admin's cash adjustment would take the cash outside int64
};

std::string_view to_string(RejectReason r) noexcept;

}  // namespace nanotick::market
