// The market's vocabulary: the scalar types and enums the venue and its
// clients share (prices, quantities, ids, side, order type, self-trade
// prevention). The engine, the book replicas, the exchange and the trading
// client all speak these; none of them owns them. Plain values: thread-safe.
#pragma once

#include <cstdint>

namespace nanotick::market {

using Price = std::int64_t;          // in ticks of the instrument; any value inside its band
using Qty = std::int64_t;            // shares/contracts; always > 0 in a valid request
using OrderId = std::uint64_t;       // exchange-assigned, unique for the engine's life, from 1
using ClientOrderId = std::uint64_t; // the client's own id: < 2^48, unique among its live orders
using ClientId = std::uint32_t;      // session's client: < 2^16 (see kMaxClientId)
using InstrumentId = std::uint32_t;  // index into the venue's instrument table
using Seq = std::uint64_t;           // engine sequence numbers, from 1

// (client, client order id) is packed into one 64-bit key for the live-order
// index, so both are bounded; larger values are rejected, never truncated.
inline constexpr ClientId kMaxClientId = (1u << 16) - 1;
inline constexpr ClientOrderId kMaxClientOrderId = (std::uint64_t{1} << 48) - 1;

// Enums travel inside requests decoded from the wire: the engine validates
// every value and rejects anything outside the listed ones.
enum class Side : std::uint8_t { kBuy = 1, kSell = 2 };

enum class OrderType : std::uint8_t {
  kLimit = 1,   // good till cancel: rests if not fully filled
  kIoc = 2,     // immediate or cancel: residual cancelled
  kFok = 3,     // fill or kill: fills completely at once or nothing happens
  kMarket = 4,  // IOC without a limit price, bounded by the price band/collar
};

// Self-trade prevention: what happens when an incoming order would trade with
// a resting order of the same client.
enum class StpMode : std::uint8_t {
  kNone = 0,            // trade with yourself (default)
  kCancelResting = 1,   // cancel the resting order, keep matching
  kCancelIncoming = 2,  // cancel the incoming order's remaining quantity
  kCancelBoth = 3,      // cancel both
};

constexpr Side opposite(Side s) noexcept { return s == Side::kBuy ? Side::kSell : Side::kBuy; }

}  // namespace nanotick::market
