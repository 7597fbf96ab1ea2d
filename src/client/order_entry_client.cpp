#include "client/order_entry_client.hpp"

#include <stdexcept>

namespace nanotick::client {

namespace {

[[noreturn]] void fail(std::string_view field, const std::string& problem) {
  throw std::invalid_argument("order gateway: " + std::string(field) + ": " + problem);
}

void require_range(std::string_view field, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi)
    fail(field, "must be " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(value));
}

}  // namespace

void validate(const OrderEntryClientConfig& c) {
  if (c.transport == ipc::Transport::kShm) {
    if (c.shm_path.empty() || c.shm_path.size() > 107)
      fail("shm_path", "must name the exchange's server.shm_path (1..107 bytes: a UNIX socket path)");
  } else if (c.exchange.port == 0) {
    fail("exchange", "port 0 cannot be connected to: give the exchange's order_entry address");
  }
  require_range("client_id", c.client_id, 1, market::kMaxClientId);
  // The exchange's rule for keys (exchange/credential.hpp): 16..32 printable ASCII, no spaces.
  if (c.api_key.size() < 16 || c.api_key.size() > proto::kCredentialBytes)
    fail("api_key", "must be 16.." + std::to_string(proto::kCredentialBytes) + " characters, got " +
                        std::to_string(c.api_key.size()));
  for (const char ch : c.api_key)
    if (ch < 0x21 || ch > 0x7e)
      fail("api_key", "must be printable ASCII without spaces (the exchange compares it byte for byte)");
  // The exchange's own bounds apply too (it answers BadHeartbeat); these are the wire's.
  require_range("heartbeat_ms", c.heartbeat_ms, 0, 3'600'000);
  require_range("connect_timeout_ms", c.connect_timeout_ms, 1, 60'000);
  require_range("logon_timeout_ms", c.logon_timeout_ms, 1, 600'000);
  require_range("reconnect_initial_ms", c.reconnect_initial_ms, 1, 600'000);
  require_range("reconnect_max_ms", c.reconnect_max_ms, c.reconnect_initial_ms, 3'600'000);
  // Room for a few of the largest messages, so a partial one never blocks a whole one.
  require_range("input_buffer_bytes", c.input_buffer_bytes, 4 * proto::kMaxMessageLength, 64u << 20);
  require_range("output_buffer_bytes", c.output_buffer_bytes, 4 * proto::kMaxMessageLength, 64u << 20);
  require_range("read_budget_bytes", c.read_budget_bytes, 1, 64u << 20);
  require_range("socket_send_buffer_bytes", c.socket_send_buffer_bytes, 0, 64u << 20);
}

std::string_view to_string(SendStatus s) noexcept {
  switch (s) {
    case SendStatus::kSent: return "sent";
    case SendStatus::kNotLoggedOn: return "not logged on";
    case SendStatus::kOutputFull: return "output full";
  }
  return "unknown";
}

std::string_view to_string(SessionState s) noexcept {
  switch (s) {
    case SessionState::kDisconnected: return "disconnected";
    case SessionState::kLoggingOn: return "logging on";
    case SessionState::kActive: return "active";
    case SessionState::kLoggingOut: return "logging out";
    case SessionState::kStopped: return "stopped";
  }
  return "unknown";
}

std::string_view to_string(DisconnectReason r) noexcept {
  switch (r) {
    case DisconnectReason::kConnectFailed: return "connect failed";
    case DisconnectReason::kPeerClosed: return "closed by the exchange";
    case DisconnectReason::kIoError: return "socket error";
    case DisconnectReason::kServerLogout: return "logged out by the exchange";
    case DisconnectReason::kLogonRejected: return "logon rejected";
    case DisconnectReason::kLogonTimeout: return "no answer to the logon";
    case DisconnectReason::kHeartbeatTimeout: return "exchange silent for 3 heartbeat intervals";
    case DisconnectReason::kProtocolError: return "protocol error";
    case DisconnectReason::kClientLogout: return "logged out";
  }
  return "unknown";
}

void place_session_counters(core::CountersFile& file, OrderEntryClientCounters& c) {
  file.begin_group();
  file.place(c.connect_attempts, "session.connect_attempts");
  file.place(c.connects, "session.connects");
  file.place(c.logons, "session.logons");
  file.place(c.messages_in, "session.messages_in");
  file.place(c.messages_out, "session.messages_out");
  file.place(c.bytes_in, "session.bytes_in");
  file.place(c.bytes_out, "session.bytes_out");
  file.place(c.orders_sent, "session.orders_sent");
  file.place(c.heartbeats_sent, "session.heartbeats_sent");
  file.place(c.heartbeats_received, "session.heartbeats_received");
  file.place(c.execution_reports, "session.execution_reports");
  file.place(c.cancel_rejects, "session.cancel_rejects");
  file.place(c.modify_rejects, "session.modify_rejects");
  file.place(c.output_full, "session.output_full");
  file.place(c.partial_writes, "session.partial_writes");
  file.place(c.reports_requests, "session.reports_requests");
  file.place(c.replayed_reports, "session.replayed_reports");
  file.place(c.replays_completed, "session.replays_completed");
  const auto by_code = [&file](auto& counters, std::size_t first, const std::string& prefix, auto name_of) {
    for (std::size_t r = first; r < counters.size(); ++r)
      file.place(counters[r], prefix + (r + 1 < counters.size() ? std::string(name_of(r)) : std::string("other")));
  };
  by_code(c.session_rejects, 1, "session.session_reject.",
          [](std::size_t r) { return proto::to_string(static_cast<proto::SessionRejectReason>(r)); });
  by_code(c.logon_rejects, 1, "session.logon_reject.",
          [](std::size_t r) { return proto::to_string(static_cast<proto::LogonRejectReason>(r)); });
  by_code(c.logouts_received, 0, "session.logout_received.",
          [](std::size_t r) { return proto::to_string(static_cast<proto::LogoutReason>(r)); });
  for (std::size_t r = 0; r < c.disconnects.size(); ++r)
    file.place(c.disconnects[r], "session.disconnect." + std::string(to_string(static_cast<DisconnectReason>(r))));
  for (std::size_t r = 1; r < c.protocol_errors.size(); ++r)
    file.place(c.protocol_errors[r], "session.protocol_error." + std::string(to_string(static_cast<ProtocolError>(r))));
}

std::string_view to_string(ProtocolError e) noexcept {
  switch (e) {
    case ProtocolError::kNone: return "none";
    case ProtocolError::kMalformed: return "malformed message";
    case ProtocolError::kSeqGap: return "exchange sequence gap";
    case ProtocolError::kSeqRepeat: return "exchange sequence repeat";
    case ProtocolError::kUnexpectedMessage: return "unexpected message";
    case ProtocolError::kBadLogonAck: return "bad logon ack";
    case ProtocolError::kSeqRejected: return "our sequence number rejected";
    case ProtocolError::kInputOverflow: return "input buffer overflow";
  }
  return "unknown";
}

}  // namespace nanotick::client
