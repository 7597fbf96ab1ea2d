// Pre-trade risk checks of the trading client. Not thread-safe: the trade
// engine's thread is its single writer; the counters (allowed, blocked by
// reason) may be read from any thread.
//
// Working orders count, not only fills: from the moment an order is sent
// until it is filled, cancelled or rejected, its open quantity counts towards
// the position limit and its notional towards the notional limits. The risk
// manager keeps no orders of its own: it checks against the order manager's
// WorkingExposure (working_exposure.hpp), a const view of the trader's one
// ledger of working orders, which says exactly what counts (a pending modify
// with the larger of its old and new version, unknown orders after a session
// loss as the worst case). What it keeps is its limits, the throttle and its
// counters; positions and PnL come from the PositionKeeper it is passed.
//
// Protocol for the caller (the trade engine, single-threaded):
//   check_new(request, working, positions, fair, now)  -> kAllowed or the first failing reason
//   check_modify(id, price, qty, working, ...)          the same for a ModifyOrder
//   on_sent(now)                                        a new order or modify went out: takes a throttle token
// check_*() change nothing but counters: send an allowed order (the order
// manager then counts it) before checking the next one, or the second check
// does not see the first order. Cancels are never checked: they only reduce
// risk.
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
#include "core/counters_file.hpp"
#include "trading/position_keeper.hpp"
#include "trading/trading_types.hpp"
#include "trading/working_exposure.hpp"

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
  kUnknownOrder,        // modify of a client order id that is not working (not in the working exposure)
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

  // May `request` be sent now? `working` is the order manager's exposure,
  // `fair_price` the instrument's (NaN when unknown); `positions` gives the
  // position and PnL.
  [[nodiscard]] RiskResult check_new(const OrderRequest& request, const WorkingExposure& working,
                                     const PositionKeeper& positions, double fair_price, TimeNs now) noexcept;
  // May the working order `id` be modified to `price` and new total `qty`
  // (filled part included, as in ModifyOrder)?
  [[nodiscard]] RiskResult check_modify(ClientOrderId id, Price price, Qty qty, const WorkingExposure& working,
                                        const PositionKeeper& positions, double fair_price, TimeNs now) noexcept;

  // A new order or a modify went out (checked or not): takes a throttle token.
  void on_sent(TimeNs now) noexcept;

  std::uint64_t allowed() const noexcept { return allowed_.get(); }
  std::uint64_t blocked(RiskResult r) const noexcept { return blocked_[static_cast<std::size_t>(r)].get(); }
  // Start-up: "risk.allowed" and "risk.blocked.<reason>" into `file`.
  void place_counters(core::CountersFile& file);
  std::uint64_t blocked_total() const noexcept;

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(limits_.size()); }
  const InstrumentRiskLimits& limits(InstrumentId instrument) const noexcept { return limits_[instrument]; }
  const GlobalRiskLimits& global_limits() const noexcept { return global_; }

 private:
  // The checks shared by new orders and modifies, from max loss on.
  // `added` is what the order adds to its side's working exposure (its qty
  // and notional) and `new_order` whether it adds a working order.
  RiskResult check_limits(InstrumentId instrument, Side side, Price price, Qty qty, const OrderExposure& added,
                          bool new_order, const WorkingExposure& working, const PositionKeeper& positions,
                          double fair_price, TimeNs now) const noexcept;

  // Throttle tokens (in 1e-9 orders) as of `now`, without taking any.
  std::int64_t tokens_at(TimeNs now) const noexcept;

  RiskResult block(RiskResult r) noexcept {
    blocked_[static_cast<std::size_t>(r)].add();
    return r;
  }

  std::vector<InstrumentRiskLimits> limits_;
  GlobalRiskLimits global_;

  std::int64_t tokens_;  // may go negative if orders are sent without a check: that debt is paid back first
  std::int64_t token_cap_;
  TimeNs tokens_at_ns_;

  core::Counter allowed_;
  std::array<core::Counter, kRiskResultCount> blocked_;
};

}  // namespace nanotick::trading
