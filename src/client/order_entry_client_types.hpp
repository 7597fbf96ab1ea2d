// The order-entry client's vocabulary (order_entry_client.hpp): its config,
// what a send returns, its session state, why a session ended, the protocol
// errors it detects, its counters and the Handler concept its callbacks
// follow. Plain values: thread-safe, except that counters have one writer
// (the client's thread) and any readers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "ipc/stream_link.hpp"
#include "net/socket_address.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::client {

struct OrderEntryClientConfig {
  ipc::Transport transport = ipc::Transport::kTcp;
  net::SocketAddress exchange;              // TCP: the exchange's order-entry address
  std::string shm_path;                     // shared memory: the exchange's server.shm_path
  std::uint32_t client_id = 0;              // 1..65535, as configured at the exchange
  std::string api_key;                      // 16..32 printable ASCII characters, no spaces
  std::uint32_t heartbeat_ms = 1000;        // asked at logon; 0 = the exchange's default
  std::uint32_t connect_timeout_ms = 1000;  // bound of the (blocking) connect
  std::uint32_t logon_timeout_ms = 5000;    // connected but no LogonAck: reconnect
  std::uint32_t reconnect_initial_ms = 100;
  std::uint32_t reconnect_max_ms = 5000;
  std::uint32_t input_buffer_bytes = 64 * 1024;
  std::uint32_t output_buffer_bytes = 64 * 1024;
  std::uint32_t read_budget_bytes = 64 * 1024;  // per poll(): others on the thread get their turn
  std::uint32_t socket_send_buffer_bytes = 0;   // SO_SNDBUF; 0 = the kernel's default
};

// Throws std::invalid_argument "order gateway: <field>: <problem>" for the
// first bad field (start-up).
void validate(const OrderEntryClientConfig& config);

// What a send_* call did. kNotLoggedOn: no session (connecting, logging on or
// out, stopped). kOutputFull: the output buffer cannot take the message (the
// exchange reads slower than we write) or more order messages are waiting to
// be reported to on_order_written than the gateway keeps: poll() and retry.
enum class SendStatus : std::uint8_t { kSent, kNotLoggedOn, kOutputFull };
std::string_view to_string(SendStatus s) noexcept;

struct SendResult {
  std::uint32_t seq = 0;  // the message's session sequence number (kSent), else 0
  SendStatus status = SendStatus::kNotLoggedOn;
  bool sent() const noexcept { return status == SendStatus::kSent; }
};

enum class SessionState : std::uint8_t {
  kDisconnected,  // waiting for the next connect attempt (back-off)
  kLoggingOn,     // connected, Logon sent, no answer yet
  kActive,        // logged on: orders may be sent
  kLoggingOut,    // logout() sent a Logout; waiting for the exchange's answer or close
  kStopped,       // no more attempts: fatal logon reject or logout() done
};
std::string_view to_string(SessionState s) noexcept;

enum class DisconnectReason : std::uint8_t {
  kConnectFailed,     // detail: errno (0 if unknown)
  kPeerClosed,        // EOF or reset without a Logout; detail: errno (0 = orderly EOF)
  kIoError,           // detail: errno
  kServerLogout,      // detail: proto::LogoutReason
  kLogonRejected,     // detail: proto::LogonRejectReason
  kLogonTimeout,      // no answer to the Logon within logon_timeout_ms
  kHeartbeatTimeout,  // nothing from the exchange for 3 heartbeat intervals
  kProtocolError,     // detail: ProtocolError
  kClientLogout,      // logout() finished
};
inline constexpr std::size_t kDisconnectReasons = static_cast<std::size_t>(DisconnectReason::kClientLogout) + 1;
std::string_view to_string(DisconnectReason r) noexcept;

