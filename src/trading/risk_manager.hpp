// Pre-trade risk checks of the trading client. Not thread-safe: the trade
// engine's thread is its single writer; the counters (allowed, blocked by
// reason, refused events) may be read from any thread.
//
// Working orders count, not only fills: from the moment an order is sent
// until it is filled, cancelled or rejected, its open quantity counts towards
// the position limit and its notional towards the notional limits. The risk
// manager keeps its own table of working orders (client order id -> side,
// price, quantities) fed by the caller's events, rather than trusting the
// caller to pass consistent aggregates: every event names an order, and an
// event that does not fit the table (unknown id, fill of more than the
// order, ...) is refused with a specific result and counted.
//
// Protocol for the caller (the trade engine, single-threaded):
//   check_new(request, positions, fair, now)  -> kAllowed or the first failing reason
//   on_new_sent(request, now)                 the order went out (counts it, takes a throttle token)
//   check_modify / on_modify_sent             the same for a ModifyOrder
//   on_fill / on_cancelled / on_rejected      execution reports
//   on_modified / on_modify_rejected          the answer to a modify
// check_*() change no exposure: report each allowed order sent before
// checking the next one, or the second check does not see the first order.
// An acceptance (ExecType kAccepted) changes no exposure, the order counted
// from the moment it was sent, so there is no event for it. Cancels are
// never checked: they only reduce risk.
//
// A pending modify counts conservatively: until the exchange answers, either
// the old or the new version of the order may be live (or fill), so the
// order counts with the larger open quantity and the larger notional of the
// two.
//
// Checks, in this order (the first failure is returned and counted):
//   request validity, duplicate / unknown order, max loss (instrument, then
//   global: realised + unrealised PnL below -max_loss blocks new orders and
//   modifies), max order size, price band (|price - fair| <= band; no fair
//   price blocks), max position including open orders of the same side, max
//   open orders (instrument, global), max open notional (instrument, global),
//   the order-rate throttle (a token bucket of `burst` orders refilled at
//   `orders_per_second`; new orders and modifies take a token). Each limit
//   allows an order that lands exactly on it.
//
// Market orders have no limit price: neither the band nor the notional can
// bound them, so they are refused (kUnpricedOrder); strategies send IOC at a
// limit price instead. Units are the position keeper's: prices and PnL in
// the venue's price unit, notional = |price| x open quantity. Nothing
// allocates after construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/counter.hpp"
#include "core/int_hash_map.hpp"
#include "trading/position_keeper.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

enum class RiskResult : std::uint8_t {
  kAllowed = 0,
  // the request itself
  kUnknownInstrument,   // instrument outside the limits table (or the position keeper's)
  kInvalidSide,         // side is neither buy nor sell
  kInvalidOrderType,    // order type is not limit, IOC, FOK or market
  kInvalidQty,          // quantity <= 0
  kUnpricedOrder,       // market order: no limit price for the band and notional checks
  kDuplicateOrder,      // new order whose client order id is already working
  kUnknownOrder,        // modify of a client order id that is not working
  kModifyPending,       // modify of an order whose previous modify is not answered yet
  // limits
  kMaxLoss,             // the instrument's PnL is below -max_loss
  kMaxLossGlobal,       // the total PnL is below the global -max_loss
  kMaxOrderQty,         // quantity (a modify's new total) above max_order_qty
  kNoFairPrice,         // no fair price (NaN, infinite) to centre the price band on
  kPriceBand,           // |price - fair price| above price_band
  kMaxPosition,         // position + working quantity of the side + this order beyond max_position
  kMaxOpenOrders,       // the instrument already has max_open_orders working
  kMaxOpenOrdersGlobal, // max_open_orders working over all instruments
  kMaxOpenNotional,     // the instrument's working notional would exceed max_open_notional
  kMaxOpenNotionalGlobal,
  kRateThrottle,        // no throttle token: orders_per_second / burst exceeded
};

