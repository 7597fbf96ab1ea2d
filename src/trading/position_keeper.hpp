// Positions and PnL of the trading client, per instrument and in total, from
// our fills and a mark price per instrument (the feature engine's fair
// price). Not thread-safe: the trade engine's thread is its single writer;
// the counters of refused fills may be read from any thread.
//
// Accounting (average cost):
// - `position` is signed (> 0 long, < 0 short); `open_cost` is the exact
//   integer cost of the open position, position x average open price, so the
//   average open price is open_cost / position.
// - A fill on the side of the position (or from flat) adds to it:
//   open_cost += signed qty x price.
// - A fill against the position closes min(qty, |position|) at the fill
//   price: that part's share of open_cost is taken out and the difference to
//   the fill price is realised. A fill larger than the position flips it:
//   the whole old side is closed at the fill price and the rest opens the new
//   side at the same price (docs/TRADER.md).
// - Unrealised PnL = position x mark - open_cost; until the first mark the
//   last fill price is the mark.
//
// Units and types: PnL is in price units x quantity (the engine's integer
// price times an integer quantity). Realised PnL and open cost are int64:
// they are sums of integer products, so keeping them integral makes them
// exact and order-independent (no drift however many fills), and a round
// trip that ends flat realises exactly the cash it made. The one place a
// fraction appears is a partial close: the closed share of open_cost,
// open_cost x closed / |position|, is rounded to the nearest integer (half
// away from zero) and the rounding stays in the remaining open_cost (the
// average open price of the rest moves by at most 0.5 / remaining qty), so
// it is realised when the rest closes and the sum over a round trip stays
// exact. Unrealised PnL is a double because the mark (a microprice) is
// fractional. Products are computed in 128 bits; a fill whose results would
// not fit in int64 is refused (FillResult::kOverflow) and changes nothing.
//
// Totals add the instruments' values, so they assume one price unit across
// instruments (the venue's integer prices). Memory is allocated in the
// constructor; on_fill() and mark() never allocate.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

enum class FillResult : std::uint8_t {
  kOk = 0,
  kUnknownInstrument,  // instrument outside the keeper's table
  kBadSide,            // side is neither buy nor sell
  kBadQty,             // qty <= 0
  kOverflow,           // the position, open cost, realised PnL or volume would leave int64
};

inline constexpr std::size_t kFillResultCount = static_cast<std::size_t>(FillResult::kOverflow) + 1;

std::string_view to_string(FillResult r) noexcept;

struct InstrumentPosition {
  Qty position = 0;            // signed: > 0 long, < 0 short
  std::int64_t open_cost = 0;  // position x average open price, exact
  std::int64_t realised = 0;   // price units x qty
  double unrealised = 0.0;     // position x mark - open_cost
  double mark = std::numeric_limits<double>::quiet_NaN();  // NaN before any mark or fill
  bool marked = false;         // mark() was called: fills no longer move the mark
  Qty volume = 0;              // quantity traded, both sides
  std::uint64_t fills = 0;

  // NaN when flat.
  double average_open_price() const noexcept {
    return position != 0 ? static_cast<double>(open_cost) / static_cast<double>(position)
                         : std::numeric_limits<double>::quiet_NaN();
  }
  double pnl() const noexcept { return static_cast<double>(realised) + unrealised; }
};

class PositionKeeper {
 public:
  // One position per instrument, InstrumentId = index. Start-up only: throws
  // std::invalid_argument for zero instruments.
  explicit PositionKeeper(std::uint32_t instruments);
  PositionKeeper(const PositionKeeper&) = delete;
  PositionKeeper& operator=(const PositionKeeper&) = delete;

  // Books one of our fills. Anything but kOk leaves every value unchanged
  // and is counted by result.
  [[nodiscard]] FillResult on_fill(const FillEvent& fill) noexcept;

  // Marks the instrument's open position to `price` (the fair price).
  // Returns false, changing nothing, for an unknown instrument or a
  // non-finite price (a one-sided book has no fair price: keep the old mark).
  [[nodiscard]] bool mark(InstrumentId instrument, double price) noexcept;

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(positions_.size()); }
  // The instrument's position, or nullptr for an unknown instrument.
  const InstrumentPosition* position(InstrumentId instrument) const noexcept {
    return instrument < positions_.size() ? &positions_[instrument] : nullptr;
  }
  // Signed position; 0 for an unknown instrument.
  Qty net(InstrumentId instrument) const noexcept {
    return instrument < positions_.size() ? positions_[instrument].position : 0;
  }

  // Totals over every instrument.
  std::int64_t total_realised() const noexcept { return total_realised_; }
  // Kept up to date by adding each instrument's change, so reading it is
  // O(1) (the risk manager reads it for every order).
  double total_unrealised() const noexcept { return total_unrealised_; }
  double total_pnl() const noexcept { return static_cast<double>(total_realised_) + total_unrealised_; }
  Qty total_volume() const noexcept { return total_volume_; }
  std::uint64_t total_fills() const noexcept { return total_fills_; }

  std::uint64_t refused(FillResult r) const noexcept { return refused_[static_cast<std::size_t>(r)].get(); }
  // Start-up: the refusal counters into `file` ("positions.refused.<result>").
  // The positions themselves are values, not counts: the trader publishes
  // them as gauges (TraderGauges).
  void place_counters(core::CountersFile& file);

 private:
  FillResult refuse(FillResult r) noexcept {
    refused_[static_cast<std::size_t>(r)].add();
    return r;
  }
  // Recomputes p.unrealised from p.mark and moves the total by the change.
  void remark(InstrumentPosition& p) noexcept;

  std::vector<InstrumentPosition> positions_;
  std::int64_t total_realised_ = 0;
  double total_unrealised_ = 0.0;
  Qty total_volume_ = 0;
  std::uint64_t total_fills_ = 0;
  std::uint32_t open_instruments_ = 0;  // instruments with a position != 0
  std::array<core::Counter, kFillResultCount> refused_;
};

}  // namespace nanotick::trading
