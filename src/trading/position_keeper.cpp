#include "trading/position_keeper.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::trading {

namespace {

// num / den rounded to the nearest integer, halves away from zero; den > 0.
constexpr Int128 divide_nearest(Int128 num, Int128 den) noexcept {
  Int128 q = num / den;
  const Int128 r = num % den;  // same sign as num
  const Int128 twice_r = r < 0 ? -2 * r : 2 * r;
  if (twice_r >= den) q += num < 0 ? -1 : 1;
  return q;
}

}  // namespace

std::string_view to_string(FillResult r) noexcept {
  switch (r) {
    case FillResult::kOk: return "ok";
    case FillResult::kUnknownInstrument: return "unknown instrument";
    case FillResult::kBadSide: return "side is not buy or sell";
    case FillResult::kBadQty: return "fill quantity <= 0";
    case FillResult::kOverflow: return "position, open cost, realised PnL or volume would overflow int64";
  }
  return "unknown result";
}

void PositionKeeper::place_counters(core::CountersFile& file) {
  for (std::size_t r = 1; r < refused_.size(); ++r)
    file.place(refused_[r], "positions.refused." + std::string(to_string(static_cast<FillResult>(r))));
}

PositionKeeper::PositionKeeper(std::uint32_t instruments) {
  if (instruments == 0)
    throw std::invalid_argument("position keeper: zero instruments (configure at least one instrument)");
  positions_.resize(instruments);
}

FillResult PositionKeeper::on_fill(const FillEvent& fill) noexcept {
  if (fill.instrument >= positions_.size()) return refuse(FillResult::kUnknownInstrument);
  if (!is_valid(fill.side)) return refuse(FillResult::kBadSide);
  if (fill.qty <= 0) return refuse(FillResult::kBadQty);
  InstrumentPosition& p = positions_[fill.instrument];

  // Everything is computed into locals first and committed only once it is
  // known to fit, so a refused fill changes nothing.
  const Int128 side_sign = sign_of(fill.side);
  const Int128 price = fill.price;
  Int128 position = p.position;
  Int128 cost = p.open_cost;
  Int128 realised_delta = 0;
  Int128 open_qty = fill.qty;

  if (position != 0 && (position > 0) != (side_sign > 0)) {
    // Against the position: close up to all of it at the fill price.
    const Int128 held = position > 0 ? position : -position;
    const Int128 closed = open_qty < held ? open_qty : held;
    const Int128 cost_closed = closed == held ? cost : divide_nearest(cost * closed, held);
    // Closing a long sells (cash in), closing a short buys (cash out).
    const Int128 position_sign = position > 0 ? 1 : -1;
    realised_delta = position_sign * closed * price - cost_closed;
    cost -= cost_closed;
    position -= position_sign * closed;
    open_qty -= closed;
  }
  if (open_qty > 0) {
    // From flat, on the position's side, or the rest of a flip: opens at the fill price.
    position += side_sign * open_qty;
    cost += side_sign * open_qty * price;
  }

  const Int128 realised = Int128{p.realised} + realised_delta;
  const Int128 volume = Int128{p.volume} + fill.qty;
  const Int128 total_realised = Int128{total_realised_} + realised_delta;
  const Int128 total_volume = Int128{total_volume_} + fill.qty;
  if (!fits_int64(position) || !fits_int64(cost) || !fits_int64(realised) || !fits_int64(volume) ||
      !fits_int64(total_realised) || !fits_int64(total_volume)) [[unlikely]]
    return refuse(FillResult::kOverflow);

  if ((p.position == 0) != (position == 0)) {
    if (position == 0) {
      --open_instruments_;
    } else {
      ++open_instruments_;
    }
  }
  p.position = static_cast<Qty>(position);
  p.open_cost = static_cast<std::int64_t>(cost);
  p.realised = static_cast<std::int64_t>(realised);
  p.volume = static_cast<Qty>(volume);
  ++p.fills;
  total_realised_ = static_cast<std::int64_t>(total_realised);
  total_volume_ = static_cast<Qty>(total_volume);
  ++total_fills_;
  if (!p.marked) p.mark = static_cast<double>(fill.price);
  remark(p);
  return FillResult::kOk;
}

bool PositionKeeper::mark(InstrumentId instrument, double price) noexcept {
  if (instrument >= positions_.size() || !std::isfinite(price)) return false;
  InstrumentPosition& p = positions_[instrument];
  p.mark = price;
  p.marked = true;
  remark(p);
  return true;
}

void PositionKeeper::remark(InstrumentPosition& p) noexcept {
  // Flat is exactly zero (no -0.0, no NaN from an absent mark).
  const double unrealised = p.position != 0 && std::isfinite(p.mark)
                                ? static_cast<double>(p.position) * p.mark - static_cast<double>(p.open_cost)
                                : 0.0;
  total_unrealised_ += unrealised - p.unrealised;
  p.unrealised = unrealised;
  // The running sum may carry rounding from earlier changes; with every
  // instrument flat it is exactly zero, so reset it there.
  if (open_instruments_ == 0) total_unrealised_ = 0.0;
}

}  // namespace nanotick::trading
