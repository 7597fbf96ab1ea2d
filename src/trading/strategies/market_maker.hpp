// Market maker (docs/TRADER.md "Strategies"): per enabled instrument one bid
// and one ask of quote_qty around the fair price, half_spread_ticks away,
// both shifted down by skew_ticks_per_unit ticks per unit of long position
// (up when short; never through the fair price) so fills lean the position
// back to flat. Quotes never cross the opposite touch (maker only). When the wanted
// price moves requote_ticks or more from the quote's, the quote is repriced
// with a ModifyOrder (one message, the order id kept) rather than cancel +
// new, unless partly filled (then cancel + new); a quote that ends (filled,
// cancelled) is replaced at once, a rejected one by the next timer retry. A stale instrument's quotes are cancelled.
//
// The fair price is the engine's risk_fair_price: the feature engine's
// (microprice or mid); with one side of the book empty, the last trade, then
// the configured reference price, so an empty venue gets its first quotes.
//
// Not thread-safe: the trade engine's thread calls it. No allocation after
// construction.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "trading/strategies/strategy_defaults.hpp"
#include "trading/strategies/strategy_params.hpp"
#include "trading/strategies/strategy_support.hpp"
#include "trading/trade_engine.hpp"

namespace nanotick::trading {

class MarketMaker : public StrategyDefaults {
 public:
  explicit MarketMaker(std::vector<StrategyParams> params) : params_(std::move(params)), quotes_(params_.size()) {}

  template <typename Engine>
  void on_book(Engine& e, InstrumentId i) noexcept {
    requote(e, i);
  }
  template <typename Engine>
  void on_order_event(Engine& e, const OrderEvent& ev) noexcept {
    if (ev.instrument >= quotes_.size()) return;
    ClientOrderId& q = quotes_[ev.instrument][side_slot(ev.side)];
    if (q == ev.id && ev.state == OrderState::kDone) {
      q = 0;
      // A rejected quote is not sent again at once (the same price would be
      // rejected the same way, once per round trip): the timer retries it.
      const bool rejected = ev.done_reason == DoneReason::kRejected || ev.done_reason == DoneReason::kSessionRejected;
      if (!rejected && e.is_live(ev.instrument)) requote(e, ev.instrument);
    }
  }
  template <typename Engine>
  void on_instrument_state(Engine& e, InstrumentId i, bool live) noexcept {
    if (live) {
      requote(e, i);
    } else {
      e.cancel_all(i);
    }
  }
  template <typename Engine>
  void on_timer(Engine& e, TimeNs now) noexcept {
    // Quotes that could not go out (output full, throttle) are retried here,
    // not only on the next book change, which may be a long time coming on an
    // empty instrument.
    // At most every kRetryNs: a quote blocked by risk stays blocked until
    // something changes, and asking again every pass only counts blocks.
    if (!e.logged_on() || now - last_retry_ns_ < kRetryNs) return;
    last_retry_ns_ = now;
    for (InstrumentId i = 0; i < quotes_.size(); ++i) {
      if (!params_[i].market_maker.enabled || !e.is_live(i)) continue;
      if (quotes_[i][0] == 0 || quotes_[i][1] == 0) requote(e, i);
    }
  }
  template <typename Engine>
  void on_session(Engine& e, bool logged_on) noexcept {
    // After a session loss the order manager settles the old quotes
    // (reconcile); new ones are placed as if none existed.
    for (auto& q : quotes_) q = {0, 0};
    if (logged_on)
      for (InstrumentId i = 0; i < quotes_.size(); ++i) requote(e, i);
  }

 private:
  static std::size_t side_slot(Side s) noexcept { return s == Side::kBuy ? 0 : 1; }

  template <typename Engine>
  void requote(Engine& e, InstrumentId i) noexcept {
    if (i >= params_.size() || !e.logged_on() || !e.is_live(i)) return;
    const StrategyParams& p = params_[i];
    const MarketMakerParams& m = p.market_maker;
    if (!m.enabled) return;
    const double fair = e.risk_fair_price(i);
    if (!std::isfinite(fair)) return;
    const market::InstrumentConfig& ic = e.instrument(i);
    const double tick = static_cast<double>(ic.tick_size);
    const auto* pos = e.positions().position(i);
    const double skew = m.skew_ticks_per_unit * static_cast<double>(pos != nullptr ? pos->position : 0) * tick;
    const double half = static_cast<double>(m.half_spread_ticks) * tick;
    // The skew never moves a quote through the fair price (that would pay
    // the spread to unload inventory), and a quote never crosses the other
    // side's touch: the market maker only provides liquidity.
    const double max_skew = half - tick;
    const double shift = skew > max_skew ? max_skew : (skew < -max_skew ? -max_skew : skew);
    Price bid = clamp_to_band(ic, floor_to_tick(fair - half - shift, ic.tick_size));
    Price ask = clamp_to_band(ic, ceil_to_tick(fair + half - shift, ic.tick_size));
    const FeatureValues& f = e.features(i);
    if (f.has_ask && bid >= f.ask_price) bid = f.ask_price - ic.tick_size;
    if (f.has_bid && ask <= f.bid_price) ask = f.bid_price + ic.tick_size;
    if (bid >= ask) return;  // a band too narrow to quote both sides apart
    quote(e, i, Side::kBuy, bid, m);
    quote(e, i, Side::kSell, ask, m);
  }

  template <typename Engine>
  void quote(Engine& e, InstrumentId i, Side side, Price price, const MarketMakerParams& m) noexcept {
    ClientOrderId& id = quotes_[i][side_slot(side)];
    const Order* o = id != 0 ? e.orders().find(id) : nullptr;
    if (o == nullptr || o->done) {
      id = 0;
      OrderRequest rq;
      rq.instrument = i;
      rq.side = side;
      rq.type = OrderType::kLimit;
      rq.price = price;
      rq.qty = m.quote_qty;
      if (const ActionResult placed = e.place(rq, side_slot(side)); placed.sent()) id = placed.id;
      return;
    }
    if (o->state != OrderState::kLive) return;  // something in flight: wait for its answer
    const Price tick = e.instrument(i).tick_size;
    const Price distance = o->price > price ? o->price - price : price - o->price;
    if (distance < m.requote_ticks * tick) return;
    // A quote partly filled is replaced (cancel, then a fresh quote once the
    // cancel is answered) rather than repriced: a modify's new total would
    // grow with every fill until it hit the size limit. A reprice that risk
    // or the session refuses is replaced the same way, or the quote would rest
    // at its old price for good.
    if (o->cum_qty > 0) {
      (void)e.cancel(id);
      return;
    }
    const ActionResult r = e.modify(id, price, m.quote_qty);
    if (r.status == ActionStatus::kBlockedByRisk ||
        (r.status == ActionStatus::kRefused && r.submit != SubmitStatus::kOutputFull))
      (void)e.cancel(id);
  }

  static constexpr TimeNs kRetryNs = 10'000'000;
  std::vector<StrategyParams> params_;
  std::vector<std::array<ClientOrderId, 2>> quotes_;
  TimeNs last_retry_ns_ = 0;  // per instrument: bid, ask (0 = none)
};

}  // namespace nanotick::trading
