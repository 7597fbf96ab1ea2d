// The trader's order manager without sockets: a sender that records what the
// manager sends and numbers the messages like a session, and the exchange's
// answers (PROTOCOL.md §1.3) built from an order as the manager sees it:
// execution reports, cancel / modify rejects, session rejects. Shared by the
// order manager, working exposure, risk manager and trade engine tests. Not thread-safe:
// one test thread.
#pragma once

#include <cstdint>
#include <vector>

#include "market/reject_reason.hpp"
#include "proto/order_entry.hpp"
#include "trading/order_manager.hpp"

namespace nanotick::test {

struct SentMessage {
  proto::MsgType type;
  trading::ClientOrderId id;
  trading::InstrumentId instrument;
  trading::Price price;
  trading::Qty qty;
  std::uint32_t seq;
  trading::Side side = trading::Side::kBuy;                  // NewOrder's
  trading::OrderType order_type = trading::OrderType::kLimit;  // NewOrder's
};

// Records what the manager sends; numbers messages like a session.
struct RecordingSender {
  std::vector<SentMessage> sent;
  std::uint32_t next_seq = 2;  // 1 is the Logon
  client::SendStatus status = client::SendStatus::kSent;

  client::SendResult record(proto::MsgType t, trading::ClientOrderId id, trading::InstrumentId in, trading::Price p,
                            trading::Qty q, trading::Side side = trading::Side::kBuy,
                            trading::OrderType type = trading::OrderType::kLimit) {
    if (status != client::SendStatus::kSent) return {0, status};
    sent.push_back(SentMessage{t, id, in, p, q, next_seq, side, type});
    return {next_seq++, client::SendStatus::kSent};
  }
  client::SendResult send_new_order(trading::ClientOrderId id, trading::InstrumentId in, trading::Side side,
                                    trading::OrderType type, market::StpMode, trading::Price p,
                                    trading::Qty q) noexcept {
    return record(proto::MsgType::kNewOrder, id, in, p, q, side, type);
  }
  client::SendResult send_cancel(trading::ClientOrderId id, trading::InstrumentId in) noexcept {
    return record(proto::MsgType::kCancelOrder, id, in, 0, 0);
  }
  client::SendResult send_modify(trading::ClientOrderId id, trading::InstrumentId in, trading::Price p,
                                 trading::Qty q) noexcept {
    return record(proto::MsgType::kModifyOrder, id, in, p, q);
  }
  const SentMessage& last() const { return sent.back(); }
  void new_session() { next_seq = 2; }
};

inline trading::OrderRequest limit(trading::Side side, trading::Price price, trading::Qty qty,
                                   trading::InstrumentId instrument = 0) {
  trading::OrderRequest rq;
  rq.instrument = instrument;
  rq.side = side;
  rq.type = trading::OrderType::kLimit;
  rq.price = price;
  rq.qty = qty;
  return rq;
}

// A report about `o` as it stands (price, total, cum, leaves = total - cum).
inline proto::ExecutionReport report(proto::ExecType type, const trading::Order& o, std::uint32_t ref_seq) {
  auto r = proto::make_message<proto::ExecutionReport>(0);
  r.exec_type = type;
  r.client_order_id = o.id;
  r.instrument = o.instrument;
  r.order_id = 1000 + o.id;
  r.price = o.price;
  r.order_qty = o.qty;
  r.cum_qty = o.cum_qty;
  r.leaves_qty = o.qty - o.cum_qty;
  r.side = static_cast<std::uint8_t>(o.side);
  r.ref_seq = ref_seq;
  return r;
}
inline proto::ExecutionReport accepted(const trading::Order& o, std::uint32_t ref_seq) {
  return report(proto::ExecType::kAccepted, o, ref_seq);
}
// A fill of `qty` more of the version in force (leaves = total - new cum).
inline proto::ExecutionReport fill(const trading::Order& o, trading::Qty qty, std::uint32_t ref_seq = 0,
                                   trading::Price price = 0) {
  auto r = report(proto::ExecType::kFill, o, ref_seq);
  r.last_qty = qty;
  r.last_price = price != 0 ? price : o.price;
  r.cum_qty = o.cum_qty + qty;
  r.leaves_qty = o.qty - r.cum_qty;
  r.is_maker = 1;
  return r;
}
inline proto::ExecutionReport cancelled(const trading::Order& o, std::uint32_t ref_seq, std::uint8_t why = 1) {
  auto r = report(proto::ExecType::kCancelled, o, ref_seq);
  r.leaves_qty = 0;
  r.cancel_reason = why;
  return r;
}
inline proto::ExecutionReport modified(const trading::Order& o, std::uint32_t ref_seq, trading::Price price,
                                       trading::Qty total) {
  auto r = report(proto::ExecType::kModified, o, ref_seq);
  r.price = price;
  r.order_qty = total;
  r.leaves_qty = total - o.cum_qty;
  return r;
}
inline proto::OrderReject order_reject(proto::MsgType type, const trading::Order& o, std::uint32_t ref_seq,
                                       market::RejectReason why) {
  auto m = proto::make_message<proto::OrderReject>(0, type);
  m.client_order_id = o.id;
  m.instrument = o.instrument;
  m.ref_seq = ref_seq;
  m.reason = static_cast<std::uint16_t>(why);
  return m;
}
inline proto::SessionReject session_reject(std::uint32_t ref_seq, proto::MsgType ref_type,
                                           proto::SessionRejectReason why) {
  auto m = proto::make_message<proto::SessionReject>(0);
  m.ref_seq = ref_seq;
  m.ref_type = static_cast<std::uint8_t>(ref_type);
  m.reason = static_cast<std::uint16_t>(why);
  return m;
}

}  // namespace nanotick::test