// Why the gateway dropped a session that broke the protocol.
enum class ProtocolError : std::uint16_t {
  kNone = 0,
  kMalformed = 1,          // a message that does not frame or check (bad length, version, type)
  kSeqGap = 2,             // the exchange's seq jumped ahead
  kSeqRepeat = 3,          // the exchange's seq went back
  kUnexpectedMessage = 4,  // a valid message in a state where it cannot come (report before logon...)
  kBadLogonAck = 5,        // LogonAck for another client id or with heartbeat 0
  kSeqRejected = 6,        // the exchange rejected our seq (SessionReject SeqGap/SeqRepeat)
  kInputOverflow = 7,      // the input buffer cannot hold one message (cannot happen with a valid config)
};
inline constexpr std::size_t kProtocolErrors = static_cast<std::size_t>(ProtocolError::kInputOverflow) + 1;
std::string_view to_string(ProtocolError e) noexcept;

// The end of a connection (or of a connect attempt), as told to the Handler.
struct Disconnect {
  DisconnectReason reason = DisconnectReason::kPeerClosed;
  std::uint16_t detail = 0;     // see DisconnectReason
  bool fatal = false;           // the gateway stopped: no reconnect
  bool was_logged_on = false;   // orders may have been live on this session
  std::uint32_t retry_in_ms = 0;  // the next connect attempt (0 when fatal)
};

struct OrderEntryClientCounters {
  core::Counter connect_attempts;
  core::Counter connects;
  core::Counter logons;
  core::Counter messages_in;
  core::Counter messages_out;
  core::Counter bytes_in;
  core::Counter bytes_out;
  core::Counter orders_sent;  // NewOrder, CancelOrder, ModifyOrder
  core::Counter heartbeats_sent;
  core::Counter heartbeats_received;
  core::Counter execution_reports;
  core::Counter cancel_rejects;
  core::Counter modify_rejects;
  core::Counter output_full;  // send_* refused with kOutputFull
  core::Counter partial_writes;  // the socket took part of what was offered: the rest waits in the buffer
  core::Counter reports_requests;  // ReportsRequests sent (§1.8: one per logon, when asked)
  core::Counter replayed_reports;  // ExecutionReports with kReportReplayed
  core::Counter replays_completed;  // ReportsReplayed received
  // By wire reason code; the last slot counts codes the spec does not define.
  std::array<core::Counter, proto::kSessionRejectReasons + 1> session_rejects;  // by code, then other
  std::array<core::Counter, proto::kLogonRejectReasons + 1> logon_rejects;      // by code (0 unused), then other
  std::array<core::Counter, proto::kLogoutReasons + 1> logouts_received;        // by code, then other
  std::array<core::Counter, kDisconnectReasons> disconnects;
  std::array<core::Counter, kProtocolErrors> protocol_errors;  // by ProtocolError
};

// The counters into `file` as "session.<name>" (reasons by their names, the
// last slot of each wire-code array as "other"). Start-up only.
void place_session_counters(core::CountersFile& file, OrderEntryClientCounters& c);

// What the gateway calls. Each exchange message type has its callback; the
// message is passed decoded and checked (framing, version, length, session
// seq). on_order_written gets the seq of an order message and the TSC taken
// right after its last byte was written. Optional: on_admin_response(const
// proto::AdminResponse&) for a handler that sends admin requests, and
// on_reports_replayed(const proto::ReportsReplayed&) for one that asks for
// missed reports (OrderEntryClient::request_reports_after).
template <typename H>
concept OrderEntryHandler =
    requires(H& h, const proto::LogonAck& ack, const proto::ExecutionReport& er, const proto::OrderReject& rj,
             const proto::SessionReject& sr, const Disconnect& d, std::uint32_t seq, std::uint64_t tsc) {
      h.on_logon(ack);
      h.on_execution_report(er);
      h.on_cancel_reject(rj);
      h.on_modify_reject(rj);
      h.on_session_reject(sr);  // every SessionReject; ref_seq names our message
      h.on_disconnected(d);     // a session ended or a connect attempt failed
      h.on_order_written(seq, tsc);
    };

}  // namespace nanotick::client
