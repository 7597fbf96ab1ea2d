#include "trading/working_exposure.hpp"

#include <algorithm>
#include <limits>

namespace nanotick::trading {

namespace {

constexpr Int128 abs128(Int128 v) noexcept { return v < 0 ? -v : v; }

// The order's exposure, with `pending_qty` (0: none) at `pending_price` as
// the version of a modify that may be live.
OrderExposure exposure_with(const Order& o, bool counted, Price pending_price, Qty pending_qty) noexcept {
  if (!counted) return {};
  const Qty open = o.done ? 0 : o.leaves_qty;
  OrderExposure e{open, abs128(o.price) * open, true};
  if (pending_qty != 0) {
    const Qty new_open = std::max<Qty>(pending_qty - o.cum_qty, 0);
    e.qty = std::max(e.qty, new_open);
    e.notional = std::max(e.notional, abs128(pending_price) * new_open);
  }
  return e;
}

}  // namespace

OrderExposure exposure_of(const Order& o) noexcept {
  // pending_qty is set while a modify is in flight, and on an unknown order
  // whose modify was in flight at the session loss (OrderManager keeps it).
  const bool counted =
      !o.done || (o.done_reason == DoneReason::kFilled && o.modify_seq != 0 && o.pending_qty > o.cum_qty);
  return exposure_with(o, counted, o.pending_price, o.pending_qty);
}

OrderExposure exposure_if_modified(const Order& o, Price price, Qty total_qty) noexcept {
  return exposure_with(o, !o.done, price, total_qty);
}

std::int64_t clamp_int64(Int128 v) noexcept {
  if (v > std::numeric_limits<std::int64_t>::max()) return std::numeric_limits<std::int64_t>::max();
  if (v < std::numeric_limits<std::int64_t>::min()) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

}  // namespace nanotick::trading
