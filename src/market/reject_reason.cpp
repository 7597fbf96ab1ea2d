#include "market/reject_reason.hpp"

namespace nanotick::market {

std::string_view to_string(RejectReason r) noexcept {
  switch (r) {
    case RejectReason::kNone: return "none";
    case RejectReason::kUnknownInstrument: return "unknown instrument";
    case RejectReason::kInvalidRequestType: return "invalid request type";
    case RejectReason::kInvalidSide: return "invalid side";
    case RejectReason::kInvalidOrderType: return "invalid order type";
    case RejectReason::kInvalidStpMode: return "invalid self-trade prevention mode";
    case RejectReason::kPriceOffTick: return "price not a multiple of the tick size";
    case RejectReason::kPriceOutOfBand: return "price outside the instrument's band";
    case RejectReason::kPriceOutsideCollar: return "price outside the collar around the last trade";
    case RejectReason::kZeroQuantity: return "quantity must be > 0";
    case RejectReason::kQuantityTooLarge: return "quantity above the instrument's maximum";
    case RejectReason::kInvalidClientId: return "client id out of range";
    case RejectReason::kInvalidClientOrderId: return "client order id out of range";
    case RejectReason::kReservedNotZero: return "reserved field not zero";
    case RejectReason::kDuplicateClientOrderId: return "duplicate live client order id";
    case RejectReason::kUnknownOrder: return "unknown order";
    case RejectReason::kTooLateToCancel: return "too late: order already done";
    case RejectReason::kModifyNoChange: return "modify changes nothing";
    case RejectReason::kOrderCapacity: return "order capacity exhausted";
    case RejectReason::kLevelCapacity: return "price level capacity exhausted";
    case RejectReason::kNoAccount: return "no account at the venue";
    case RejectReason::kInstrumentNotPermitted: return "instrument not permitted for this client";
    case RejectReason::kClientQuantityLimit: return "quantity above the client's limit";
    case RejectReason::kClientNotionalLimit: return "notional above the client's limit";
    case RejectReason::kClientCollar: return "price outside the client's collar around the last trade";
    case RejectReason::kTooManyOpenOrders: return "too many working orders for this client";
    case RejectReason::kInsufficientCash: return "insufficient cash for this order and the working ones";
    case RejectReason::kInsufficientPosition: return "insufficient position for this sell and the working ones";
    case RejectReason::kClientBlocked: return "the client is blocked by the venue";
    case RejectReason::kInstrumentHalted: return "the instrument is halted";
    case RejectReason::kUnknownTargetClient: return "the admin request names an unknown client";
    case RejectReason::kNotAdmin: return "only an admin session may send admin requests";
    case RejectReason::kCashOutOfRange: return "the adjusted cash would be outside int64";
  }
  return "unrecognised reason";
}

}  // namespace nanotick::market