inline constexpr std::size_t kRiskResultCount = static_cast<std::size_t>(RiskResult::kRateThrottle) + 1;

std::string_view to_string(RiskResult r) noexcept;

// What an order event did to the table of working orders.
enum class OrderEventResult : std::uint8_t {
  kOk = 0,
  kUnknownInstrument,  // on_new_sent for an instrument outside the limits table
  kInvalidOrder,       // bad side, quantity <= 0, a market order, or |price| x qty beyond int64
  kDuplicateOrder,     // on_new_sent of a client order id that is already working
  kCapacity,           // on_new_sent with the global max_open_orders already working (it was not checked)
  kUnknownOrder,       // event for a client order id that is not working
  kModifyPending,      // on_modify_sent while a modify is already pending
  kNoModifyPending,    // on_modified / on_modify_rejected without a pending modify
  kOverfill,           // fill beyond the order's quantity: applied, the order is done
};

inline constexpr std::size_t kOrderEventResultCount = static_cast<std::size_t>(OrderEventResult::kOverfill) + 1;

std::string_view to_string(OrderEventResult r) noexcept;

struct InstrumentRiskLimits {
  Qty max_order_qty = 100;                    // per order (a modify: its new total), >= 1
  Qty max_position = 1'000;                   // |position including working orders|, >= 0
  std::uint32_t max_open_orders = 64;         // working orders of the instrument, >= 1
  std::int64_t max_open_notional = 100'000'000;  // sum of |price| x open qty of working orders, >= 1
  std::int64_t max_loss = 1'000'000;          // PnL below -max_loss blocks, >= 0
  Price price_band = 100;                     // max |price - fair price|, >= 0
};

struct GlobalRiskLimits {
  std::uint32_t max_open_orders = 256;                // working orders over all instruments, [1, 2^24]
  std::int64_t max_open_notional = 1'000'000'000;     // over all instruments, >= 1
  std::int64_t max_loss = 10'000'000;                 // total PnL below -max_loss blocks, >= 0
  std::uint32_t orders_per_second = 1'000;            // throttle refill, [1, 10^8]
  std::uint32_t burst = 100;                          // throttle bucket size, [1, 10^6]

  static constexpr std::uint32_t kMaxOpenOrdersCap = 1u << 24;
};

class RiskManager {
 public:
  // One limits entry per instrument, InstrumentId = index. The throttle
  // starts full at `now`. Start-up only: throws std::invalid_argument naming
  // the instrument and the field for an empty table or a value out of range.
  RiskManager(std::span<const InstrumentRiskLimits> instruments, const GlobalRiskLimits& global, TimeNs now);
  RiskManager(const RiskManager&) = delete;
  RiskManager& operator=(const RiskManager&) = delete;

  // May `request` be sent now? `fair_price` is the instrument's (NaN when
  // unknown); `positions` gives the position and PnL.
  [[nodiscard]] RiskResult check_new(const OrderRequest& request, const PositionKeeper& positions,
                                     double fair_price, TimeNs now) noexcept;
  // May the working order `id` be modified to `price` and new total `qty`
  // (filled part included, as in ModifyOrder)?
  [[nodiscard]] RiskResult check_modify(ClientOrderId id, Price price, Qty qty, const PositionKeeper& positions,
                                        double fair_price, TimeNs now) noexcept;

  OrderEventResult on_new_sent(const OrderRequest& request, TimeNs now) noexcept;
  OrderEventResult on_modify_sent(ClientOrderId id, Price price, Qty qty, TimeNs now) noexcept;
  OrderEventResult on_modified(ClientOrderId id) noexcept;
  OrderEventResult on_modify_rejected(ClientOrderId id) noexcept;
  OrderEventResult on_fill(ClientOrderId id, Qty qty) noexcept;
  // Cancelled (by us, by a modify below the filled quantity, an IOC's rest)
  // or rejected: the order stops working either way.
  OrderEventResult on_cancelled(ClientOrderId id) noexcept { return finish(id); }
  OrderEventResult on_rejected(ClientOrderId id) noexcept { return finish(id); }

