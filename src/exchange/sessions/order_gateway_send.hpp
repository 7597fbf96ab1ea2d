// The gateway's send path (OrderGateway::send, send_answer): member
// templates every order_gateway*.cpp instantiates for the messages it sends,
// defined once here. Include only from those files: same class and thread.
#pragma once

#include "exchange/sessions/order_gateway.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::exchange {

template <typename M>
bool OrderGateway::send(Session& s, M m, std::uint64_t now) noexcept {
  if (s.state == SessionState::kFree || s.state == SessionState::kClosing) return false;
  m.header.seq = s.seq.next_out();
  bool queued = s.out.append(m);
  if (!queued) {
    flush(s);  // make room by writing what the socket takes now
    if (s.state == SessionState::kFree) return false;
    queued = s.out.append(m);
  }
  if (!queued) {
    // The client does not read: its unwritten answers are dropped, a Logout
    // is queued in the room that leaves, and the session closes.
    drop_unwritten_output(s);
    logout_and_close(s, proto::LogoutReason::kSlowConsumer, now);
    return false;
  }
  s.seq.sent();
  s.liveness.sent(now);
  counters_.messages_out.add();
  return true;
}

template <typename M>
void OrderGateway::send_answer(Session& s, const M& m, std::uint64_t cause_event_id, std::uint64_t received_tsc,
                               std::uint64_t now) noexcept {
  if (!send(s, m, now)) return;
  // An answer waits for its write when its order's ack latency ends there
  // (its first answer) or when telemetry stamps it (ex_tcp_write).
  const bool stamp = stamp_answers_ && NT_RECORDING();
  if (received_tsc == 0 && !stamp) return;
  // Its last byte is the last queued.
  if (!s.out.stamps().push(s.out.queued_end(), (std::uint64_t{s.client_id} << 32) | m.ref_seq,
                           stamp ? telemetry_order_key(cause_event_id) : kUnstampedAnswer, received_tsc) &&
      stamp)
    counters_.answers_unstamped.add();
}

}  // namespace nanotick::exchange
