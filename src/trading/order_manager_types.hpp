// The order manager's vocabulary (order_manager.hpp): an order's state and
// why it ended, what a submit/cancel/modify did, the order record and what
// it adds to the working exposure, the events the manager hands the trade
// engine, its config and counters, and the Sender concept it sends through.
// Plain values: thread-safe, except that counters have one writer (the trade
// engine's thread) and any readers.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/order_entry_client_types.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "market/reject_reason.hpp"
#include "market/types.hpp"
#include "proto/order_entry.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

enum class OrderState : std::uint8_t { kPendingNew, kLive, kPendingModify, kPendingCancel, kUnknown, kDone };
inline constexpr std::size_t kOrderStates = static_cast<std::size_t>(OrderState::kDone) + 1;
std::string_view to_string(OrderState s) noexcept;

enum class DoneReason : std::uint8_t {
  kNone,
  kFilled,
  kCancelled,          // by the exchange: our cancel, IOC residual, FOK, self-trade, modify below filled
  kRejected,           // ExecutionReport rejected (the engine's reason)
  kSessionRejected,    // the NewOrder got a SessionReject (never reached the engine)
  kFinishedUnseen,     // cancel/modify answered 202 "too late" but its last report never came (session loss)
  kUnknownAtExchange,  // cancel/modify answered 201: the exchange never had it (or forgot it)
};
inline constexpr std::size_t kDoneReasons = static_cast<std::size_t>(DoneReason::kUnknownAtExchange) + 1;
std::string_view to_string(DoneReason r) noexcept;

// Why submit/cancel/modify did (not) send. Nothing changes unless kSent.
enum class SubmitStatus : std::uint8_t {
  kSent,
  kNotLoggedOn,        // the sender has no session
  kOutputFull,         // the sender cannot take the message now: retry after its poll()
  kPoolExhausted,      // max_orders orders are open or awaiting answers
  kClientOrderIdSet,   // submit: OrderRequest.client_order_id must be 0 (the manager assigns ids)
  kInvalidInstrument,  // >= the configured instrument count
  kInvalidSide,
  kInvalidOrderType,
  kInvalidStp,
  kInvalidQty,         // <= 0
  kUnknownOrder,       // no order with this id (never, or released)
  kOrderDone,          // the order is finished
  kRequestInFlight,    // cancel: already pending cancel; modify: something in flight
  kStateUnknown,       // modify of an order whose state a session loss made unknown
  kNotModifiable,      // modify of an IOC / FOK / market order (only limit orders rest)
  kNoChange,           // modify to the price and total quantity in force
};
inline constexpr std::size_t kSubmitStatuses = static_cast<std::size_t>(SubmitStatus::kNoChange) + 1;
std::string_view to_string(SubmitStatus s) noexcept;

struct Submitted {
  SubmitStatus status = SubmitStatus::kNotLoggedOn;
  ClientOrderId id = 0;   // the order's id (submit: the new one)
  std::uint32_t seq = 0;  // the message's session seq (kSent): the gateway's on_order_written names it
  bool ok() const noexcept { return status == SubmitStatus::kSent; }
};

// What one order adds to the working exposure (working_exposure.hpp).
struct OrderExposure {
  Qty qty = 0;          // on the order's side
  Int128 notional = 0;  // |price| x open quantity
  bool counted = false; // one open order
};

