// The gateway's report side: engine reports routed to their client's
// session and encoded (with ref_seq and the ack latency mark), each client's
// resting orders followed from the reports, and the cancels queued when a
// cancel-on-disconnect client goes away. Same class and thread as
// order_gateway.cpp.
#include "engine/order.hpp"
#include "exchange/order_gateway.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::exchange {

void OrderGateway::on_report(const engine::ExecReport& r) noexcept {
  track_order(r);
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
  const std::uint64_t now = now_ns();
  if (ref_seq != 0) {
    // The first answer to this message: its latency is taken when it is written.
    const std::size_t slot = ref_seq % Session::kAckSlots;
    if (s.received_seq[slot] == ref_seq) {
      s.received_seq[slot] = 0;
      if (s.unwritten_acks < Session::kAckSlots) s.unwritten_ack_tsc[s.unwritten_acks++] = s.received_tsc[slot];
    }
  }
  if (r.type == engine::ReportType::kCancelRejected || r.type == engine::ReportType::kModifyRejected) {
    auto m = proto::make_message<proto::OrderReject>(
        0, r.type == engine::ReportType::kCancelRejected ? proto::MsgType::kCancelReject : proto::MsgType::kModifyReject);
    m.exec_seq = r.seq;
    m.client_order_id = r.client_order_id;
    m.instrument = r.instrument;
    m.ref_seq = ref_seq;
    m.reason = static_cast<std::uint16_t>(r.reason);
    send_answer(s, m, r.event_id, now);
    return;
  }
  auto m = proto::make_message<proto::ExecutionReport>(0);
  m.exec_seq = r.seq;
  m.client_order_id = r.client_order_id;
  m.order_id = r.order_id;
  m.price = r.price;
  m.order_qty = r.order_qty;
  m.last_price = r.last_price;
  m.last_qty = r.last_qty;
  m.cum_qty = r.cum_qty;
  m.leaves_qty = r.leaves_qty;
  m.instrument = r.instrument;
  m.ref_seq = ref_seq;
  m.exec_type = static_cast<proto::ExecType>(r.type);  // engine ReportType 1-5 = ExecType 1-5
  m.side = static_cast<std::uint8_t>(r.side);
  m.order_type = static_cast<std::uint8_t>(r.order_type);
  m.is_maker = r.is_maker ? 1 : 0;
  m.reject_reason = static_cast<std::uint16_t>(r.reason);
  m.cancel_reason = static_cast<std::uint8_t>(r.cancel_reason);
  send_answer(s, m, r.event_id, now);
}

// Follows each client's resting orders from the reports: accepted limit
// orders rest until a report leaves nothing open (fill to zero, cancel).
void OrderGateway::track_order(const engine::ExecReport& r) noexcept {
  const std::uint64_t key = engine::order_key(r.client & engine::kMaxClientId, r.client_order_id);
  switch (r.type) {
    case engine::ReportType::kAccepted:
      if (r.order_type == engine::OrderType::kLimit) (void)resting_.insert(key, r.instrument);
      break;
    case engine::ReportType::kRejected:
      // Tracked when forwarded; a duplicate-id reject leaves the live order it names alone.
      if (r.reason != engine::RejectReason::kDuplicateClientOrderId) (void)resting_.erase(key);
      break;
    case engine::ReportType::kFill:
      if (r.leaves_qty == 0) (void)resting_.erase(key);
      break;
    case engine::ReportType::kCancelled:
      (void)resting_.erase(key);
      break;
    default: break;
  }
}

void OrderGateway::queue_disconnect_cancels(std::uint32_t client) noexcept {
  // At a disconnect, not per message: a scan of the table is acceptable here.
  if (pending_cancel_head_ != 0) {  // reclaim the room of cancels already pushed
    pending_cancels_.erase(pending_cancels_.begin(), pending_cancels_.begin() + static_cast<std::ptrdiff_t>(pending_cancel_head_));
    pending_cancel_head_ = 0;
  }
  resting_.for_each([&](std::uint64_t key, std::uint32_t instrument) {
    if ((key >> 48) != client) return;
    if (pending_cancels_.size() == pending_cancels_.capacity()) {
      counters_.disconnect_cancels_dropped.add();
      return;
    }
    engine::Request rq = engine::make_cancel(instrument, client, key & engine::kMaxClientOrderId);
    rq.event_id = make_event_id(client, 0, 0);
    pending_cancels_.push_back(rq);
  });
  counters_.pending_cancels.set(pending_cancels_.size() - pending_cancel_head_);
  push_pending_cancels();
}

void OrderGateway::seed_resting_order(std::uint32_t client, std::uint64_t client_order_id,
                                      std::uint32_t instrument) noexcept {
  (void)resting_.insert(engine::order_key(client & engine::kMaxClientId, client_order_id), instrument);
}

void OrderGateway::cancel_orphaned_orders() noexcept {
  for (const ClientConfig& c : config_.clients)
    if (c.cancel_on_disconnect) queue_disconnect_cancels(c.id);
}

void OrderGateway::push_pending_cancels() noexcept {
  while (pending_cancel_head_ != pending_cancels_.size()) {
    if (!requests_.try_push(InboundRequest{pending_cancels_[pending_cancel_head_], clock_.now()})) break;
    ++pending_cancel_head_;
    counters_.disconnect_cancels.add();
  }
  if (pending_cancel_head_ == pending_cancels_.size()) {
    pending_cancels_.clear();  // keeps its capacity
    pending_cancel_head_ = 0;
  }
  counters_.pending_cancels.set(pending_cancels_.size() - pending_cancel_head_);
}

}  // namespace nanotick::exchange
