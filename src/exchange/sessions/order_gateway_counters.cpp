// The gateway's counters into the counters file, under the names the
// exchange has always reported them by, and the ack latency summaries. Same
// class as order_gateway.cpp; place_counters() runs at start-up, before
// the gateway's thread.
#include <string>

#include "exchange/sessions/order_gateway.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::exchange {

void OrderGateway::place_counters(core::CountersFile& file) {
  GatewayCounters& g = counters_;
  file.begin_group();
  file.place(g.connections_accepted, "connections_accepted");
  file.place(g.connections_refused, "connections_refused");
  file.place(g.shm_connections_accepted, "shm.connections_accepted");
  file.place(g.shm_connections_refused, "shm.connections_refused");
  file.place(g.shm_setup_failures, "shm.setup_failures");
  file.place(g.shm_broken_rings, "shm.broken_rings");
  file.place(g.shm_peer_gone, "shm.peer_process_gone");
  file.place(g.sessions_logged_on, "sessions_logged_on");
  file.place(g.sessions_closed, "sessions_closed");
  file.place(g.sessions_live, "sessions_live", core::CounterKind::kGauge);
  file.place(g.connections_open, "connections_open", core::CounterKind::kGauge);
  file.place(g.messages_in, "messages_in");
  file.place(g.messages_out, "messages_out");
  file.place(g.bytes_in, "bytes_in");
  file.place(g.bytes_out, "bytes_out");
  file.place(g.requests_forwarded, "requests_forwarded");
  file.place(g.reports_dropped, "reports_dropped_client_gone");
  file.place(g.answers_dropped, "answers_dropped_slow_consumer");
  file.place(g.disconnect_cancels, "disconnect_cancels");
  file.place(g.disconnect_mass_cancels, "disconnect_mass_cancels");
  file.place(g.disconnect_cancels_dropped, "disconnect_cancels_dropped");
  file.place(g.pending_cancels, "pending_cancels", core::CounterKind::kGauge);
  file.place(g.admin_requests, "admin.requests");
  file.place(g.admin_refused, "admin.refused");
  for (std::size_t i = 0; i < g.admin_refusals.size(); ++i)
    file.place(g.admin_refusals[i],
               "admin.refused." + std::to_string(static_cast<unsigned>(GatewayCounters::kAdminRefusals[i])));
  file.place(g.admin_cancels, "admin.cancels");
  file.place(g.replay_requests, "replay.requests");
  file.place(g.replay_answers_dropped, "replay.answers_dropped");
  if (stamp_answers_) file.place(g.answers_unstamped, "telemetry.answers_unstamped");
  for (std::size_t i = 1; i < g.session_rejects.size(); ++i)
    file.place(g.session_rejects[i],
               "session_reject." + std::string(proto::to_string(static_cast<proto::SessionRejectReason>(i))));
  for (std::size_t i = 1; i < g.logon_rejects.size(); ++i)
    file.place(g.logon_rejects[i],
               "logon_reject." + std::string(proto::to_string(static_cast<proto::LogonRejectReason>(i))));
  // Engine rejects by reason code (docs/MATCHING.md; 1xx invalid, 2xx state, 3xx capacity; 4xx the venue's
  // controls, docs/CONTROLS.md): the codes that exist.
  const std::string_view unknown = market::to_string(static_cast<market::RejectReason>(GatewayCounters::kRejectCodes));
  for (std::size_t code = 1; code < g.engine_rejects.size(); ++code)
    if (market::to_string(static_cast<market::RejectReason>(code)) != unknown)
      file.place(g.engine_rejects[code], "engine_reject." + std::to_string(code));
  for (std::size_t i = 0; i < g.logouts.size(); ++i)
    file.place(g.logouts[i], "logout." + std::string(proto::to_string(static_cast<proto::LogoutReason>(i))));
  // Each client's fills (what its own positions must agree with).
  for (std::size_t i = 0; i < config_.clients.size(); ++i) {
    ClientFillTotals& f = client_fills_[i];
    const std::string k = "client." + std::to_string(config_.clients[i].id) + ".";
    file.place(f.fills, k + "fills");
    file.place(f.bought_qty, k + "bought_qty");
    file.place(f.sold_qty, k + "sold_qty");
    file.place(f.bought_notional, k + "bought_notional", core::CounterKind::kGauge);
    file.place(f.sold_notional, k + "sold_notional", core::CounterKind::kGauge);
  }
  ack_.place(file);
}

void OrderGateway::publish_latency_summaries() noexcept { ack_.publish(); }

}  // namespace nanotick::exchange
