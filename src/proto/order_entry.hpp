// Order-entry messages (TCP), docs/PROTOCOL.md §1: one struct per message
// type, laid out exactly as on the wire. The host is little-endian x86-64
// (asserted below), so encoding is a memcpy of the struct and decoding a
// memcpy out after the frame checks (order_entry_codec.hpp). Every size and
// offset is static_asserted against the spec. Plain values: thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace nanotick::proto {

static_assert(std::endian::native == std::endian::little,
              "the wire is little-endian and encoded by memcpy: port the codecs first");

inline constexpr std::uint8_t kProtocolVersion = 1;
inline constexpr std::size_t kMaxMessageLength = 256;
inline constexpr std::size_t kCredentialBytes = 32;

enum class MsgType : std::uint8_t {
  // client -> exchange
  kLogon = 1,
  kLogout = 2,
  kHeartbeat = 3,
  kReportsRequest = 4,  // §1.8: once, first after LogonAck
  kNewOrder = 10,
  kCancelOrder = 11,
  kModifyOrder = 12,
  kAdminRequest = 20,
  // exchange -> client
  kLogonAck = 101,
  kLogonReject = 102,
  kServerLogout = 103,
  kServerHeartbeat = 104,
  kReportsReplayed = 105,  // §1.8: ends a ReportsRequest's replay
  kExecutionReport = 110,
  kCancelReject = 111,
  kModifyReject = 112,
  kSessionReject = 113,
  kAdminResponse = 120,
};

struct Header {
  std::uint16_t length;
  MsgType type;
  std::uint8_t version;
  std::uint32_t seq;
};
static_assert(sizeof(Header) == 8 && offsetof(Header, type) == 2 && offsetof(Header, version) == 3 &&
              offsetof(Header, seq) == 4);

// ---- client -> exchange ------------------------------------------------------

struct Logon {
  Header header;
  std::uint32_t client_id;
  std::uint32_t heartbeat_ms;  // 0 = server default
  char credential[kCredentialBytes];  // ASCII, zero-padded
};
static_assert(sizeof(Logon) == 48 && offsetof(Logon, client_id) == 8 && offsetof(Logon, heartbeat_ms) == 12 &&
              offsetof(Logon, credential) == 16);

struct Logout {
  Header header;
  std::uint16_t reason;
  std::uint8_t reserved[6];
};
static_assert(sizeof(Logout) == 16 && offsetof(Logout, reason) == 8);

struct Heartbeat {
  Header header;
};
static_assert(sizeof(Heartbeat) == 8);

// §1.8: "send me again every fill of mine with exec_seq > after_exec_seq"
// (a client that lost reports while disconnected; 0: all of them).
struct ReportsRequest {
  Header header;
  std::uint64_t after_exec_seq;
};
static_assert(sizeof(ReportsRequest) == 16 && offsetof(ReportsRequest, after_exec_seq) == 8);

struct NewOrder {
  Header header;
  std::uint64_t client_order_id;
  std::uint32_t instrument;
  std::uint8_t side;
  std::uint8_t order_type;
  std::uint8_t stp;
  std::uint8_t reserved;
  std::int64_t price;
  std::int64_t qty;
};
static_assert(sizeof(NewOrder) == 40 && offsetof(NewOrder, client_order_id) == 8 &&
              offsetof(NewOrder, instrument) == 16 && offsetof(NewOrder, side) == 20 &&
              offsetof(NewOrder, order_type) == 21 && offsetof(NewOrder, stp) == 22 &&
              offsetof(NewOrder, reserved) == 23 && offsetof(NewOrder, price) == 24 && offsetof(NewOrder, qty) == 32);

struct CancelOrder {
  Header header;
  std::uint64_t client_order_id;
  std::uint32_t instrument;
  std::uint32_t reserved;
};
static_assert(sizeof(CancelOrder) == 24 && offsetof(CancelOrder, client_order_id) == 8 &&
              offsetof(CancelOrder, instrument) == 16 && offsetof(CancelOrder, reserved) == 20);

struct ModifyOrder {
  Header header;
  std::uint64_t client_order_id;
  std::uint32_t instrument;
  std::uint32_t reserved;
  std::int64_t price;  // new price
  std::int64_t qty;    // new total quantity, filled part included
};
static_assert(sizeof(ModifyOrder) == 40 && offsetof(ModifyOrder, client_order_id) == 8 &&
              offsetof(ModifyOrder, instrument) == 16 && offsetof(ModifyOrder, price) == 24 &&
              offsetof(ModifyOrder, qty) == 32);

