#include "trading/features.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace nanotick::trading {

namespace {

void check_alpha(double alpha, const char* field) {
  // Written so that NaN fails too.
  if (!(alpha > 0.0 && alpha <= 1.0))
    throw std::invalid_argument(std::string("features: ") + field + " must be in (0, 1], got " + std::to_string(alpha) +
                                " (the weight of the newest sample in the EWMA)");
}

}  // namespace

void FeatureConfig::validate() const {
  if (fair_price_kind != FairPriceKind::kMicroprice && fair_price_kind != FairPriceKind::kMid)
    throw std::invalid_argument("features: fair_price_kind must be microprice (1) or mid (2), got " +
                                std::to_string(static_cast<unsigned>(fair_price_kind)));
  if (imbalance_levels < 1 || imbalance_levels > kMaxImbalanceLevels)
    throw std::invalid_argument("features: imbalance_levels must be in [1, " + std::to_string(kMaxImbalanceLevels) +
                                "], got " + std::to_string(imbalance_levels));
  check_alpha(volatility_alpha, "volatility_alpha");
  check_alpha(trade_flow_alpha, "trade_flow_alpha");
  if (volatility && !fair_price)
    throw std::invalid_argument(
        "features: volatility is the volatility of the fair price: enable fair_price too (or disable volatility)");
}

FeatureEngine::FeatureEngine(const FeatureConfig& config) : config_(config) {
  config_.validate();
  reset();
}

void FeatureEngine::reset() noexcept {
  v_ = FeatureValues{};
  if (config_.trade_flow) v_.trade_flow = 0.0;
  bid_depth_ = Depth{};
  ask_depth_ = Depth{};
  variance_ = FeatureValues::kNaN;
}

void FeatureEngine::on_book_update(const book::InstrumentBook& book) noexcept {
  ++v_.book_updates;
  (void)refresh_touch(book);
  derive_from_touch();  // idempotent for an unchanged touch: no volatility sample without a move
  if (config_.imbalance) {
    if (config_.imbalance_levels > 1) {
      sum_depth(book, Side::kBuy);
      sum_depth(book, Side::kSell);
    }
    derive_imbalance();
  }
}

void FeatureEngine::on_book_update(const book::InstrumentBook& book, Side side, Price price) noexcept {
  if (!is_valid(side)) {
    on_book_update(book);
    return;
  }
  ++v_.book_updates;
  if (refresh_touch(book)) derive_from_touch();
  if (config_.imbalance) {
    if (config_.imbalance_levels > 1 && within_depth(side, price)) sum_depth(book, side);
    derive_imbalance();
  }
}

bool FeatureEngine::on_trade(const TradeEvent& trade) noexcept {
  if (!is_valid(trade.aggressor) || trade.qty <= 0) return false;
  ++v_.trades;
  v_.last_trade_price = trade.price;
  v_.last_trade_qty = trade.qty;
  v_.last_aggressor = trade.aggressor;
  if (config_.aggressive_ratio) {
    // A buy aggressor lifts the ask, a sell aggressor hits the bid.
    const Qty hit = trade.aggressor == Side::kBuy ? v_.ask_qty : v_.bid_qty;
    v_.aggressive_ratio = hit > 0 ? static_cast<double>(trade.qty) / static_cast<double>(hit) : FeatureValues::kNaN;
  }
  if (config_.trade_flow) {
    const double signed_qty = static_cast<double>(sign_of(trade.aggressor) * trade.qty);
    v_.trade_flow += config_.trade_flow_alpha * (signed_qty - v_.trade_flow);
  }
  return true;
}

bool FeatureEngine::refresh_touch(const book::InstrumentBook& book) noexcept {
  const std::optional<market::LevelView> bid = book.best(Side::kBuy);
  const std::optional<market::LevelView> ask = book.best(Side::kSell);
  const Price bid_price = bid ? bid->price : 0;
  const Qty bid_qty = bid ? bid->qty : 0;
  const Price ask_price = ask ? ask->price : 0;
  const Qty ask_qty = ask ? ask->qty : 0;
  const bool changed = bid.has_value() != v_.has_bid || ask.has_value() != v_.has_ask || bid_price != v_.bid_price ||
                       bid_qty != v_.bid_qty || ask_price != v_.ask_price || ask_qty != v_.ask_qty;
  v_.has_bid = bid.has_value();
  v_.has_ask = ask.has_value();
  v_.bid_price = bid_price;
  v_.bid_qty = bid_qty;
  v_.ask_price = ask_price;
  v_.ask_qty = ask_qty;
  return changed;
}

void FeatureEngine::derive_from_touch() noexcept {
  const double previous_fair = v_.fair_price;
  if (v_.has_bid && v_.has_ask) {
    const double bid = static_cast<double>(v_.bid_price);
    const double ask = static_cast<double>(v_.ask_price);
    const double mid = 0.5 * (bid + ask);
    v_.mid = config_.mid ? mid : FeatureValues::kNaN;
    v_.spread = config_.spread ? ask - bid : FeatureValues::kNaN;
    if (config_.fair_price) {
      if (config_.fair_price_kind == FairPriceKind::kMid) {
        v_.fair_price = mid;
      } else {
        // Level quantities are > 0 (a level exists only while it holds an order).
        const double bid_qty = static_cast<double>(v_.bid_qty);
        const double ask_qty = static_cast<double>(v_.ask_qty);
        v_.fair_price = (bid * ask_qty + ask * bid_qty) / (bid_qty + ask_qty);
      }
    }
  } else {
    v_.mid = FeatureValues::kNaN;
    v_.spread = FeatureValues::kNaN;
    v_.fair_price = FeatureValues::kNaN;
  }
  if (config_.volatility && !std::isnan(previous_fair) && !std::isnan(v_.fair_price) &&
      v_.fair_price != previous_fair) {
    const double change = v_.fair_price - previous_fair;
    const double squared = change * change;
    variance_ = std::isnan(variance_) ? squared : variance_ + config_.volatility_alpha * (squared - variance_);
    v_.volatility = std::sqrt(variance_);
  }
}

void FeatureEngine::sum_depth(const book::InstrumentBook& book, Side side) noexcept {
  Depth depth;
  std::uint32_t seen = 0;
  const std::uint32_t wanted = config_.imbalance_levels;
  book.for_each_top_level(side, wanted, [&depth, &seen, wanted](const market::LevelView& level) {
    depth.qty += static_cast<double>(level.qty);
    if (++seen == wanted) {
      depth.full = true;
      depth.edge = level.price;
    }
  });
  (side == Side::kBuy ? bid_depth_ : ask_depth_) = depth;
}

void FeatureEngine::derive_imbalance() noexcept {
  // One level: the touch already holds both quantities (no walk at all).
  const double bids = config_.imbalance_levels == 1 ? static_cast<double>(v_.bid_qty) : bid_depth_.qty;
  const double asks = config_.imbalance_levels == 1 ? static_cast<double>(v_.ask_qty) : ask_depth_.qty;
  const double total = bids + asks;
  v_.imbalance = total > 0.0 ? (bids - asks) / total : FeatureValues::kNaN;
}

bool FeatureEngine::within_depth(Side side, Price price) const noexcept {
  const Depth& depth = side == Side::kBuy ? bid_depth_ : ask_depth_;
  if (!depth.full) return true;  // fewer than N levels: any change is inside the top N
  // Behind the edge = worse: lower for bids, higher for asks.
  return side == Side::kBuy ? price >= depth.edge : price <= depth.edge;
}

}  // namespace nanotick::trading
