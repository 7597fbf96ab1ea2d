#include "proto/order_entry_codec.hpp"

namespace nanotick::proto {

Frame next_frame(std::span<const std::uint8_t> bytes, Direction from) noexcept {
  Frame f;
  if (bytes.size() < 2) return f;
  std::uint16_t length;
  std::memcpy(&length, bytes.data(), sizeof length);
  // Rule 1: a length outside [header, max] means the framing is lost.
  if (length < sizeof(Header) || length > kMaxMessageLength) {
    f.status = FrameStatus::kFatal;
    f.reason = SessionRejectReason::kBadLength;
    std::memcpy(&f.header, bytes.data(), std::min(bytes.size(), sizeof(Header)));
    return f;
  }
  if (bytes.size() < length) return f;  // wait for the whole message before judging it
  std::memcpy(&f.header, bytes.data(), sizeof(Header));
  f.length = length;
  const bool known =
      from == Direction::kFromClient ? is_client_message(f.header.type) : is_exchange_message(f.header.type);
  if (f.header.version != kProtocolVersion) {
    f.status = FrameStatus::kSkip;  // rule 2
    f.reason = SessionRejectReason::kUnsupportedVersion;
  } else if (!known) {
    f.status = FrameStatus::kSkip;  // rule 3
    f.reason = SessionRejectReason::kUnknownType;
  } else if (length != message_length(f.header.type)) {
    f.status = FrameStatus::kSkip;  // rule 4
    f.reason = SessionRejectReason::kBadLength;
  } else {
    f.status = FrameStatus::kMessage;
  }
  return f;
}

std::string_view to_string(MsgType t) noexcept {
  switch (t) {
    case MsgType::kLogon: return "Logon";
    case MsgType::kLogout: return "Logout";
    case MsgType::kHeartbeat: return "Heartbeat";
    case MsgType::kReportsRequest: return "ReportsRequest";
    case MsgType::kNewOrder: return "NewOrder";
    case MsgType::kCancelOrder: return "CancelOrder";
    case MsgType::kModifyOrder: return "ModifyOrder";
    case MsgType::kLogonAck: return "LogonAck";
    case MsgType::kLogonReject: return "LogonReject";
    case MsgType::kServerLogout: return "Logout";
    case MsgType::kServerHeartbeat: return "Heartbeat";
    case MsgType::kReportsReplayed: return "ReportsReplayed";
    case MsgType::kExecutionReport: return "ExecutionReport";
    case MsgType::kCancelReject: return "CancelReject";
    case MsgType::kModifyReject: return "ModifyReject";
    case MsgType::kSessionReject: return "SessionReject";
    case MsgType::kAdminRequest: return "AdminRequest";
    case MsgType::kAdminResponse: return "AdminResponse";
  }
  return "unknown";
}

std::string_view to_string(SessionRejectReason r) noexcept {
  switch (r) {
    case SessionRejectReason::kNone: return "none";
    case SessionRejectReason::kBadLength: return "bad length";
    case SessionRejectReason::kUnsupportedVersion: return "unsupported version";
    case SessionRejectReason::kUnknownType: return "unknown type";
    case SessionRejectReason::kNotLoggedOn: return "not logged on";
    case SessionRejectReason::kSeqGap: return "sequence gap";
    case SessionRejectReason::kSeqRepeat: return "sequence repeat";
    case SessionRejectReason::kAlreadyLoggedOn: return "already logged on";
    case SessionRejectReason::kRateLimited: return "rate limited";
    case SessionRejectReason::kReportsRequestNotFirst: return "reports request not first";
  }
  return "unknown";
}

std::string_view to_string(LogonRejectReason r) noexcept {
  switch (r) {
    case LogonRejectReason::kBadCredentials: return "bad credentials";
    case LogonRejectReason::kUnknownClient: return "unknown client";
    case LogonRejectReason::kAlreadyLoggedOn: return "already logged on";
    case LogonRejectReason::kMaxSessions: return "max sessions";
    case LogonRejectReason::kBadHeartbeat: return "bad heartbeat interval";
  }
  return "unknown";
}

std::string_view to_string(LogoutReason r) noexcept {
  switch (r) {
    case LogoutReason::kClientRequest: return "client request";
    case LogoutReason::kHeartbeatTimeout: return "heartbeat timeout";
    case LogoutReason::kProtocolError: return "protocol error";
    case LogoutReason::kServerShutdown: return "server shutdown";
    case LogoutReason::kSlowConsumer: return "slow consumer";
    case LogoutReason::kNotLoggedOn: return "not logged on";
    case LogoutReason::kLogonTimeout: return "logon timeout";
    case LogoutReason::kPartialMessageTimeout: return "partial message timeout";
  }
  return "unknown";
}

}  // namespace nanotick::proto
