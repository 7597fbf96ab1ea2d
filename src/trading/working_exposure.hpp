// The trader's working-order exposure (docs/TRADER.md "order_manager"): per
// instrument the open buy and sell quantity, open notional and open order
// count, and the same over all instruments, plus a look-up of the orders
// behind them. The order manager owns it and is its only writer: it updates
// the aggregates whenever one of its orders changes (submit, every answer,
// the disconnect), so there is one ledger of working orders in the trader.
// The risk manager checks new orders and modifies against a const reference
// (the read-only view); strategies may read it too.
//
// Not thread-safe: the trade engine's thread writes (through the order
// manager) and reads it. Sized in the constructor; nothing allocates after.
//
// What an order counts (exposure_of(); the risk manager's rules):
// - from the moment it is sent until its done moment (filled, cancelled,
//   rejected, settled after a session loss): its open quantity (leaves) on
//   its side, |price| x open quantity as notional, one open order. An
//   acceptance changes nothing: the order counted from the send.
// - a modify in flight counts conservatively: until the exchange answers,
//   either version may be live (or fill), so the order counts with the larger
//   open quantity and, separately, the larger notional of the two.
// - an order a fill finished while its modify was in flight keeps counting
//   with the new version's open quantity (new total - filled) until the
//   modify is answered (normally a 202 "too late"), if that is above 0. The
//   fill's leaves of 0 say the old version is gone; the rule is the risk
//   manager's, which kept such an order until the answer.
// - an unknown order (a session loss, see OrderManager) counts as the worst
//   case: its last known open quantity, and a modify that was in flight at
//   the loss keeps counting as if it may have been applied, until a report
//   or the reconcile cancel settles it.
// Sums are 128-bit (exact whatever the prices); the getters clamp to int64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/int_hash_map.hpp"
#include "trading/order_manager_types.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

template <typename Sender>
class OrderManager;

// What `o` adds to the aggregates now (the rules above).
OrderExposure exposure_of(const Order& o) noexcept;
// What the open order `o` would add with a modify to `price` and new total
// `total_qty` in flight (the pre-trade check of that modify).
OrderExposure exposure_if_modified(const Order& o, Price price, Qty total_qty) noexcept;

std::int64_t clamp_int64(Int128 v) noexcept;

class WorkingExposure {
 public:
  struct Instrument {
    Int128 open_buy_qty = 0;   // what would make the position longer if it all filled
    Int128 open_sell_qty = 0;  // ... shorter
    Int128 open_notional = 0;  // both sides
    std::uint32_t open_orders = 0;
  };

  // `orders`: the owner's table of kept orders, for find().
  WorkingExposure(std::uint32_t instruments, const core::IntHashMap<ClientOrderId, Order*>& orders)
      : instruments_(instruments), orders_(orders) {}
  WorkingExposure(const WorkingExposure&) = delete;
  WorkingExposure& operator=(const WorkingExposure&) = delete;

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(instruments_.size()); }
  // Exact sums for the checks; `instrument` must be < instrument_count().
  const Instrument& instrument(InstrumentId instrument) const noexcept { return instruments_[instrument]; }

  // Clamped to int64; 0 for an instrument out of range.
  std::uint32_t open_orders(InstrumentId instrument) const noexcept {
    return instrument < instruments_.size() ? instruments_[instrument].open_orders : 0;
  }
  Qty open_buy_qty(InstrumentId instrument) const noexcept {
    return instrument < instruments_.size() ? clamp_int64(instruments_[instrument].open_buy_qty) : 0;
  }
  Qty open_sell_qty(InstrumentId instrument) const noexcept {
    return instrument < instruments_.size() ? clamp_int64(instruments_[instrument].open_sell_qty) : 0;
  }
  Qty open_qty(InstrumentId instrument, Side side) const noexcept {
    return side == Side::kBuy ? open_buy_qty(instrument) : open_sell_qty(instrument);
  }
  std::int64_t open_notional(InstrumentId instrument) const noexcept {
    return instrument < instruments_.size() ? clamp_int64(instruments_[instrument].open_notional) : 0;
  }
  std::uint32_t open_orders() const noexcept { return open_orders_; }
  Int128 open_notional_exact() const noexcept { return open_notional_; }
  std::int64_t open_notional() const noexcept { return clamp_int64(open_notional_); }

  // An order the owner keeps (open, or done and awaiting answers), nullptr if none.
  const Order* find(ClientOrderId id) const noexcept {
    Order* const* p = orders_.find(id);
    return p != nullptr ? *p : nullptr;
  }
  // Whether the order counts in the aggregates.
  bool is_working(ClientOrderId id) const noexcept {
    const Order* o = find(id);
    return o != nullptr && o->exposure.counted;
  }

 private:
  template <typename Sender>
  friend class OrderManager;

  // The owner: `o` now adds `now` (and o.exposure is set to it).
  void update(Order& o, const OrderExposure& now) noexcept {
    const OrderExposure& was = o.exposure;
    Instrument& s = instruments_[o.instrument];
    (o.side == Side::kBuy ? s.open_buy_qty : s.open_sell_qty) += Int128{now.qty} - was.qty;
    s.open_notional += now.notional - was.notional;
    open_notional_ += now.notional - was.notional;
    if (now.counted != was.counted) {
      s.open_orders = now.counted ? s.open_orders + 1 : s.open_orders - 1;
      open_orders_ = now.counted ? open_orders_ + 1 : open_orders_ - 1;
    }
    o.exposure = now;
  }

  std::vector<Instrument> instruments_;
  const core::IntHashMap<ClientOrderId, Order*>& orders_;
  std::uint32_t open_orders_ = 0;
  Int128 open_notional_ = 0;
};

}  // namespace nanotick::trading
