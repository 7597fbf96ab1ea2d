// The gateway's admin check (docs/CONTROLS.md "Admin", PROTOCOL.md §1.7):
// what only the gateway knows -- the sender's role and the configured
// clients -- refused here, the rest sequenced for the controls. Same class
// and thread as order_gateway.cpp.
#include "exchange/sessions/order_gateway.hpp"
#include "exchange/sessions/order_gateway_send.hpp"
#include "exchange/sessions/wire_translation.hpp"

namespace nanotick::exchange {

bool OrderGateway::handle_admin(Session& s, const proto::Header& h, const proto::AdminRequest& m, std::uint64_t tsc,
                                std::uint64_t now) noexcept {
  // Refused here, never sequenced (exec_seq 0): what only the gateway knows
  // -- the sender's role and the configured clients. The rest is the
  // controls' to check, deterministically, in the sequenced stream.
  const engine::RequestType type = admin_request_type(m.action);
  engine::RejectReason why = engine::RejectReason::kNone;
  if (s.client == nullptr || !s.client->admin) why = engine::RejectReason::kNotAdmin;
  else if (!engine::is_admin_request(type)) why = engine::RejectReason::kInvalidRequestType;
  else if (type != engine::RequestType::kHaltInstrument && type != engine::RequestType::kResumeInstrument &&
           config_.find_client(m.target_client) == nullptr)
    why = engine::RejectReason::kUnknownTargetClient;
  if (why != engine::RejectReason::kNone) {
    counters_.admin_refused.add();
    for (std::size_t i = 0; i < GatewayCounters::kAdminRefusals.size(); ++i)
      if (GatewayCounters::kAdminRefusals[i] == why) counters_.admin_refusals[i].add();
    send(s, admin_refusal(m, h.seq, why), now);
    return true;
  }
  engine::Request rq = to_request(m, s.client_id);
  rq.event_id = make_event_id(s.client_id, s.generation, h.seq);
  counters_.admin_requests.add();
  forward(s, rq, tsc);
  return true;
}

}  // namespace nanotick::exchange
