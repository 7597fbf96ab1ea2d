// Outcome of applying one market data event to a book replica. Every event
// that does not fit the replica's state gets its own code, so a consumer can
// count and log exactly what was inconsistent (a lost packet, a bug upstream,
// a capacity too small) instead of guessing. Plain values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nanotick::book {

enum class BookResult : std::uint8_t {
  kOk = 0,
  kUnknownInstrument,    // instrument id outside the replica's table
  kBadSide,              // side is neither buy (1) nor sell (2)
  kBadQty,               // quantity <= 0
  kDuplicateOrder,       // add of an order id that is already resting in the instrument
  kUnknownOrder,         // modify / delete / trade of an order id not resting in the instrument
  kNotAReduction,        // modify to an open quantity >= the current one (a modify only reduces)
  kTradePriceMismatch,   // trade price differs from the maker's resting price
  kTradeExceedsOrder,    // trade quantity above the maker's open quantity
  kOrderCapacity,        // add with the instrument's max_orders already resting
  kLevelCapacity,        // add that needs a new price level with max_levels already on that side
};

inline constexpr std::size_t kBookResultCount = static_cast<std::size_t>(BookResult::kLevelCapacity) + 1;

constexpr std::string_view to_string(BookResult r) noexcept {
  switch (r) {
    case BookResult::kOk: return "ok";
    case BookResult::kUnknownInstrument: return "unknown instrument";
    case BookResult::kBadSide: return "side is not buy or sell";
    case BookResult::kBadQty: return "quantity <= 0";
    case BookResult::kDuplicateOrder: return "order id already resting";
    case BookResult::kUnknownOrder: return "order id not resting";
    case BookResult::kNotAReduction: return "modify does not reduce the open quantity";
    case BookResult::kTradePriceMismatch: return "trade price differs from the maker's price";
    case BookResult::kTradeExceedsOrder: return "trade quantity above the maker's open quantity";
    case BookResult::kOrderCapacity: return "instrument's order capacity exhausted";
    case BookResult::kLevelCapacity: return "side's price level capacity exhausted";
  }
  return "unknown result";
}

// The result as one word, for counter labels ("<prefix>.rejected.<name>").
constexpr std::string_view counter_name(BookResult r) noexcept {
  switch (r) {
    case BookResult::kOk: return "ok";
    case BookResult::kUnknownInstrument: return "unknown_instrument";
    case BookResult::kBadSide: return "bad_side";
    case BookResult::kBadQty: return "bad_qty";
    case BookResult::kDuplicateOrder: return "duplicate_order";
    case BookResult::kUnknownOrder: return "unknown_order";
    case BookResult::kNotAReduction: return "not_a_reduction";
    case BookResult::kTradePriceMismatch: return "trade_price_mismatch";
    case BookResult::kTradeExceedsOrder: return "trade_exceeds_order";
    case BookResult::kOrderCapacity: return "order_capacity";
    case BookResult::kLevelCapacity: return "level_capacity";
  }
  return "unknown";
}

}  // namespace nanotick::book
