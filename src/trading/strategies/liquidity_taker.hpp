// Liquidity taker (docs/TRADER.md "Strategies"): follows aggressive flow.
// After each trade on the feed of an enabled instrument, when the trade-flow
// EWMA (signed aggressor volume) leans one way by flow_threshold or more and
// the trade took at least min_aggressive_ratio of the touch it hit, it sends
// an IOC of clip_qty that way, priced at the opposite touch plus
// slippage_ticks (it takes what is there, never rests), at most one per
// min_interval_ms per instrument. The risk manager bounds the position.
//
// Not thread-safe: the trade engine's thread calls it. No allocation after
// construction.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/time_units.hpp"
#include "trading/strategies/strategy_defaults.hpp"
#include "trading/strategies/strategy_params.hpp"
#include "trading/strategies/strategy_support.hpp"
#include "trading/trade_engine.hpp"

namespace nanotick::trading {

class LiquidityTaker : public StrategyDefaults {
 public:
  explicit LiquidityTaker(std::vector<StrategyParams> params)
      : params_(std::move(params)), last_order_ns_(params_.size(), 0), pending_(params_.size(), 0) {}

  template <typename Engine>
  void on_book(Engine& e, InstrumentId i) noexcept {
    // Act once the book shows the trade's effect (the touch to take is the new one).
    if (i < pending_.size() && pending_[i]) {
      pending_[i] = 0;
      maybe_take(e, i);
    }
  }
  template <typename Engine>
  void on_trade(Engine&, const TradeEvent& t) noexcept {
    if (t.instrument < params_.size() && params_[t.instrument].liquidity_taker.enabled) pending_[t.instrument] = 1;
  }

 private:
  template <typename Engine>
  void maybe_take(Engine& e, InstrumentId i) noexcept {
    const LiquidityTakerParams& p = params_[i].liquidity_taker;
    if (!e.logged_on() || !e.is_live(i)) return;
    const FeatureValues& f = e.features(i);
    if (!std::isfinite(f.trade_flow) || !std::isfinite(f.aggressive_ratio)) return;
    if (std::fabs(f.trade_flow) < p.flow_threshold || f.aggressive_ratio < p.min_aggressive_ratio) return;
    const TimeNs now = e.now_ns();
    if (last_order_ns_[i] != 0 && now - last_order_ns_[i] < core::ns_from_ms(p.min_interval_ms)) return;
    const Side side = f.trade_flow > 0 ? Side::kBuy : Side::kSell;
    const bool has_touch = side == Side::kBuy ? f.has_ask : f.has_bid;
    if (!has_touch) return;
    const market::InstrumentConfig& ic = e.instrument(i);
    const Price slip = p.slippage_ticks * ic.tick_size;
    OrderRequest rq;
    rq.instrument = i;
    rq.side = side;
    rq.type = OrderType::kIoc;
    rq.price = clamp_to_band(ic, side == Side::kBuy ? f.ask_price + slip : f.bid_price - slip);
    rq.qty = p.clip_qty;
    if (e.place(rq).sent()) last_order_ns_[i] = now;
  }

  std::vector<StrategyParams> params_;
  std::vector<TimeNs> last_order_ns_;
  std::vector<std::uint8_t> pending_;  // a trade was seen: decide on the next book update
};

}  // namespace nanotick::trading
