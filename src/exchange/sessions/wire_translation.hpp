// The one translation between the wire protocol (docs/PROTOCOL.md) and the
// engine (docs/MATCHING.md), both ways: an order-entry message into the
// engine's Request, an engine report into the message its client receives.
// Field for field, no validation: the engine validates every value it is
// given (a wire enum outside its range is the engine's reject, with its
// reason), and the wire carries every report field as it is. Plain functions
// of plain values: thread-safe; inline (the gateway's hot path).
#pragma once

#include <cstdint>

#include "engine/events.hpp"
#include "engine/request.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::exchange {

inline engine::Request to_request(const proto::NewOrder& m, engine::ClientId client) noexcept {
  engine::Request rq = engine::make_new(m.instrument, client, m.client_order_id, static_cast<engine::Side>(m.side),
                                        static_cast<engine::OrderType>(m.order_type), m.price, m.qty,
                                        static_cast<engine::StpMode>(m.stp));
  rq.reserved = m.reserved;  // must be 0: the engine rejects anything else
  return rq;
}

inline engine::Request to_request(const proto::CancelOrder& m, engine::ClientId client) noexcept {
  engine::Request rq = engine::make_cancel(m.instrument, client, m.client_order_id);
  rq.reserved = m.reserved;
  return rq;
}

inline engine::Request to_request(const proto::ModifyOrder& m, engine::ClientId client) noexcept {
  engine::Request rq = engine::make_modify(m.instrument, client, m.client_order_id, m.price, m.qty);
  rq.reserved = m.reserved;
  return rq;
}

// An AdminAction's engine request type; 0 (not an admin request) for an
// unknown action.
inline engine::RequestType admin_request_type(proto::AdminAction a) noexcept {
  switch (a) {
    case proto::AdminAction::kHaltInstrument: return engine::RequestType::kHaltInstrument;
    case proto::AdminAction::kResumeInstrument: return engine::RequestType::kResumeInstrument;
    case proto::AdminAction::kBlockClient: return engine::RequestType::kBlockClient;
    case proto::AdminAction::kUnblockClient: return engine::RequestType::kUnblockClient;
    case proto::AdminAction::kCancelAll: return engine::RequestType::kAdminCancelAll;
    case proto::AdminAction::kAdjust: return engine::RequestType::kAdminAdjust;
  }
  return engine::RequestType{0};
}
inline proto::AdminAction admin_action(std::uint8_t request_type) noexcept {
  switch (static_cast<engine::RequestType>(request_type)) {
    case engine::RequestType::kHaltInstrument: return proto::AdminAction::kHaltInstrument;
    case engine::RequestType::kResumeInstrument: return proto::AdminAction::kResumeInstrument;
    case engine::RequestType::kBlockClient: return proto::AdminAction::kBlockClient;
    case engine::RequestType::kUnblockClient: return proto::AdminAction::kUnblockClient;
    case engine::RequestType::kAdminCancelAll: return proto::AdminAction::kCancelAll;
    case engine::RequestType::kAdminAdjust: return proto::AdminAction::kAdjust;
    default: return proto::AdminAction{0};
  }
}

// An admin's request (its action known: admin_request_type): the reserved
// bytes reach the controls, which refuse a non-zero one.
inline engine::Request to_request(const proto::AdminRequest& m, engine::ClientId admin) noexcept {
  engine::Request rq =
      engine::make_admin(admin_request_type(m.action), admin, m.request_id, m.instrument, m.target_client, m.amount);
  rq.reserved = m.reserved1 | m.reserved0[0] | m.reserved0[1] | m.reserved0[2];
  return rq;
}

// The admin's answer, from the controls' kAdminDone report.
inline proto::AdminResponse to_admin_response(const engine::ExecReport& r, std::uint32_t ref_seq) noexcept {
  auto m = proto::make_message<proto::AdminResponse>(0);
  m.exec_seq = r.seq;
  m.request_id = r.client_order_id;
  m.instrument = r.instrument;
  m.target_client = static_cast<std::uint32_t>(r.order_qty);
  m.ref_seq = ref_seq;
  m.action = admin_action(r.request_type);
  m.reason = static_cast<std::uint16_t>(r.reason);
  m.orders_cancelled = static_cast<std::uint32_t>(r.last_qty);
  return m;
}

// The gateway's refusal of an admin request it does not sequence (exec_seq 0).
inline proto::AdminResponse admin_refusal(const proto::AdminRequest& m, std::uint32_t ref_seq,
                                          engine::RejectReason why) noexcept {
  auto a = proto::make_message<proto::AdminResponse>(0);
  a.request_id = m.request_id;
  a.instrument = m.instrument;
  a.target_client = m.target_client;
  a.ref_seq = ref_seq;
  a.action = m.action;
  a.reason = static_cast<std::uint16_t>(why);
  return a;
}

// A CancelReject or ModifyReject (by the report's type) for a rejected cancel
// or modify; `ref_seq`: the client's message it answers, 0 for none.
inline proto::OrderReject to_order_reject(const engine::ExecReport& r, std::uint32_t ref_seq) noexcept {
  auto m = proto::make_message<proto::OrderReject>(
      0, r.type == engine::ReportType::kCancelRejected ? proto::MsgType::kCancelReject : proto::MsgType::kModifyReject);
  m.exec_seq = r.seq;
  m.client_order_id = r.client_order_id;
  m.instrument = r.instrument;
  m.ref_seq = ref_seq;
  m.reason = static_cast<std::uint16_t>(r.reason);
  return m;
}

// An ExecutionReport for every other report (accepted, fill, cancelled,
// modified, rejected new order).
inline proto::ExecutionReport to_execution_report(const engine::ExecReport& r, std::uint32_t ref_seq) noexcept {
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
  return m;
}

}  // namespace nanotick::exchange
