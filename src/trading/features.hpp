// The feature engine of one instrument: values a strategy reads, updated
// from the instrument's book after each change and from the feed's trades.
// Not thread-safe: the trade engine's thread is its single writer and reader.
//
// Features (each can be switched off per strategy in FeatureConfig; a value
// that is switched off or not available, e.g. a fair price with one side of
// the book empty, reads NaN):
// - touch: best bid / ask price and quantity (always kept: everything else
//   derives from it);
// - mid: (bid + ask) / 2;
// - spread: ask - bid, in price units;
// - fair price: the microprice (the size-weighted mid of the issue),
//   (bid x ask_qty + ask x bid_qty) / (bid_qty + ask_qty): each price is
//   weighted by the size on the OTHER side, so the fair price leans towards
//   the side with less size, the one more likely to be taken out next; or the
//   plain mid (FairPriceKind);
// - book imbalance over the top N levels: (bid_qty_N - ask_qty_N) /
//   (bid_qty_N + ask_qty_N), in [-1, 1];
// - volatility of the fair price: sqrt of an EWMA of squared fair price
//   changes, in price units. A sample is taken each time the fair price
//   moves (not per book event), so churn deep in the book or at other
//   levels does not dilute it; a gap (fair price unavailable) restarts the
//   return chain without a sample across it. Changes are in price units, not
//   relative: prices are integers in an arbitrary venue unit that may be
//   near or below zero, where a relative return means nothing;
// - trade flow: EWMA of signed aggressor volume per trade (+qty for a buy
//   aggressor, -qty for a sell), 0 before any trade;
// - aggressive trade ratio: the last trade's quantity over the quantity at
//   the touch it hit (the best ask for a buy aggressor) as it stood before
//   the trade: near 1 when an aggressor cleared the level.
//
// Cost per update: the touch is O(1) (InstrumentBook::best). The imbalance
// over N > 1 levels needs the top N levels; the engine remembers the price of
// the N-th level of each side and skips the walk when a change lies strictly
// behind it (the top N are then unchanged), so only changes inside the top N
// walk the side. InstrumentBook::for_each_level has no early exit, so such a
// walk visits every level of the side (summing only the first N). Nothing
// allocates after construction.
#pragma once

#include <cstdint>
#include <limits>

#include "book/instrument_book.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

enum class FairPriceKind : std::uint8_t {
  kMicroprice = 1,  // size-weighted by the opposite side (see above)
  kMid = 2,         // (bid + ask) / 2
};

struct FeatureConfig {
  bool mid = true;
  bool spread = true;
  bool fair_price = true;
  FairPriceKind fair_price_kind = FairPriceKind::kMicroprice;
  bool imbalance = false;
  std::uint32_t imbalance_levels = 1;  // N: top N levels per side, in [1, kMaxImbalanceLevels]
  bool volatility = false;             // needs fair_price
  double volatility_alpha = 0.05;      // EWMA weight of the newest squared change, in (0, 1]
  bool trade_flow = false;
  double trade_flow_alpha = 0.1;       // EWMA weight of the newest trade, in (0, 1]
  bool aggressive_ratio = true;

  static constexpr std::uint32_t kMaxImbalanceLevels = 1u << 16;

  // Start-up only: throws std::invalid_argument naming the field, its value
  // and the valid range.
  void validate() const;
};

struct FeatureValues {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  // The touch as of the last book update; a side's fields are 0 when it is empty.
  bool has_bid = false;
  bool has_ask = false;
  Price bid_price = 0;
  Qty bid_qty = 0;
  Price ask_price = 0;
  Qty ask_qty = 0;

  double mid = kNaN;
  double spread = kNaN;
  double fair_price = kNaN;
  double imbalance = kNaN;
  double volatility = kNaN;
  double trade_flow = kNaN;
  double aggressive_ratio = kNaN;

  // The last trade (valid once trades > 0).
  Price last_trade_price = 0;
  Qty last_trade_qty = 0;
  Side last_aggressor = Side::kBuy;

  std::uint64_t book_updates = 0;
  std::uint64_t trades = 0;
};

class FeatureEngine {
 public:
  // Start-up only: validates the config (throws std::invalid_argument).
  explicit FeatureEngine(const FeatureConfig& config);

  // The book changed in an unknown way (a snapshot was loaded, the engine
  // was reset): recomputes everything from `book`.
  void on_book_update(const book::InstrumentBook& book) noexcept;

  // The book changed at one level: `side` and `price` of the order that was
  // added, reduced, removed or traded. Same result as the full update, but
  // the top-N walk is skipped when the change lies behind the N-th level.
  // A side that is neither buy nor sell falls back to the full update.
  void on_book_update(const book::InstrumentBook& book, Side side, Price price) noexcept;

  // A trade on the feed. Call it BEFORE the book update for the trade's own
  // change, so the aggressive ratio sees the touch the aggressor hit. Returns
  // false, changing nothing, for an aggressor side that is neither buy nor
  // sell or a quantity <= 0.
  [[nodiscard]] bool on_trade(const TradeEvent& trade) noexcept;

  // Forgets everything (the instrument went stale: its book will be
  // reloaded). Values read as after construction.
  void reset() noexcept;

  const FeatureValues& values() const noexcept { return v_; }
  const FeatureConfig& config() const noexcept { return config_; }

 private:
  // Re-reads the touch; true when any of its four values changed.
  bool refresh_touch(const book::InstrumentBook& book) noexcept;
  // Mid, spread, fair price and the volatility sample from the touch.
  void derive_from_touch() noexcept;
  // Sums the top N levels of `side` and remembers the N-th level's price.
  void sum_depth(const book::InstrumentBook& book, Side side) noexcept;
  void derive_imbalance() noexcept;
  // Whether a change at `price` on `side` can alter the top N of that side.
  bool within_depth(Side side, Price price) const noexcept;

  struct Depth {
    double qty = 0.0;         // sum over the top N levels
    bool full = false;        // the side had at least N levels
    Price edge = 0;           // price of the N-th level when full
  };

  FeatureConfig config_;
  FeatureValues v_;
  Depth bid_depth_;
  Depth ask_depth_;
  double variance_ = FeatureValues::kNaN;  // EWMA of squared fair price changes; NaN before the first
};

}  // namespace nanotick::trading