// ---- exchange -> client --------------------------------------------------------

struct LogonAck {
  Header header;
  std::uint32_t client_id;
  std::uint32_t heartbeat_ms;
  std::uint64_t session_id;
};
static_assert(sizeof(LogonAck) == 24 && offsetof(LogonAck, client_id) == 8 && offsetof(LogonAck, heartbeat_ms) == 12 &&
              offsetof(LogonAck, session_id) == 16);

struct LogonReject {
  Header header;
  std::uint16_t reason;  // LogonRejectReason
  std::uint8_t reserved[6];
};
static_assert(sizeof(LogonReject) == 16 && offsetof(LogonReject, reason) == 8);

struct ServerLogout {
  Header header;
  std::uint16_t reason;  // LogoutReason
  std::uint8_t reserved[6];
};
static_assert(sizeof(ServerLogout) == 16 && offsetof(ServerLogout, reason) == 8);

struct ServerHeartbeat {
  Header header;
};
static_assert(sizeof(ServerHeartbeat) == 8);

enum class ExecType : std::uint8_t { kAccepted = 1, kRejected = 2, kFill = 3, kCancelled = 4, kModified = 5 };

// ExecutionReport::flags bits.
inline constexpr std::uint8_t kReportReplayed = 1;  // sent again in answer to a ReportsRequest (§1.8)

struct ExecutionReport {
  Header header;
  std::uint64_t exec_seq;
  std::uint64_t client_order_id;
  std::uint64_t order_id;
  std::int64_t price;
  std::int64_t order_qty;
  std::int64_t last_price;
  std::int64_t last_qty;
  std::int64_t cum_qty;
  std::int64_t leaves_qty;
  std::uint32_t instrument;
  std::uint32_t ref_seq;
  ExecType exec_type;
  std::uint8_t side;
  std::uint8_t order_type;
  std::uint8_t is_maker;
  std::uint16_t reject_reason;
  std::uint8_t cancel_reason;
  std::uint8_t flags;  // kReportReplayed; other bits 0
};
static_assert(sizeof(ExecutionReport) == 96 && offsetof(ExecutionReport, exec_seq) == 8 &&
              offsetof(ExecutionReport, client_order_id) == 16 && offsetof(ExecutionReport, order_id) == 24 &&
              offsetof(ExecutionReport, price) == 32 && offsetof(ExecutionReport, order_qty) == 40 &&
              offsetof(ExecutionReport, last_price) == 48 && offsetof(ExecutionReport, last_qty) == 56 &&
              offsetof(ExecutionReport, cum_qty) == 64 && offsetof(ExecutionReport, leaves_qty) == 72 &&
              offsetof(ExecutionReport, instrument) == 80 && offsetof(ExecutionReport, ref_seq) == 84 &&
              offsetof(ExecutionReport, exec_type) == 88 && offsetof(ExecutionReport, side) == 89 &&
              offsetof(ExecutionReport, order_type) == 90 && offsetof(ExecutionReport, is_maker) == 91 &&
              offsetof(ExecutionReport, reject_reason) == 92 && offsetof(ExecutionReport, cancel_reason) == 94 &&
              offsetof(ExecutionReport, flags) == 95);

// §1.8: the end of a ReportsRequest's replay: `count` ExecutionReports were
// sent before it; through_exec_seq is the highest exec_seq the replay
// covered (the ledger's last at the time: a later fill comes live).
struct ReportsReplayed {
  Header header;
  std::uint64_t count;
  std::uint64_t through_exec_seq;
};
static_assert(sizeof(ReportsReplayed) == 24 && offsetof(ReportsReplayed, count) == 8 &&
              offsetof(ReportsReplayed, through_exec_seq) == 16);

// What an admin asks (docs/CONTROLS.md "Admin"; docs/PROTOCOL.md §1.7).
enum class AdminAction : std::uint8_t {
  kHaltInstrument = 1,
  kResumeInstrument = 2,
  kBlockClient = 3,
  kUnblockClient = 4,
  kCancelAll = 5,
  kAdjust = 6,
};
inline constexpr std::uint32_t kAllInstruments = 0xFFFF'FFFF;  // AdminRequest: cancel-all on every instrument

