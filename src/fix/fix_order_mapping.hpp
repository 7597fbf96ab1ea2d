// The FIX 4.4 <-> nanotick vocabulary (docs/FIX.md "Messages"): which
// OrdType / TimeInForce pairs are which nanotick order type, how a FIX
// decimal becomes a whole price or quantity, and what FIX code and text each
// venue reject and cancel reason becomes. Pure functions: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "market/reject_reason.hpp"
#include "market/types.hpp"

namespace nanotick::fix {

// OrdRejReason (103) and CxlRejReason (102) values the gateway sends.
namespace ord_rej_reason {
inline constexpr int kUnknownSymbol = 1;
inline constexpr int kExchangeClosed = 2;
inline constexpr int kOrderExceedsLimit = 3;
inline constexpr int kUnknownOrder = 5;
inline constexpr int kDuplicateOrder = 6;
inline constexpr int kUnsupportedOrderCharacteristic = 11;
inline constexpr int kIncorrectQuantity = 13;
inline constexpr int kOther = 99;
}  // namespace ord_rej_reason
namespace cxl_rej_reason {
inline constexpr int kTooLateToCancel = 0;
inline constexpr int kUnknownOrder = 1;
inline constexpr int kAlreadyPending = 3;
inline constexpr int kOther = 99;
}  // namespace cxl_rej_reason

// A FIX decimal that must be a whole number: "100", "100.", "100.000" and
// "+100" are 100; "100.5", "", "1e3", "0x10", and anything out of int64 are
// not (nullopt). nanotick's prices are integers in the instrument's price
// unit and its quantities whole units (docs/PROTOCOL.md).
std::optional<std::int64_t> parse_whole_number(std::string_view text) noexcept;

// OrdType (40) and TimeInForce (59, 0 = absent) -> the venue's order type:
//   limit '2' with TimeInForce absent, '0' day or '1' GTC -> limit (rests until
//   filled or cancelled: the venue has no trading day to end a day order);
//   '3' IOC -> IOC; '4' FOK -> FOK; market '1' with TimeInForce absent or
//   '3' IOC -> market. Anything else: nullopt, and `why` says what.
std::optional<market::OrderType> venue_order_type(char ord_type, char time_in_force, std::string& why);

// FIX Side (54): '1' buy, '2' sell; anything else (sell short, cross...) nullopt.
std::optional<market::Side> venue_side(char side) noexcept;
char fix_side(market::Side side) noexcept;

// The OrdRejReason a venue reject is reported with (the Text carries the
// reason's name, e.g. "PriceOutOfBand").
int fix_ord_rej_reason(market::RejectReason reason) noexcept;
// The CxlRejReason a refused cancel or replace is reported with.
int fix_cxl_rej_reason(market::RejectReason reason) noexcept;

// The Text (58) of a Canceled ExecutionReport by the venue's cancel reason
// (docs/PROTOCOL.md §1.3 cancel_reason).
std::string_view cancel_reason_text(std::uint8_t cancel_reason) noexcept;

}  // namespace nanotick::fix
