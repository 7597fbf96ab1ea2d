#include "fix/fix_order_mapping.hpp"

#include <charconv>
#include <system_error>

namespace nanotick::fix {

std::optional<std::int64_t> parse_whole_number(std::string_view text) noexcept {
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && text.front() == '-') return std::nullopt;
  }
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (dot != std::string_view::npos) {
    if (text.substr(dot + 1).find_first_not_of('0') != std::string_view::npos) return std::nullopt;
  }
  if (whole.empty() || whole.front() == '+') return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), v);
  if (ec != std::errc() || end != whole.data() + whole.size()) return std::nullopt;
  return v;
}

std::optional<market::OrderType> venue_order_type(char ord_type, char time_in_force, std::string& why) {
  if (ord_type == '2') {
    switch (time_in_force) {
      case 0:
      case '0':
      case '1': return market::OrderType::kLimit;
      case '3': return market::OrderType::kIoc;
      case '4': return market::OrderType::kFok;
      default:
        why = std::string("TimeInForce ") + time_in_force + " is not supported for a limit order (0, 1, 3, 4 are)";
    }
    return std::nullopt;
  }
  if (ord_type == '1') {
    if (time_in_force == 0 || time_in_force == '3') return market::OrderType::kMarket;
    why = std::string("TimeInForce ") + time_in_force + " is not supported for a market order (IOC only)";
    return std::nullopt;
  }
  why = std::string("OrdType ") + (ord_type == 0 ? std::string("(absent)") : std::string(1, ord_type)) +
        " is not supported (1 market and 2 limit are)";
  return std::nullopt;
}

std::optional<market::Side> venue_side(char side) noexcept {
  if (side == '1') return market::Side::kBuy;
  if (side == '2') return market::Side::kSell;
  return std::nullopt;
}

char fix_side(market::Side side) noexcept { return side == market::Side::kBuy ? '1' : '2'; }

int fix_ord_rej_reason(market::RejectReason reason) noexcept {
  using R = market::RejectReason;
  switch (reason) {
    case R::kUnknownInstrument: return ord_rej_reason::kUnknownSymbol;
    case R::kInstrumentHalted: return ord_rej_reason::kExchangeClosed;
    case R::kDuplicateClientOrderId: return ord_rej_reason::kDuplicateOrder;
    case R::kZeroQuantity:
    case R::kQuantityTooLarge: return ord_rej_reason::kIncorrectQuantity;
    case R::kClientQuantityLimit:
    case R::kClientNotionalLimit:
    case R::kTooManyOpenOrders:
    case R::kInsufficientCash:
    case R::kInsufficientPosition: return ord_rej_reason::kOrderExceedsLimit;
    case R::kInvalidOrderType:
    case R::kInvalidSide:
    case R::kInvalidStpMode: return ord_rej_reason::kUnsupportedOrderCharacteristic;
    default: return ord_rej_reason::kOther;
  }
}

int fix_cxl_rej_reason(market::RejectReason reason) noexcept {
  using R = market::RejectReason;
  switch (reason) {
    case R::kUnknownOrder: return cxl_rej_reason::kUnknownOrder;
    case R::kTooLateToCancel: return cxl_rej_reason::kTooLateToCancel;
    default: return cxl_rej_reason::kOther;
  }
}

std::string_view cancel_reason_text(std::uint8_t cancel_reason) noexcept {
  switch (cancel_reason) {
    case 1: return "cancelled on request";
    case 2: return "IOC: the rest of the order cancelled";
    case 3: return "FOK: could not fill completely";
    case 4: return "self-trade prevention";
    case 5: return "replaced to a quantity at or below the filled quantity";
    case 6: return "the venue cancelled the client's orders: its session ended (cancel on disconnect)";
    case 7: return "the venue's admin cancelled the client's orders";
    default: return "cancelled by the venue";
  }
}

}  // namespace nanotick::fix