struct AdminRequest {
  Header header;
  std::uint64_t request_id;  // the admin's own, echoed in the response
  AdminAction action;
  std::uint8_t reserved0[3];
  std::uint32_t instrument;     // halt/resume: the instrument; cancel-all: one or kAllInstruments;
                             // adjust: the position's instrument, or kAllInstruments for cash; else 0
  std::uint32_t target_client;  // block/unblock/cancel-all/adjust: the client; else 0
  std::uint32_t reserved1;
  std::int64_t amount;  // adjust: the signed change; else 0
};
static_assert(sizeof(AdminRequest) == 40 && offsetof(AdminRequest, request_id) == 8 &&
              offsetof(AdminRequest, action) == 16 && offsetof(AdminRequest, instrument) == 20 &&
              offsetof(AdminRequest, target_client) == 24 && offsetof(AdminRequest, amount) == 32);

struct AdminResponse {
  Header header;
  std::uint64_t exec_seq;  // the engine's report seq; 0: refused by the gateway, never sequenced
  std::uint64_t request_id;
  std::uint32_t instrument;
  std::uint32_t target_client;
  std::uint32_t ref_seq;  // the AdminRequest's seq
  AdminAction action;
  std::uint8_t reserved0;
  std::uint16_t reason;  // 0: done; else the engine's RejectReason
  std::uint32_t orders_cancelled;  // cancel-all: how many
  std::uint32_t reserved1;
};
static_assert(sizeof(AdminResponse) == 48 && offsetof(AdminResponse, exec_seq) == 8 &&
              offsetof(AdminResponse, request_id) == 16 && offsetof(AdminResponse, instrument) == 24 &&
              offsetof(AdminResponse, target_client) == 28 && offsetof(AdminResponse, ref_seq) == 32 &&
              offsetof(AdminResponse, action) == 36 && offsetof(AdminResponse, reason) == 38 &&
              offsetof(AdminResponse, orders_cancelled) == 40);

// CancelReject and ModifyReject share this layout (type differs).
struct OrderReject {
  Header header;
  std::uint64_t exec_seq;
  std::uint64_t client_order_id;
  std::uint32_t instrument;
  std::uint32_t ref_seq;
  std::uint16_t reason;  // engine RejectReason
  std::uint8_t reserved[6];
};
static_assert(sizeof(OrderReject) == 40 && offsetof(OrderReject, exec_seq) == 8 &&
              offsetof(OrderReject, client_order_id) == 16 && offsetof(OrderReject, instrument) == 24 &&
              offsetof(OrderReject, ref_seq) == 28 && offsetof(OrderReject, reason) == 32);

struct SessionReject {
  Header header;
  std::uint32_t ref_seq;
  std::uint32_t expected_seq;
  std::uint8_t ref_type;
  std::uint8_t reserved0;
  std::uint16_t reason;  // SessionRejectReason
  std::uint32_t reserved1;
};
static_assert(sizeof(SessionReject) == 24 && offsetof(SessionReject, ref_seq) == 8 &&
              offsetof(SessionReject, expected_seq) == 12 && offsetof(SessionReject, ref_type) == 16 &&
              offsetof(SessionReject, reason) == 18);

// ---- reason codes (§1.6) ----------------------------------------------------------

enum class SessionRejectReason : std::uint16_t {
  kNone = 0,
  kBadLength = 1,
  kUnsupportedVersion = 2,
  kUnknownType = 3,
  kNotLoggedOn = 4,
  kSeqGap = 5,
  kSeqRepeat = 6,
  kAlreadyLoggedOn = 7,
  kRateLimited = 8,
  kReportsRequestNotFirst = 9,  // a ReportsRequest that is not the first message after LogonAck (§1.8)
};
enum class LogonRejectReason : std::uint16_t {
  kBadCredentials = 1,
  kUnknownClient = 2,
  kAlreadyLoggedOn = 3,
  kMaxSessions = 4,
  kBadHeartbeat = 5,
};
enum class LogoutReason : std::uint16_t {
  kClientRequest = 0,
  kHeartbeatTimeout = 1,
  kProtocolError = 2,
  kServerShutdown = 3,
  kSlowConsumer = 4,
  kNotLoggedOn = 5,
  kLogonTimeout = 6,
  kPartialMessageTimeout = 7,  // a logged-on session's message begun, not completed within the server's timeout
};
// How many codes each reason enum has (codes 0..count-1; LogonRejectReason's 0 is unused):
// counters indexed by code are sized from these, never by hand.
inline constexpr std::size_t kSessionRejectReasons =
    static_cast<std::size_t>(SessionRejectReason::kReportsRequestNotFirst) + 1;
inline constexpr std::size_t kLogonRejectReasons = static_cast<std::size_t>(LogonRejectReason::kBadHeartbeat) + 1;
inline constexpr std::size_t kLogoutReasons = static_cast<std::size_t>(LogoutReason::kPartialMessageTimeout) + 1;