  // Working exposure; 0 for an unknown instrument. The buy (sell) quantity
  // is what would make the position longer (shorter) if it all filled.
  std::uint32_t open_orders(InstrumentId instrument) const noexcept;
  Qty open_buy_qty(InstrumentId instrument) const noexcept;
  Qty open_sell_qty(InstrumentId instrument) const noexcept;
  std::int64_t open_notional(InstrumentId instrument) const noexcept;
  std::uint32_t open_orders() const noexcept { return global_open_orders_; }
  // Whether the order is in the table of working orders.
  bool is_working(ClientOrderId id) const noexcept { return orders_.contains(id); }
  std::int64_t open_notional() const noexcept;

  std::uint64_t allowed() const noexcept { return allowed_.get(); }
  std::uint64_t blocked(RiskResult r) const noexcept { return blocked_[static_cast<std::size_t>(r)].get(); }
  std::uint64_t blocked_total() const noexcept;
  std::uint64_t refused_events(OrderEventResult r) const noexcept {
    return refused_events_[static_cast<std::size_t>(r)].get();
  }

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(limits_.size()); }
  const InstrumentRiskLimits& limits(InstrumentId instrument) const noexcept { return limits_[instrument]; }
  const GlobalRiskLimits& global_limits() const noexcept { return global_; }

 private:
  struct WorkingOrder {
    InstrumentId instrument = 0;
    Side side = Side::kBuy;
    bool modify_pending = false;
    Price price = 0;
    Qty order_qty = 0;  // total, filled part included
    Qty cum_qty = 0;
    Price new_price = 0;  // the pending modify's
    Qty new_qty = 0;
  };
  // What a working order adds to its instrument's aggregates.
  struct Exposure {
    Int128 qty = 0;
    Int128 notional = 0;
  };
  struct InstrumentState {
    Int128 open_buy_qty = 0;
    Int128 open_sell_qty = 0;
    Int128 open_notional = 0;
    std::uint32_t open_orders = 0;
  };

  static Exposure exposure_of(const WorkingOrder& o) noexcept;
  void add_exposure(const WorkingOrder& o, std::int64_t direction) noexcept;

  // The checks shared by new orders and modifies, from max loss on.
  // `added` is what the order adds to its side's working exposure and
  // `new_order` whether it adds a working order.
  RiskResult check_limits(InstrumentId instrument, Side side, Price price, Qty qty, Exposure added, bool new_order,
                          const PositionKeeper& positions, double fair_price, TimeNs now) const noexcept;

  // Throttle tokens (in 1e-9 orders) as of `now`, without taking any.
  std::int64_t tokens_at(TimeNs now) const noexcept;
  void take_token(TimeNs now) noexcept;

  OrderEventResult finish(ClientOrderId id) noexcept;
  // Drops a working order whose exposure was already taken off the aggregates.
  void forget(ClientOrderId id, InstrumentId instrument) noexcept;
  RiskResult block(RiskResult r) noexcept {
    blocked_[static_cast<std::size_t>(r)].add();
    return r;
  }
  OrderEventResult refuse(OrderEventResult r) noexcept {
    refused_events_[static_cast<std::size_t>(r)].add();
    return r;
  }

  std::vector<InstrumentRiskLimits> limits_;
  GlobalRiskLimits global_;
  std::vector<InstrumentState> state_;
  core::IntHashMap<ClientOrderId, WorkingOrder> orders_;
  std::uint32_t global_open_orders_ = 0;
  Int128 global_open_notional_ = 0;

  std::int64_t tokens_;  // may go negative if orders are sent without a check: that debt is paid back first
  std::int64_t token_cap_;
  TimeNs tokens_at_ns_;

  core::Counter allowed_;
  std::array<core::Counter, kRiskResultCount> blocked_;
  std::array<core::Counter, kOrderEventResultCount> refused_events_;
};

}  // namespace nanotick::trading