struct Order {
  ClientOrderId id = 0;
  OrderId exchange_id = 0;  // from the ExecutionReport accepted
  InstrumentId instrument = 0;
  Side side = Side::kBuy;
  OrderType type = OrderType::kLimit;
  market::StpMode stp = market::StpMode::kNone;
  OrderState state = OrderState::kPendingNew;
  DoneReason done_reason = DoneReason::kNone;
  std::uint16_t reject_reason = 0;  // the last reject's code (engine or session)
  Price price = 0;                  // in force: sent (pending new) or acknowledged
  Qty qty = 0;                      // total quantity in force, filled part included
  Qty cum_qty = 0;
  Qty leaves_qty = 0;               // open at the exchange as far as we know
  Price pending_price = 0;          // modify in flight (or in flight at a session loss): what was asked
  Qty pending_qty = 0;              // 0 = none
  std::uint64_t tag = 0;            // the owner's (e.g. a quote level)
  // Session seq of the request in flight of each kind, 0 = none.
  std::uint32_t new_seq = 0;
  std::uint32_t modify_seq = 0;
  std::uint32_t cancel_seq = 0;
  bool done = false;
  bool unknown = false;      // a session loss happened while it was open
  bool reconciling = false;  // unknown, and reconcile()'s cancel is in flight
  OrderExposure exposure;    // what this order adds to the working exposure
  Order* prev = nullptr;     // the (instrument, side) list, best price first
  Order* next = nullptr;
};

// What one exchange message did to an order, for the trade engine (positions,
// strategy). kNone: nothing to act on (an expected "too late", a late report
// for a finished order). kUnmatched: no order of ours (counted).
enum class OrderEventType : std::uint8_t {
  kNone,
  kAccepted,
  kRejected,
  kFill,
  kCancelled,
  kModified,
  kCancelRejected,
  kModifyRejected,
  kSessionRejected,
  kUnmatched,
};

struct OrderEvent {
  OrderEventType type = OrderEventType::kNone;
  ClientOrderId id = 0;
  InstrumentId instrument = 0;
  Side side = Side::kBuy;
  OrderState state = OrderState::kDone;  // after the message
  DoneReason done_reason = DoneReason::kNone;
  Price last_price = 0;  // kFill
  Qty last_qty = 0;      // kFill
  Qty cum_qty = 0;
  Qty leaves_qty = 0;
  bool is_maker = false;  // kFill
  std::uint16_t reason = 0;  // reject code (kRejected / k*Rejected) or cancel reason (kCancelled)
  proto::MsgType rejected_request = proto::MsgType::kNewOrder;  // kSessionRejected: which of our requests
  std::uint64_t tag = 0;
  FillEvent fill() const noexcept { return FillEvent{instrument, id, side, last_price, last_qty, is_maker}; }
};

struct OrderManagerConfig {
  std::size_t max_orders = 4096;  // open orders plus finished ones awaiting answers
  std::uint32_t instruments = 1;  // ids 0..instruments-1
  ClientOrderId first_client_order_id = 1;
};
// Throws std::invalid_argument "order manager: <field>: <problem>".
void validate(const OrderManagerConfig& config);

struct OrderManagerCounters {
  std::array<core::Counter, kOrderStates> in_state;  // orders in each state now
  core::Counter submitted;
  core::Counter fills;
  std::array<core::Counter, kDoneReasons> done;      // by DoneReason
  core::Counter expected_too_late;   // 201/202 answering a cancel/modify of an order already done
  core::Counter unexpected_rejects;  // 201/202 for an order believed open, outside a session loss
  core::Counter unmatched;           // messages for no order of ours
  core::Counter late_reports;        // non-fill reports for an order already done (ignored)
  core::Counter disconnects;
  core::Counter reconcile_cancels;
  std::array<core::Counter, kSubmitStatuses> refused;  // submit/cancel/modify not sent, by SubmitStatus
};

// The counters into `file` as "orders.*" (in_state.<state> as gauges). Start-up only.
void place_order_manager_counters(core::CountersFile& file, OrderManagerCounters& c);

template <typename S>
concept OrderSender = requires(S& s, ClientOrderId id, InstrumentId in, Side side, OrderType type, market::StpMode stp,
                               Price price, Qty qty) {
  { s.send_new_order(id, in, side, type, stp, price, qty) } -> std::same_as<client::SendResult>;
  { s.send_cancel(id, in) } -> std::same_as<client::SendResult>;
  { s.send_modify(id, in, price, qty) } -> std::same_as<client::SendResult>;
};

}  // namespace nanotick::trading
