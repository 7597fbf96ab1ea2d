// The callbacks a strategy may leave out (TradeEngine's StrategyFor concept
// asks for all of them): a strategy derives from StrategyDefaults and
// declares only the ones it acts on; its own declaration of a name hides the
// default. Static dispatch as before: these are inline no-ops, plus the one
// rule every strategy here shares -- an instrument whose book is no longer
// live has its orders cancelled.
#pragma once

#include "trading/order_manager_types.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

struct StrategyDefaults {
  template <typename Engine>
  void on_book(Engine&, InstrumentId) noexcept {}
  template <typename Engine>
  void on_trade(Engine&, const TradeEvent&) noexcept {}
  template <typename Engine>
  void on_order_event(Engine&, const OrderEvent&) noexcept {}
  template <typename Engine>
  void on_instrument_state(Engine& e, InstrumentId i, bool live) noexcept {
    if (!live) e.cancel_all(i);
  }
  template <typename Engine>
  void on_timer(Engine&, TimeNs) noexcept {}
  template <typename Engine>
  void on_session(Engine&, bool) noexcept {}
};

}  // namespace nanotick::trading
