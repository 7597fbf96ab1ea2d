#include "trading/risk_manager.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/time_units.hpp"

namespace nanotick::trading {

namespace {

// One order in the throttle's units: the bucket counts 1e-9 orders, so a
// refill of orders_per_second per second is orders_per_second units per
// nanosecond (integer arithmetic, no division per message).
constexpr std::int64_t kTokenUnit = static_cast<std::int64_t>(core::kNsPerSec);
constexpr std::uint32_t kMaxOrdersPerSecond = 100'000'000;
constexpr std::uint32_t kMaxBurst = 1'000'000;

constexpr Int128 abs128(Int128 v) noexcept { return v < 0 ? -v : v; }

constexpr bool is_valid_type(OrderType t) noexcept {
  return t == OrderType::kLimit || t == OrderType::kIoc || t == OrderType::kFok || t == OrderType::kMarket;
}

[[noreturn]] void bad_limit(const std::string& where, const char* field, const char* range, std::int64_t got) {
  throw std::invalid_argument("risk limits: " + where + ": " + field + " must be " + range + ", got " +
                              std::to_string(got));
}

const GlobalRiskLimits& checked(const GlobalRiskLimits& g) {
  const std::string where = "global";
  if (g.max_open_orders < 1 || g.max_open_orders > GlobalRiskLimits::kMaxOpenOrdersCap)
    bad_limit(where, "max_open_orders", "in [1, 16777216]", g.max_open_orders);
  if (g.max_open_notional < 1) bad_limit(where, "max_open_notional", ">= 1", g.max_open_notional);
  if (g.max_loss < 0) bad_limit(where, "max_loss", ">= 0", g.max_loss);
  if (g.orders_per_second < 1 || g.orders_per_second > kMaxOrdersPerSecond)
    bad_limit(where, "orders_per_second", "in [1, 100000000]", g.orders_per_second);
  if (g.burst < 1 || g.burst > kMaxBurst) bad_limit(where, "burst", "in [1, 1000000]", g.burst);
  return g;
}

void check_instrument(const InstrumentRiskLimits& l, std::size_t index) {
  const std::string where = "instrument " + std::to_string(index);
  if (l.max_order_qty < 1) bad_limit(where, "max_order_qty", ">= 1", l.max_order_qty);
  if (l.max_position < 0) bad_limit(where, "max_position", ">= 0", l.max_position);
  if (l.max_open_orders < 1) bad_limit(where, "max_open_orders", ">= 1", l.max_open_orders);
  if (l.max_open_notional < 1) bad_limit(where, "max_open_notional", ">= 1", l.max_open_notional);
  if (l.max_loss < 0) bad_limit(where, "max_loss", ">= 0", l.max_loss);
  if (l.price_band < 0) bad_limit(where, "price_band", ">= 0", l.price_band);
}

}  // namespace

void RiskManager::place_counters(core::CountersFile& file) {
  file.place(allowed_, "risk.allowed");
  for (std::size_t r = 1; r < blocked_.size(); ++r)
    file.place(blocked_[r], "risk.blocked." + std::string(to_string(static_cast<RiskResult>(r))));
}

std::string_view to_string(RiskResult r) noexcept {
  switch (r) {
    case RiskResult::kAllowed: return "allowed";
    case RiskResult::kUnknownInstrument: return "unknown instrument";
    case RiskResult::kInvalidSide: return "side is not buy or sell";
    case RiskResult::kInvalidOrderType: return "order type is not limit, IOC, FOK or market";
    case RiskResult::kInvalidQty: return "quantity <= 0";
    case RiskResult::kUnpricedOrder: return "market order: no limit price to check (send IOC at a limit)";
    case RiskResult::kDuplicateOrder: return "client order id already working";
    case RiskResult::kUnknownOrder: return "client order id not working";
    case RiskResult::kModifyPending: return "a modify of the order is still unanswered";
    case RiskResult::kMaxLoss: return "instrument max loss reached";
    case RiskResult::kMaxLossGlobal: return "global max loss reached";
    case RiskResult::kMaxOrderQty: return "order quantity above max_order_qty";
    case RiskResult::kNoFairPrice: return "no fair price for the price band";
    case RiskResult::kPriceBand: return "price outside the band around the fair price";
    case RiskResult::kMaxPosition: return "position with working orders beyond max_position";
    case RiskResult::kMaxOpenOrders: return "instrument max open orders reached";
    case RiskResult::kMaxOpenOrdersGlobal: return "global max open orders reached";
    case RiskResult::kMaxOpenNotional: return "instrument max open notional exceeded";
    case RiskResult::kMaxOpenNotionalGlobal: return "global max open notional exceeded";
    case RiskResult::kRateThrottle: return "order rate throttle";
  }
  return "unknown result";
}

RiskManager::RiskManager(std::span<const InstrumentRiskLimits> instruments, const GlobalRiskLimits& global, TimeNs now)
    : limits_(instruments.begin(), instruments.end()),
      global_(checked(global)),
      tokens_(std::int64_t{global_.burst} * kTokenUnit),
      token_cap_(std::int64_t{global_.burst} * kTokenUnit),
      tokens_at_ns_(now) {
  if (instruments.empty())
    throw std::invalid_argument("risk limits: the instrument table is empty (configure limits for each instrument)");
  for (std::size_t i = 0; i < limits_.size(); ++i) check_instrument(limits_[i], i);
}

RiskResult RiskManager::check_new(const OrderRequest& request, const WorkingExposure& working,
                                  const PositionKeeper& positions, double fair_price, TimeNs now) noexcept {
  if (request.instrument >= limits_.size() || request.instrument >= positions.instrument_count() ||
      request.instrument >= working.instrument_count())
    return block(RiskResult::kUnknownInstrument);
  if (!is_valid(request.side)) return block(RiskResult::kInvalidSide);
  if (!is_valid_type(request.type)) return block(RiskResult::kInvalidOrderType);
  if (request.qty <= 0) return block(RiskResult::kInvalidQty);
  if (request.type == OrderType::kMarket) return block(RiskResult::kUnpricedOrder);
  if (working.is_working(request.client_order_id)) return block(RiskResult::kDuplicateOrder);
  const OrderExposure added{request.qty, abs128(request.price) * request.qty, true};
  const RiskResult r = check_limits(request.instrument, request.side, request.price, request.qty, added, true, working,
                                    positions, fair_price, now);
  if (r != RiskResult::kAllowed) return block(r);
  allowed_.add();
  return RiskResult::kAllowed;
}

RiskResult RiskManager::check_modify(ClientOrderId id, Price price, Qty qty, const WorkingExposure& working,
                                     const PositionKeeper& positions, double fair_price, TimeNs now) noexcept {
  const Order* o = working.find(id);
  if (o == nullptr || !o->exposure.counted) return block(RiskResult::kUnknownOrder);
  // A modify in flight, or one whose answer a session loss took (it still counts).
  if (o->pending_qty != 0) return block(RiskResult::kModifyPending);
  if (qty <= 0) return block(RiskResult::kInvalidQty);
  if (o->instrument >= limits_.size() || o->instrument >= positions.instrument_count())
    return block(RiskResult::kUnknownInstrument);
  // What the order adds once the modify is in flight (the larger of old and
  // new), over what it counts now; never negative.
  const OrderExposure then_counted = exposure_if_modified(*o, price, qty);
  const OrderExposure added{then_counted.qty - o->exposure.qty, then_counted.notional - o->exposure.notional, false};
  const RiskResult r =
      check_limits(o->instrument, o->side, price, qty, added, false, working, positions, fair_price, now);
  if (r != RiskResult::kAllowed) return block(r);
  allowed_.add();
  return RiskResult::kAllowed;
}

RiskResult RiskManager::check_limits(InstrumentId instrument, Side side, Price price, Qty qty,
                                     const OrderExposure& added, bool new_order, const WorkingExposure& working,
                                     const PositionKeeper& positions, double fair_price, TimeNs now) const noexcept {
  const InstrumentRiskLimits& l = limits_[instrument];
  const InstrumentPosition& p = *positions.position(instrument);
  if (p.pnl() < -static_cast<double>(l.max_loss)) return RiskResult::kMaxLoss;
  if (positions.total_pnl() < -static_cast<double>(global_.max_loss)) return RiskResult::kMaxLossGlobal;
  if (qty > l.max_order_qty) return RiskResult::kMaxOrderQty;
  if (!std::isfinite(fair_price)) return RiskResult::kNoFairPrice;
  if (std::fabs(static_cast<double>(price) - fair_price) > static_cast<double>(l.price_band))
    return RiskResult::kPriceBand;
  const WorkingExposure::Instrument& s = working.instrument(instrument);
  if (side == Side::kBuy) {
    if (Int128{p.position} + s.open_buy_qty + added.qty > l.max_position) return RiskResult::kMaxPosition;
  } else {
    if (Int128{p.position} - s.open_sell_qty - added.qty < -Int128{l.max_position}) return RiskResult::kMaxPosition;
  }
  if (new_order) {
    if (s.open_orders >= l.max_open_orders) return RiskResult::kMaxOpenOrders;
    if (working.open_orders() >= global_.max_open_orders) return RiskResult::kMaxOpenOrdersGlobal;
  }
  if (s.open_notional + added.notional > l.max_open_notional) return RiskResult::kMaxOpenNotional;
  if (working.open_notional_exact() + added.notional > global_.max_open_notional)
    return RiskResult::kMaxOpenNotionalGlobal;
  if (tokens_at(now) < kTokenUnit) return RiskResult::kRateThrottle;
  return RiskResult::kAllowed;
}

std::int64_t RiskManager::tokens_at(TimeNs now) const noexcept {
  if (now <= tokens_at_ns_) return tokens_;
  const std::uint64_t elapsed = now - tokens_at_ns_;
  const std::uint64_t rate = global_.orders_per_second;
  // tokens_ is in [-cap, cap], so missing <= 2 cap (< 2^51) and, below the
  // time that fills the bucket, elapsed x rate < missing + rate: no overflow.
  const std::uint64_t missing = static_cast<std::uint64_t>(token_cap_ - tokens_);
  if (elapsed >= (missing + rate - 1) / rate) return token_cap_;
  return tokens_ + static_cast<std::int64_t>(elapsed * rate);
}

void RiskManager::on_sent(TimeNs now) noexcept {
  // Below zero only when an order went out without a check; the debt is
  // bounded so that a burst of unchecked sends cannot block for ever.
  tokens_ = std::max(tokens_at(now) - kTokenUnit, -token_cap_);
  tokens_at_ns_ = std::max(tokens_at_ns_, now);
}

std::uint64_t RiskManager::blocked_total() const noexcept {
  std::uint64_t n = 0;
  for (const core::Counter& c : blocked_) n += c.get();
  return n;
}

}  // namespace nanotick::trading
