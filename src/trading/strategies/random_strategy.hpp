// Random load generator (docs/TRADER.md "Strategies"): on each pass of the
// loop it draws the actions due since the last one at orders_per_second
// (exponential inter-arrival times: a Poisson stream) for every enabled
// instrument, and picks each by weight: a new limit order (resting on its
// own side of the fair price, quantity 1..max_qty, while fewer than
// max_open_orders of its orders are open), a cancel or a modify of one of its
// open orders, or an IOC (crossing the fair price; see random_price).
// Seeded (std::mt19937_64): the same seed makes the same draws. Risk blocks are expected and counted by the engine.
//
// Not thread-safe: the trade engine's thread calls it. No allocation after
// construction.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/time_units.hpp"
#include "trading/strategies/strategy_defaults.hpp"
#include "trading/strategies/strategy_params.hpp"
#include "trading/strategies/strategy_support.hpp"
#include "trading/trade_engine.hpp"

namespace nanotick::trading {

class RandomStrategy : public StrategyDefaults {
 public:
  RandomStrategy(std::vector<StrategyParams> params, std::uint64_t seed)
      : params_(std::move(params)), next_due_ns_(params_.size(), 0), rng_(seed) {}

  template <typename Engine>
  void on_timer(Engine& e, TimeNs now) noexcept {
    if (!e.logged_on()) return;
    for (InstrumentId i = 0; i < params_.size(); ++i) {
      const RandomParams& p = params_[i].random;
      if (!p.enabled || !e.is_live(i)) continue;
      if (next_due_ns_[i] == 0) next_due_ns_[i] = now + gap_ns(p);
      // At most a few actions per pass: a long stall does not turn into a burst.
      for (int k = 0; k < 8 && next_due_ns_[i] <= now; ++k) {
        act(e, i, p);
        next_due_ns_[i] += gap_ns(p);
      }
      if (next_due_ns_[i] <= now) next_due_ns_[i] = now + gap_ns(p);
    }
  }

 private:
  std::uint64_t gap_ns(const RandomParams& p) noexcept {
    std::exponential_distribution<double> d(p.orders_per_second);
    return static_cast<std::uint64_t>(core::ns_from_sec(d(rng_))) + 1;
  }
  std::uint64_t draw(std::uint64_t n) noexcept {
    return n == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }

  template <typename Engine>
  void act(Engine& e, InstrumentId i, const RandomParams& p) noexcept {
    const std::uint64_t total = std::uint64_t{p.weight_new} + p.weight_cancel + p.weight_modify + p.weight_ioc;
    std::uint64_t r = draw(total);
    if (r < p.weight_new) return new_order(e, i, p, OrderType::kLimit);
    r -= p.weight_new;
    if (r < p.weight_cancel) return cancel_one(e, i);
    r -= p.weight_cancel;
    if (r < p.weight_modify) return modify_one(e, i, p);
    new_order(e, i, p, OrderType::kIoc);
  }

  // A limit order rests on its own side of the fair price (a buy 1 to
  // price_range_ticks below it, a sell above); an IOC reaches as far across.
  // Noise that only crossed at random would drag the book (and every
  // fair-price follower) around instead of trading with it.
  template <typename Engine>
  Price random_price(const Engine& e, InstrumentId i, const RandomParams& p, Side side, bool crossing) noexcept {
    const double fair = e.risk_fair_price(i);
    if (!std::isfinite(fair)) return 0;
    const market::InstrumentConfig& ic = e.instrument(i);
    const auto ticks = static_cast<std::int64_t>(draw(static_cast<std::uint64_t>(p.price_range_ticks) + 1));
    const std::int64_t away = side == Side::kBuy ? -1 : 1;
    const std::int64_t offset = (crossing ? -away : away) * (crossing ? ticks : ticks + 1);
    return clamp_to_band(ic, round_to_tick(fair, ic.tick_size) + offset * ic.tick_size);
  }

  template <typename Engine>
  void new_order(Engine& e, InstrumentId i, const RandomParams& p, OrderType type) noexcept {
    if (type == OrderType::kLimit && open_orders(e, i) >= p.max_open_orders) return;
    const Side side = draw(2) == 0 ? Side::kBuy : Side::kSell;
    const Price price = random_price(e, i, p, side, type != OrderType::kLimit);
    if (price == 0) return;
    OrderRequest rq;
    rq.instrument = i;
    rq.side = side;
    rq.type = type;
    rq.price = price;
    rq.qty = static_cast<Qty>(draw(static_cast<std::uint64_t>(p.max_qty))) + 1;
    (void)e.place(rq);
  }

  // The n-th open order of the instrument that accepts a request now (live, nothing in flight).
  template <typename Engine>
  const Order* pick_live(const Engine& e, InstrumentId i) noexcept {
    std::uint32_t n = 0;
    for (const Side s : {Side::kBuy, Side::kSell})
      e.orders().for_each_order(i, s, [&](const Order& o) { n += o.state == OrderState::kLive ? 1 : 0; });
    if (n == 0) return nullptr;
    std::uint64_t k = draw(n);
    const Order* found = nullptr;
    for (const Side s : {Side::kBuy, Side::kSell})
      e.orders().for_each_order(i, s, [&](const Order& o) {
        if (o.state != OrderState::kLive || found != nullptr) return;
        if (k == 0) found = &o;
        else --k;
      });
    return found;
  }
  template <typename Engine>
  std::uint32_t open_orders(const Engine& e, InstrumentId i) const noexcept {
    std::uint32_t n = 0;
    for (const Side s : {Side::kBuy, Side::kSell})
      e.orders().for_each_order(i, s, [&](const Order& o) { n += o.done ? 0 : 1; });
    return n;
  }
  template <typename Engine>
  void cancel_one(Engine& e, InstrumentId i) noexcept {
    if (const Order* o = pick_live(e, i)) (void)e.cancel(o->id);
  }
  template <typename Engine>
  void modify_one(Engine& e, InstrumentId i, const RandomParams& p) noexcept {
    const Order* o = pick_live(e, i);
    if (o == nullptr) return;
    const Price price = random_price(e, i, p, o->side, false);
    if (price == 0) return;
    const Qty qty = o->cum_qty + static_cast<Qty>(draw(static_cast<std::uint64_t>(p.max_qty))) + 1;
    (void)e.modify(o->id, price, qty);
  }

  std::vector<StrategyParams> params_;
  std::vector<TimeNs> next_due_ns_;
  std::mt19937_64 rng_;
};

}  // namespace nanotick::trading
