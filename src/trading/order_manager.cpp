#include "trading/order_manager.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::trading {

void validate(const OrderManagerConfig& c) {
  auto fail = [](std::string_view field, const std::string& problem) {
    throw std::invalid_argument("order manager: " + std::string(field) + ": " + problem);
  };
  // Ids are 32-bit seqs in flight and a few words per order: 16 M is far beyond any strategy.
  if (c.max_orders == 0 || c.max_orders > (std::size_t{1} << 24))
    fail("max_orders", "must be 1..16777216, got " + std::to_string(c.max_orders));
  if (c.instruments == 0 || c.instruments > (1u << 20))
    fail("instruments", "must be 1..1048576 (the exchange's instrument count), got " + std::to_string(c.instruments));
  if (c.first_client_order_id == 0 || c.first_client_order_id > market::kMaxClientOrderId)
    fail("first_client_order_id", "must be 1.." + std::to_string(market::kMaxClientOrderId) +
                                      " (ids are < 2^48), got " + std::to_string(c.first_client_order_id));
}

void place_order_manager_counters(core::CountersFile& file, OrderManagerCounters& c) {
  for (std::size_t s = 0; s < c.in_state.size(); ++s)
    file.place(c.in_state[s], "orders.in_state." + std::string(to_string(static_cast<OrderState>(s))),
               core::CounterKind::kGauge);
  file.place(c.submitted, "orders.submitted");
  file.place(c.fills, "orders.fills");
  for (std::size_t r = 1; r < c.done.size(); ++r)
    file.place(c.done[r], "orders.done." + std::string(to_string(static_cast<DoneReason>(r))));
  file.place(c.expected_too_late, "orders.expected_too_late");
  file.place(c.unexpected_rejects, "orders.unexpected_rejects");
  file.place(c.unmatched, "orders.unmatched");
  file.place(c.late_reports, "orders.late_reports");
  file.place(c.disconnects, "orders.disconnects");
  file.place(c.reconcile_cancels, "orders.reconcile_cancels");
  for (std::size_t r = 1; r < c.refused.size(); ++r)
    file.place(c.refused[r], "orders.not_sent." + std::string(to_string(static_cast<SubmitStatus>(r))));
}

std::string_view to_string(OrderState s) noexcept {
  switch (s) {
    case OrderState::kPendingNew: return "pending new";
    case OrderState::kLive: return "live";
    case OrderState::kPendingModify: return "pending modify";
    case OrderState::kPendingCancel: return "pending cancel";
    case OrderState::kUnknown: return "unknown";
    case OrderState::kDone: return "done";
  }
  return "invalid";
}

std::string_view to_string(DoneReason r) noexcept {
  switch (r) {
    case DoneReason::kNone: return "none";
    case DoneReason::kFilled: return "filled";
    case DoneReason::kCancelled: return "cancelled";
    case DoneReason::kRejected: return "rejected";
    case DoneReason::kSessionRejected: return "session rejected";
    case DoneReason::kFinishedUnseen: return "finished unseen";
    case DoneReason::kUnknownAtExchange: return "unknown at the exchange";
  }
  return "invalid";
}

std::string_view to_string(SubmitStatus s) noexcept {
  switch (s) {
    case SubmitStatus::kSent: return "sent";
    case SubmitStatus::kNotLoggedOn: return "not logged on";
    case SubmitStatus::kOutputFull: return "output full";
    case SubmitStatus::kPoolExhausted: return "order pool exhausted";
    case SubmitStatus::kClientOrderIdSet: return "client order id set (the manager assigns it)";
    case SubmitStatus::kInvalidInstrument: return "invalid instrument";
    case SubmitStatus::kInvalidSide: return "invalid side";
    case SubmitStatus::kInvalidOrderType: return "invalid order type";
    case SubmitStatus::kInvalidStp: return "invalid self-trade prevention mode";
    case SubmitStatus::kInvalidQty: return "quantity must be > 0";
    case SubmitStatus::kUnknownOrder: return "unknown order";
    case SubmitStatus::kOrderDone: return "order done";
    case SubmitStatus::kRequestInFlight: return "request in flight";
    case SubmitStatus::kStateUnknown: return "order state unknown (session lost)";
    case SubmitStatus::kNotModifiable: return "not modifiable (not a limit order)";
    case SubmitStatus::kNoChange: return "no change";
  }
  return "invalid";
}

}  // namespace nanotick::trading
