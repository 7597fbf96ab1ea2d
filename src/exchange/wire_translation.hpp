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
