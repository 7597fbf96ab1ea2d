// The FIX gateway process's core (docs/FIX.md "Shape"): one FixSessionLayer
// (QuickFIX's acceptor) and one FixOrderSession per configured FIX session,
// each with its own nanotick order-entry session, all polled by one thread.
//
// Start-up: each session's order map is loaded and its venue session logs on
// (start() waits for every logon, bounded); only then does QuickFIX listen
// (on the configured address alone: fix_listen_socket.hpp), so a FIX client
// never logs on to a gateway that cannot reach the venue. A FIX Logon must
// carry its session's password (Password, 554), checked against the config's
// hash in constant time.
// While a venue session is down afterwards, FIX logons for it are refused and
// its orders rejected, and it reconnects with back-off.
//
// A core agent (core/agent.hpp), run like every process's runners
// (core::make_agent_runner, [threads] "gateway"): on_start() logs the venue
// sessions on and starts QuickFIX, do_work() is one pass over QuickFIX's
// events and every venue session, on_close() logs out.
//
// Idle: QuickFIX's poll waits in select() on the FIX sockets; the venue
// sessions are polled between those waits. With spin, the waits are 0 (a
// CPU of its own); otherwise, after `spin_us` with nothing to do
// and no request waiting for the venue's answer, each wait lasts up to
// `idle_wait_us`: FIX input wakes it at once, and the answers to requests
// the gateway sent do not wait (it does not wait while any is pending), but
// a report the venue sends unasked (a resting order filled) can wait that
// long. How this combines with the runner's idle strategy: do_work().
//
// Not thread-safe: one thread at a time (made on one, run on the runner's,
// read again after the runner is joined).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tsc_clock.hpp"
#include "fix/fix_gateway_config.hpp"
#include "fix/fix_order_session.hpp"
#include "fix/fix_session_layer.hpp"
#include "ipc/stream_link.hpp"
#include "net/socket_address.hpp"

namespace nanotick::fix {

// FIX Logons the gateway itself judged (docs/FIX.md "Sessions and
// credentials"); what QuickFIX drops before that is in the session layer's
// counters.
struct FixLogonCounters {
  std::uint64_t accepted = 0;
  std::uint64_t no_password = 0;     // Logout: the Logon carried no Password (554)
  std::uint64_t wrong_password = 0;  // Logout: its Password is not the session's
  std::uint64_t venue_down = 0;      // Logout: the session's venue session is not logged on
};

struct FixGatewayOptions {
  ipc::Transport transport = ipc::Transport::kTcp;
  std::optional<net::SocketAddress> exchange;  // TCP: overrides the venue config's order-entry address
  bool spin = false;
  std::uint32_t spin_us = 50;
  std::uint32_t idle_wait_us = 200;
  std::string message_log_dir;                 // QuickFIX's message log ("" = none)
  std::uint32_t logon_wait_ms = 10'000;        // start(): every venue session logged on within this
};

class FixGateway final : public FixSessionEvents {
 public:
  using LogFn = std::function<void(const std::string&)>;

  // Loads the order maps (throws std::runtime_error on one it cannot trust).
  FixGateway(const FixGatewayConfig& config, FixGatewayOptions options, LogFn log);
  ~FixGateway() override;

  // Logs every venue session on and waits for each one's missed fills
  // (throws std::runtime_error naming the session that could not), then
  // starts QuickFIX's acceptor.
  void start();
  // Logs the venue sessions out (bounded; their open orders are reported
  // Canceled), then the FIX sessions.
  void stop();

  // ---- core::Agent ------------------------------------------------------------
  void on_start() { start(); }
  // One pass: QuickFIX's events, then every venue session. Throws
  // std::runtime_error with failure() once there is one.
  int do_work();
  void on_close() { stop(); }
  std::string_view role_name() const noexcept { return "fix-gateway"; }

  // Why the gateway must stop ("" while it may run): its order map could not be written.
  const std::string& failure() const noexcept { return failure_; }
  const std::vector<std::unique_ptr<FixOrderSession>>& sessions() const noexcept { return sessions_; }
  const FixSessionLayer* session_layer() const noexcept { return layer_.get(); }
  const FixLogonCounters& logon_counters() const noexcept { return logon_counters_; }

  // ---- FixSessionEvents --------------------------------------------------------
  std::string on_logon_request(const FixLogonRequest& logon) override;
  void on_connection_dropped(const std::string& why) override;
  void on_logon(std::size_t session) override;
  void on_logout(std::size_t session) override;
  void on_request(const FixOrderRequest& request) override;

 private:
  int poll_venue() noexcept;

  const FixGatewayConfig& config_;
  FixGatewayOptions options_;
  LogFn log_;
  std::vector<std::unique_ptr<FixOrderSession>> sessions_;
  std::unique_ptr<FixSessionLayer> layer_;
  const core::TscClock& clock_ = core::TscClock::global();
  std::uint64_t last_work_ns_ = 0;
  std::string failure_;
  FixLogonCounters logon_counters_;
};

}  // namespace nanotick::fix
