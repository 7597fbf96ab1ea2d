// The FIX application messages the gateway handles, as plain values: what
// the session layer (fix_session_layer.cpp, QuickFIX) decodes an order
// message into, and what it encodes the gateway's answers from. The boundary
// between QuickFIX and the rest of the gateway (docs/FIX.md "Shape").
//
// C++14 on purpose: Debian 12's QuickFIX 1.15 headers use dynamic exception
// specifications, which C++17 removed, so the one file that includes them is
// compiled as C++14 and shares only this header (and the session layer's)
// with the C++20 rest. Plain values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nanotick {
namespace fix {

// NewOrderSingle (D), OrderCancelRequest (F) or OrderCancelReplaceRequest (G).
// Fields are as received: the session layer checked them against the data
// dictionary (required fields there, tags known, enum values defined by FIX
// 4.4); what nanotick supports of them is the order mapping's to check.
struct FixOrderRequest {
  enum class Kind : char { kNew = 'D', kCancel = 'F', kReplace = 'G' };
  Kind kind = Kind::kNew;
  std::size_t session = 0;     // index into the gateway's configured sessions
  int msg_seq_num = 0;         // MsgSeqNum (34), for logs
  bool poss_dup = false;       // PossDupFlag (43) = Y: a resend of a message sent before
  std::string cl_ord_id;       // 11
  std::string orig_cl_ord_id;  // 41 (F, G)
  std::string symbol;          // 55
  char side = 0;               // 54
  char ord_type = 0;           // 40 (D, G; 0 when absent)
  char time_in_force = 0;      // 59 (0 when absent)
  std::string price;           // 44, the text as sent ("" when absent)
  std::string order_qty;       // 38, the text as sent ("" when absent)
  std::uint64_t received_tsc = 0;  // when the session layer handed it over (telemetry)
};

// A Logon (A) for a configured session, before QuickFIX accepts it: what the
// gateway checks (docs/FIX.md "Sessions and credentials").
struct FixLogonRequest {
  std::size_t session = 0;    // index into the gateway's configured sessions
  bool has_password = false;  // Password (554) present
  std::string password;       // its value ("" when absent)
};

// ExecutionReport (8). Quantities and prices are whole numbers: nanotick's
// prices are integers in the instrument's price unit (docs/PROTOCOL.md).
struct FixExecutionReport {
  std::size_t session = 0;
  std::string order_id;        // 37: the venue's order id, "NONE" when it has none
  std::string exec_id;         // 17: unique per session, across restarts
  std::string cl_ord_id;       // 11
  std::string orig_cl_ord_id;  // 41 (cancel, replace; "" = absent)
  std::string symbol;          // 55
  std::string text;            // 58 ("" = absent)
  char exec_type = 0;          // 150
  char ord_status = 0;         // 39
  char side = 0;               // 54
  char ord_type = 0;           // 40 (0 = absent)
  char time_in_force = 0;      // 59 (0 = absent)
  bool has_price = false;      // 44
  std::int64_t price = 0;
  std::int64_t order_qty = 0;  // 38
  bool has_last = false;       // 31 and 32 (fills)
  std::int64_t last_px = 0;
  std::int64_t last_qty = 0;
  std::int64_t cum_qty = 0;     // 14
  std::int64_t leaves_qty = 0;  // 151
  double avg_px = 0;            // 6
  int ord_rej_reason = -1;      // 103 (-1 = absent)
};

// OrderCancelReject (9).
struct FixCancelReject {
  std::size_t session = 0;
  std::string order_id;        // 37 ("NONE" when the order is unknown)
  std::string cl_ord_id;       // 11: the refused request's
  std::string orig_cl_ord_id;  // 41
  std::string text;            // 58
  char ord_status = 0;         // 39: the order's status now ('8' rejected when unknown)
  char response_to = 0;        // 434: '1' cancel request, '2' cancel/replace request
  int cxl_rej_reason = 0;      // 102: 0 too late to cancel, 1 unknown order, 3 already pending, 99 other
};

}  // namespace fix
}  // namespace nanotick