std::string_view to_string(MsgType t) noexcept;
std::string_view to_string(SessionRejectReason r) noexcept;
std::string_view to_string(LogonRejectReason r) noexcept;
std::string_view to_string(LogoutReason r) noexcept;

// The fixed length of a message type, 0 for an unknown type.
constexpr std::size_t message_length(MsgType t) noexcept {
  switch (t) {
    case MsgType::kLogon: return sizeof(Logon);
    case MsgType::kLogout: return sizeof(Logout);
    case MsgType::kHeartbeat: return sizeof(Heartbeat);
    case MsgType::kReportsRequest: return sizeof(ReportsRequest);
    case MsgType::kNewOrder: return sizeof(NewOrder);
    case MsgType::kCancelOrder: return sizeof(CancelOrder);
    case MsgType::kModifyOrder: return sizeof(ModifyOrder);
    case MsgType::kLogonAck: return sizeof(LogonAck);
    case MsgType::kLogonReject: return sizeof(LogonReject);
    case MsgType::kServerLogout: return sizeof(ServerLogout);
    case MsgType::kServerHeartbeat: return sizeof(ServerHeartbeat);
    case MsgType::kReportsReplayed: return sizeof(ReportsReplayed);
    case MsgType::kExecutionReport: return sizeof(ExecutionReport);
    case MsgType::kCancelReject: return sizeof(OrderReject);
    case MsgType::kModifyReject: return sizeof(OrderReject);
    case MsgType::kSessionReject: return sizeof(SessionReject);
    case MsgType::kAdminRequest: return sizeof(AdminRequest);
    case MsgType::kAdminResponse: return sizeof(AdminResponse);
  }
  return 0;
}

// Which side may send a type.
constexpr bool is_client_message(MsgType t) noexcept {
  const auto v = static_cast<std::uint8_t>(t);
  return message_length(t) != 0 && v < 100;
}
constexpr bool is_exchange_message(MsgType t) noexcept {
  const auto v = static_cast<std::uint8_t>(t);
  return message_length(t) != 0 && v >= 100;
}

// The message type a struct is sent as (OrderReject: pass the type explicitly).
template <typename M>
inline constexpr MsgType kTypeOf = MsgType{0};
template <>
inline constexpr MsgType kTypeOf<Logon> = MsgType::kLogon;
template <>
inline constexpr MsgType kTypeOf<Logout> = MsgType::kLogout;
template <>
inline constexpr MsgType kTypeOf<Heartbeat> = MsgType::kHeartbeat;
template <>
inline constexpr MsgType kTypeOf<ReportsRequest> = MsgType::kReportsRequest;
template <>
inline constexpr MsgType kTypeOf<NewOrder> = MsgType::kNewOrder;
template <>
inline constexpr MsgType kTypeOf<CancelOrder> = MsgType::kCancelOrder;
template <>
inline constexpr MsgType kTypeOf<ModifyOrder> = MsgType::kModifyOrder;
template <>
inline constexpr MsgType kTypeOf<LogonAck> = MsgType::kLogonAck;
template <>
inline constexpr MsgType kTypeOf<LogonReject> = MsgType::kLogonReject;
template <>
inline constexpr MsgType kTypeOf<ServerLogout> = MsgType::kServerLogout;
template <>
inline constexpr MsgType kTypeOf<ServerHeartbeat> = MsgType::kServerHeartbeat;
template <>
inline constexpr MsgType kTypeOf<ReportsReplayed> = MsgType::kReportsReplayed;
template <>
inline constexpr MsgType kTypeOf<ExecutionReport> = MsgType::kExecutionReport;
template <>
inline constexpr MsgType kTypeOf<SessionReject> = MsgType::kSessionReject;
template <>
inline constexpr MsgType kTypeOf<AdminRequest> = MsgType::kAdminRequest;
template <>
inline constexpr MsgType kTypeOf<AdminResponse> = MsgType::kAdminResponse;

// A message of type M with its header filled in (length, type, version; seq
// given) and every other byte zero.
template <typename M>
constexpr M make_message(std::uint32_t seq, MsgType type = kTypeOf<M>) noexcept {
  static_assert(std::is_trivially_copyable_v<M> && std::is_standard_layout_v<M>);
  M m{};
  m.header = Header{static_cast<std::uint16_t>(sizeof(M)), type, kProtocolVersion, seq};
  return m;
}

}  // namespace nanotick::proto
