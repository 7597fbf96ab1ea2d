// What the trader's engine thread tells its status callback (Trader::run):
// the periodic status line and session ends, as values and static words
// rather than text. The callback logs them through the async logger
// (NT_LOG_WITH with the format strings below: the bytes are copied, the
// logger's back-end thread formats and writes), so the engine thread neither
// formats nor waits for I/O. The format strings live here so the log line and
// Trader::status_line() say the same words.
//
// Thread-safety: plain values; the string views are valid during the
// callback only (they view the trader's config and static tables).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "client/order_entry_client_types.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::trading {

// "mm1: logged on, books live 2/2, 160 orders/s, fills 12, risk blocks 0, pnl
// 3.5, position volume 4, tick-to-trade p50 4.10 us p99 9.80 us (1200)"
// (tests/integration/trader/trader_harness.py reads ", fills N, ").
struct TraderStatus {
  static constexpr std::string_view kFormat =
      "{}: {}, books live {}/{}, {:.0f} orders/s, fills {}, risk blocks {}, pnl {:.1f}, position volume {}, "
      "tick-to-trade p50 {:.2f} us p99 {:.2f} us ({})";

  std::string_view name;  // the trader's ([trader] name)
  bool logged_on = false;
  std::uint32_t books_live = 0;
  std::uint32_t instruments = 0;
  double orders_per_s = 0;  // orders, modifies and cancels sent since the previous status
  std::uint64_t fills = 0;
  std::uint64_t risk_blocks = 0;
  double pnl = 0;
  std::int64_t position_volume = 0;
  double tick_to_trade_p50_us = 0;
  double tick_to_trade_p99_us = 0;
  std::uint64_t tick_to_trade_count = 0;

  // f(values...) in kFormat's order.
  template <typename F>
  decltype(auto) apply(F&& f) const {
    return f(name, logged_on ? "logged on" : "not logged on", books_live, instruments, orders_per_s, fills, risk_blocks,
             pnl, position_volume, tick_to_trade_p50_us, tick_to_trade_p99_us, tick_to_trade_count);
  }
};

// A session end in words: "session ended: logon rejected (bad credentials),
// retry in 200 ms", "session ended for good: ...". Every word is a static
// string (strerror's for an errno), so nothing is formatted to make one.
struct SessionEnd {
  static constexpr std::string_view kFormat = "{}: {}{}{}{}";                      // fatal, or no retry
  static constexpr std::string_view kRetryFormat = "{}: {}{}{}{}, retry in {} ms";  // then + retry_in_ms

  std::string_view head;    // "session ended" / "session ended for good"
  std::string_view reason;  // to_string(DisconnectReason)
  std::string_view detail;  // empty: none (written in parentheses)
  std::uint32_t retry_in_ms = 0;  // 0: no retry line (fatal, or none planned)

  static SessionEnd of(const client::Disconnect& d) noexcept {
    SessionEnd e{
        d.fatal ? "session ended for good" : "session ended", to_string(d.reason), {}, d.fatal ? 0 : d.retry_in_ms};
    switch (d.reason) {
      case client::DisconnectReason::kLogonRejected:
        e.detail = proto::to_string(static_cast<proto::LogonRejectReason>(d.detail));
        break;
      case client::DisconnectReason::kServerLogout:
        e.detail = proto::to_string(static_cast<proto::LogoutReason>(d.detail));
        break;
      case client::DisconnectReason::kProtocolError:
        e.detail = to_string(static_cast<client::ProtocolError>(d.detail));
        break;
      case client::DisconnectReason::kConnectFailed:
      case client::DisconnectReason::kPeerClosed:
      case client::DisconnectReason::kIoError:
        if (d.detail != 0) e.detail = std::strerror(d.detail);
        break;
      default: break;
    }
    return e;
  }

  // f(values...) in kFormat's order (kRetryFormat: then retry_in_ms).
  template <typename F>
  decltype(auto) apply(F&& f) const {
    const bool has_detail = !detail.empty();
    return f(head, reason, has_detail ? " (" : "", detail, has_detail ? ")" : "");
  }
};

}  // namespace nanotick::trading
