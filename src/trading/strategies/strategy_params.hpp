// The parameters of the trading client's strategies, per instrument (TOML:
// each [[instruments]] entry of a trader config; docs/TRADER.md "Config").
// Plain values: thread-safe once built. validate() throws
// std::invalid_argument naming the field (start-up only).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "trading/trading_types.hpp"

namespace nanotick::trading {

enum class StrategyKind : std::uint8_t { kMarketMaker, kLiquidityTaker, kRandom };

// Market maker: one bid and one ask around the fair price, skewed against
// the position, repriced (ModifyOrder) when the fair price moves.
struct MarketMakerParams {
  bool enabled = false;
  Qty quote_qty = 10;
  std::int64_t half_spread_ticks = 2;  // quote at fair -/+ this many ticks (>= 1)
  double skew_ticks_per_unit = 0.05;   // quotes move down this many ticks per unit of long position (>= 0)
  std::int64_t requote_ticks = 1;      // reprice when the wanted price is this many ticks away (>= 1)
};

// Liquidity taker: follows aggressive flow. When the trade-flow EWMA says
// aggressors lean one way by at least flow_threshold and the last trade
// cleared at least min_aggressive_ratio of the touch, it sends an IOC that
// way at the opposite touch (plus slippage_ticks), at most one per
// min_interval_ms.
struct LiquidityTakerParams {
  bool enabled = false;
  Qty clip_qty = 5;
  double flow_threshold = 5.0;
  double min_aggressive_ratio = 0.3;
  std::int64_t slippage_ticks = 0;
  std::uint32_t min_interval_ms = 50;
};

// Random load generator: actions at orders_per_second (Poisson arrivals),
// each picked by weight: new limit order, cancel, modify, IOC. Limit prices
// are 1..price_range_ticks+1 ticks on the order's own side of the fair price,
// IOC prices 0..price_range_ticks across it; quantities 1..max_qty. Seeded: the same
// seed makes the same choices given the same events.
struct RandomParams {
  bool enabled = false;
  double orders_per_second = 100.0;
  std::uint32_t weight_new = 50;
  std::uint32_t weight_cancel = 25;
  std::uint32_t weight_modify = 15;
  std::uint32_t weight_ioc = 10;
  std::int64_t price_range_ticks = 10;
  Qty max_qty = 20;
  std::uint32_t max_open_orders = 50;  // no new resting orders beyond this many open
};

struct StrategyParams {
  MarketMakerParams market_maker;
  LiquidityTakerParams liquidity_taker;
  RandomParams random;
  // The price to centre on while the book has no fair price (an empty
  // venue): without it nobody could quote first. 0 = none.
  Price reference_price = 0;

  void validate(const std::string& where) const {
    auto bad = [&](const char* field, const char* why) {
      throw std::invalid_argument(where + ": " + field + ": " + why);
    };
    if (reference_price < 0) bad("reference_price", "must be >= 0");
    const MarketMakerParams& m = market_maker;
    if (m.quote_qty <= 0) bad("quote_qty", "must be >= 1");
    if (m.half_spread_ticks < 1) bad("half_spread_ticks", "must be >= 1");
    if (!(m.skew_ticks_per_unit >= 0.0) || m.skew_ticks_per_unit > 1e6)
      bad("skew_ticks_per_unit", "must be in [0, 1e6]");
    if (m.requote_ticks < 1) bad("requote_ticks", "must be >= 1");
    const LiquidityTakerParams& t = liquidity_taker;
    if (t.clip_qty <= 0) bad("clip_qty", "must be >= 1");
    if (!(t.flow_threshold > 0.0)) bad("flow_threshold", "must be > 0");
    if (!(t.min_aggressive_ratio >= 0.0) || t.min_aggressive_ratio > 1.0)
      bad("min_aggressive_ratio", "must be in [0, 1]");
    if (t.slippage_ticks < 0) bad("slippage_ticks", "must be >= 0");
    const RandomParams& r = random;
    if (!(r.orders_per_second > 0.0) || r.orders_per_second > 1e6) bad("orders_per_second", "must be in (0, 1e6]");
    if (r.weight_new + r.weight_cancel + r.weight_modify + r.weight_ioc == 0)
      bad("weight_*", "at least one weight must be > 0");
    if (r.price_range_ticks < 0) bad("price_range_ticks", "must be >= 0");
    if (r.max_qty <= 0) bad("max_qty", "must be >= 1");
  }
};

}  // namespace nanotick::trading
