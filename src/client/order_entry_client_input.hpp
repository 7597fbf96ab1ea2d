// The input side of the order-entry session (order_entry_client.hpp, which
// includes this at its end): reading what the exchange sent within the read
// budget, framing and sequence checks, and each exchange message decoded into
// the Handler's callback (PROTOCOL.md §1). Not included on its own.
#pragma once

#include "client/order_entry_client.hpp"

namespace nanotick::client {

template <typename Handler>
int OrderEntryClient<Handler>::read_input() noexcept {
  int reads = 0;
  std::size_t budget = config_.read_budget_bytes;
  while (!close_pending_ && budget > 0) {
    std::span<std::uint8_t> room = in_.writable();
    if (room.empty()) {
      protocol_error(ProtocolError::kInputOverflow);
      break;
    }
    if (room.size() > budget) room = room.first(budget);
    const net::IoResult r = link_.read_some(room);
    if (r.status == net::IoStatus::kWouldBlock) break;
    if (r.status != net::IoStatus::kOk) {
      close_later(r.status == net::IoStatus::kClosed ? DisconnectReason::kPeerClosed : DisconnectReason::kIoError,
                  static_cast<std::uint16_t>(r.error), false);
      break;
    }
    ++reads;
    budget -= r.bytes;
    in_.commit(r.bytes);
    counters_.bytes_in.add(r.bytes);
    process_input();
  }
  return reads;
}

template <typename Handler>
void OrderEntryClient<Handler>::process_input() noexcept {
  while (!close_pending_) {
    const std::span<const std::uint8_t> bytes = in_.readable();
    const proto::Frame f = proto::next_frame(bytes, proto::Direction::kFromExchange);
    if (f.status == proto::FrameStatus::kNeedMore) return;
    if (f.status != proto::FrameStatus::kMessage) return protocol_error(ProtocolError::kMalformed);
    counters_.messages_in.add();
    if (const proto::SeqCheck c = seq_.check(f.header.seq); c != proto::SeqCheck::kExpected)
      return protocol_error(c == proto::SeqCheck::kGap ? ProtocolError::kSeqGap : ProtocolError::kSeqRepeat);
    seq_.accept();
    liveness_.heard(now_ns_);
    dispatch(f.header.type, bytes.data());
    in_.consume(f.length);
  }
}

template <typename Handler>
void OrderEntryClient<Handler>::dispatch(proto::MsgType type, const std::uint8_t* bytes) noexcept {
  using proto::MsgType;
  const bool logged_on = state_ == SessionState::kActive || state_ == SessionState::kLoggingOut;
  switch (type) {
    case MsgType::kLogonAck: {
      if (state_ != SessionState::kLoggingOn) return protocol_error(ProtocolError::kUnexpectedMessage);
      const auto m = proto::read_message<proto::LogonAck>(bytes);
      if (m.client_id != config_.client_id || m.heartbeat_ms == 0) return protocol_error(ProtocolError::kBadLogonAck);
      liveness_.set_interval_ns(core::ns_from_ms(m.heartbeat_ms));
      session_id_ = m.session_id;
      state_ = SessionState::kActive;
      backoff_.reset();
      counters_.logons.add();
      // The request must be the session's first message: before the handler
      // hears of the logon (and may send orders). The output is empty here.
      if (const auto request = replay_.on_logon(); request && enqueue(*request)) {
        counters_.reports_requests.add();
        flush();
      }
      handler_.on_logon(m);
      return;
    }
    case MsgType::kLogonReject: {
      if (state_ != SessionState::kLoggingOn) return protocol_error(ProtocolError::kUnexpectedMessage);
      const auto m = proto::read_message<proto::LogonReject>(bytes);
      counters_.logon_rejects[slot(m.reason, 1, proto::kLogonRejectReasons - 1)].add();
      // Retrying with the same configuration cannot succeed: stop and report.
      const auto why = static_cast<proto::LogonRejectReason>(m.reason);
      const bool fatal = why == proto::LogonRejectReason::kBadCredentials ||
                         why == proto::LogonRejectReason::kUnknownClient ||
                         why == proto::LogonRejectReason::kBadHeartbeat;
      return close_later(DisconnectReason::kLogonRejected, m.reason, fatal);
    }
    case MsgType::kServerLogout: {
      const auto m = proto::read_message<proto::ServerLogout>(bytes);
      counters_.logouts_received[slot(m.reason, 0, proto::kLogoutReasons - 1)].add();
      return close_later(DisconnectReason::kServerLogout, m.reason, false);
    }
    case MsgType::kServerHeartbeat: counters_.heartbeats_received.add(); return;
    case MsgType::kExecutionReport: {
      if (!logged_on) return protocol_error(ProtocolError::kUnexpectedMessage);
      counters_.execution_reports.add();
      const auto m = proto::read_message<proto::ExecutionReport>(bytes);
      NT_HOP(tr_response_read, order_key_base_ | m.ref_seq);
      if ((m.flags & proto::kReportReplayed) != 0) counters_.replayed_reports.add();
      replay_.on_report(m);
      handler_.on_execution_report(m);
      return;
    }
    case MsgType::kCancelReject: {
      if (!logged_on) return protocol_error(ProtocolError::kUnexpectedMessage);
      counters_.cancel_rejects.add();
      const auto m = proto::read_message<proto::OrderReject>(bytes);
      NT_HOP(tr_response_read, order_key_base_ | m.ref_seq);
      handler_.on_cancel_reject(m);
      return;
    }
    case MsgType::kModifyReject: {
      if (!logged_on) return protocol_error(ProtocolError::kUnexpectedMessage);
      counters_.modify_rejects.add();
      const auto m = proto::read_message<proto::OrderReject>(bytes);
      NT_HOP(tr_response_read, order_key_base_ | m.ref_seq);
      handler_.on_modify_reject(m);
      return;
    }
    case MsgType::kSessionReject: {
      const auto m = proto::read_message<proto::SessionReject>(bytes);
      counters_.session_rejects[slot(m.reason, 0, proto::kSessionRejectReasons - 1)].add();
      handler_.on_session_reject(m);
      // Our numbering and the exchange's disagree: only a new session fixes that.
      const auto why = static_cast<proto::SessionRejectReason>(m.reason);
      if (why == proto::SessionRejectReason::kSeqGap || why == proto::SessionRejectReason::kSeqRepeat)
        protocol_error(ProtocolError::kSeqRejected);
      return;
    }
    case MsgType::kReportsReplayed: {
      const auto m = proto::read_message<proto::ReportsReplayed>(bytes);
      // Only the answer to this session's own request.
      if (!logged_on || !replay_.on_replayed(m)) return protocol_error(ProtocolError::kUnexpectedMessage);
      counters_.replays_completed.add();
      if constexpr (requires { handler_.on_reports_replayed(m); }) handler_.on_reports_replayed(m);
      return;
    }
    case MsgType::kAdminResponse: {
      // Only a handler that sends admin requests expects their answers.
      if constexpr (requires(const proto::AdminResponse& a) { handler_.on_admin_response(a); }) {
        if (!logged_on) return protocol_error(ProtocolError::kUnexpectedMessage);
        handler_.on_admin_response(proto::read_message<proto::AdminResponse>(bytes));
        return;
      } else {
        return protocol_error(ProtocolError::kUnexpectedMessage);
      }
    }
    default: return protocol_error(ProtocolError::kUnexpectedMessage);  // next_frame passes exchange types only
  }
}

}  // namespace nanotick::client
