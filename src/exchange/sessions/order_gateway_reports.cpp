// The gateway's report side: engine reports routed to their client's
// session and encoded (with ref_seq and, on a message's first answer, the
// start of its ack latency), and the mass
// cancels queued when a cancel-on-disconnect client goes away. Same class and thread as
// order_gateway.cpp.
#include "engine/order.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "exchange/sessions/order_gateway_send.hpp"
#include "exchange/sessions/wire_translation.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::exchange {

void OrderGateway::on_report(const engine::ExecReport& r, std::uint64_t received_tsc) noexcept {
  count_mass_cancelled(r);
  if (r.type == engine::ReportType::kFill && r.client <= engine::kMaxClientId && client_index_[r.client] >= 0) {
    ClientFillTotals& t = client_fills_[static_cast<std::size_t>(client_index_[r.client])];
    const auto notional = static_cast<std::uint64_t>(r.last_price * r.last_qty);  // engine bounds keep it in int64
    t.fills.add();
    if (r.side == engine::Side::kBuy) {
      t.bought_qty.add(static_cast<std::uint64_t>(r.last_qty));
      t.bought_notional.add(notional);
    } else {
      t.sold_qty.add(static_cast<std::uint64_t>(r.last_qty));
      t.sold_notional.add(notional);
    }
  }
  if (r.reason != engine::RejectReason::kNone) {
    const auto code = static_cast<std::size_t>(r.reason);
    if (code < GatewayCounters::kRejectCodes) counters_.engine_rejects[code].add();
  }
  const std::int32_t index = r.client <= engine::kMaxClientId ? session_of_client_[r.client] : -1;
  if (index < 0) {
    counters_.reports_dropped.add();
    return;
  }
  Session& s = *sessions_[static_cast<std::size_t>(index)];
  const std::uint32_t ref_seq =
      event_client(r.event_id) == r.client && event_generation(r.event_id) == s.generation ? event_seq(r.event_id) : 0;
  const std::uint64_t now = clock_.now_ns();
  // The first answer to this connection's own message: its ack latency ends
  // with its write. A first answer to a message of an earlier connection on
  // this slot (ref_seq 0) ends none.
  if (ref_seq == 0) received_tsc = 0;
  if (r.type == engine::ReportType::kCancelRejected || r.type == engine::ReportType::kModifyRejected)
    send_answer(s, to_order_reject(r, ref_seq), r.event_id, received_tsc, now);
  else if (r.type == engine::ReportType::kAdminDone) [[unlikely]]
    send_answer(s, to_admin_response(r, ref_seq), r.event_id, received_tsc, now);
  else send_answer(s, to_execution_report(r, ref_seq), r.event_id, received_tsc, now);
}

// A mass cancel's reports count the orders it cancelled.
void OrderGateway::count_mass_cancelled(const engine::ExecReport& r) noexcept {
  if (r.type != engine::ReportType::kCancelled) return;
  if (r.cancel_reason == engine::CancelReason::kMassCancel) counters_.disconnect_cancels.add();
  else if (r.cancel_reason == engine::CancelReason::kAdminCancel) counters_.admin_cancels.add();
}

void OrderGateway::queue_mass_cancel(std::uint32_t client) noexcept {
  if (pending_cancel_head_ != 0) {  // reclaim the room of requests already pushed
    pending_cancels_.erase(pending_cancels_.begin(),
                           pending_cancels_.begin() + static_cast<std::ptrdiff_t>(pending_cancel_head_));
    pending_cancel_head_ = 0;
  }
  if (pending_cancels_.size() == pending_cancels_.capacity()) {
    counters_.disconnect_cancels_dropped.add();
    return;
  }
  engine::Request rq = engine::make_mass_cancel(engine::kAllInstruments, client & engine::kMaxClientId);
  rq.event_id = make_event_id(client, 0, 0);
  pending_cancels_.push_back(rq);
  counters_.disconnect_mass_cancels.add();
  counters_.pending_cancels.set(pending_cancels_.size() - pending_cancel_head_);
  push_pending_cancels();
}

void OrderGateway::push_pending_cancels() noexcept {
  while (pending_cancel_head_ != pending_cancels_.size()) {
    if (!requests_.try_push(InboundRequest{pending_cancels_[pending_cancel_head_], clock_.now()})) break;
    ++pending_cancel_head_;
  }
  if (pending_cancel_head_ == pending_cancels_.size()) {
    pending_cancels_.clear();  // keeps its capacity
    pending_cancel_head_ = 0;
  }
  counters_.pending_cancels.set(pending_cancels_.size() - pending_cancel_head_);
}

}  // namespace nanotick::exchange
