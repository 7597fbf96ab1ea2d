// The gateway's timers (docs/PROTOCOL.md §1.4): logon timeout, slow
// consumer, partial message, silence and heartbeats, the closing linger --
// and the shutdown that logs every session out. Same class and thread as
// order_gateway.cpp.
#include "core/time_units.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "exchange/sessions/order_gateway_send.hpp"

namespace nanotick::exchange {

void OrderGateway::run_timers(std::uint64_t now) noexcept {
  for (const auto& sp : sessions_) {
    Session& s = *sp;
    switch (s.state) {
      case SessionState::kFree: break;
      case SessionState::kAwaitingLogon:
        if (now - s.liveness.connected_ns() >= core::ns_from_ms(config_.server.logon_timeout_ms))
          logout_and_close(s, proto::LogoutReason::kLogonTimeout, now);
        break;
      case SessionState::kActive: {
        // A session whose input we are holding back (backpressure) is not
        // silent; but one that has not taken any of its output for 3
        // intervals does not read: a slow consumer.
        // Nor is one whose held input waits for us: what it left incomplete
        // is timed from when we take the rest (the clock restarts).
        if (s.input_blocked) {
          s.liveness.heard(now);
          s.partial_since_ns = now;
        }
        if (s.liveness.stalled_too_long(s.output_stalled_ns, now)) {
          drop_unwritten_output(s);
          logout_and_close(s, proto::LogoutReason::kSlowConsumer, now);
        } else if (s.partial_since_ns != 0 && !s.in.empty() &&
                   now - s.partial_since_ns >= core::ns_from_ms(config_.server.partial_message_timeout_ms)) {
          // Heard from, never silent, yet no message completes: a client
          // holding its slot by trickling bytes (or a broken sender).
          logout_and_close(s, proto::LogoutReason::kPartialMessageTimeout, now);
        } else if (s.liveness.silent(now)) {
          logout_and_close(s, proto::LogoutReason::kHeartbeatTimeout, now);
        } else if (s.liveness.heartbeat_due(now)) {
          send(s, proto::make_message<proto::ServerHeartbeat>(0), now);
        }
        break;
      }
      case SessionState::kClosing:
        if (now >= s.close_deadline_ns) release(s);
        break;
    }
  }
}

void OrderGateway::begin_shutdown() noexcept {
  accepting_ = false;
  const std::uint64_t now = clock_.now_ns();
  for (const auto& sp : sessions_)
    if (sp->state == SessionState::kActive || sp->state == SessionState::kAwaitingLogon)
      logout_and_close(*sp, proto::LogoutReason::kServerShutdown, now);
}

}  // namespace nanotick::exchange
