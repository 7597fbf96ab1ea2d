#include "market/instrument_table.hpp"

#include <set>
#include <stdexcept>

namespace nanotick::market {

namespace {
[[noreturn]] void fail(std::size_t index, const InstrumentConfig& inst, const std::string& problem) {
  throw std::invalid_argument("instrument " + std::to_string(index) + " ('" + inst.symbol + "'): " + problem);
}
}  // namespace

void InstrumentTable::validate() const {
  if (instruments.empty()) throw std::invalid_argument("engine config: no instruments configured");
  std::set<std::string> symbols;
  for (std::size_t i = 0; i < instruments.size(); ++i) {
    const auto& in = instruments[i];
    if (in.symbol.empty()) fail(i, in, "symbol is empty");
    if (!symbols.insert(in.symbol).second) fail(i, in, "symbol is used by another instrument");
    if (in.tick_size <= 0) fail(i, in, "tick_size must be > 0");
    if (in.min_price > in.max_price) fail(i, in, "min_price must be <= max_price");
    if (in.min_price % in.tick_size != 0 || in.max_price % in.tick_size != 0)
      fail(i, in, "min_price and max_price must be multiples of tick_size");
    // Keeps every price difference and collar bound inside int64.
    constexpr Price kPriceLimit = Price{1} << 61;
    if (in.min_price < -kPriceLimit || in.max_price > kPriceLimit) fail(i, in, "prices must be within +/-2^61 ticks");
    if (in.collar < 0 || in.collar > (Price{1} << 62)) fail(i, in, "collar must be in [0, 2^62] ticks (0 = no collar)");
    if (in.max_order_qty <= 0 || in.max_order_qty > (Qty{1} << 40)) fail(i, in, "max_order_qty must be in [1, 2^40]");
    if (in.max_orders == 0 || in.max_orders > (1u << 26)) fail(i, in, "max_orders must be in [1, 2^26]");
    if (in.max_levels == 0 || in.max_levels > (1u << 24)) fail(i, in, "max_levels must be in [1, 2^24]");
    // A level's total, the top-of-book quantity and the FOK walk add up to
    // max_orders order quantities: keep that sum inside int64.
    if (in.max_order_qty > (Qty{1} << 62) / static_cast<Qty>(in.max_orders))
      fail(i, in, "max_orders * max_order_qty must be <= 2^62 (sums of open quantity stay in int64)");
  }
}

}  // namespace nanotick::market
