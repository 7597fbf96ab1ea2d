// The gateway's side of a ReportsRequest (docs/PROTOCOL.md §1.8): checked
// here, passed to the ReportReplayer on the ledger's thread
// (ledger/report_replay.hpp), and its answers sent on the session that
// asked -- if that connection is still the one on the slot. Same class and
// thread as order_gateway.cpp.
#include "exchange/sessions/order_gateway.hpp"
#include "exchange/sessions/order_gateway_send.hpp"
#include "proto/order_entry_codec.hpp"

namespace nanotick::exchange {

bool OrderGateway::handle_reports_request(Session& s, const proto::Header& h, const proto::ReportsRequest& m,
                                          bool first, std::uint64_t now) noexcept {
  if (!first) {
    s.seq.accept();
    session_reject(s, h, proto::SessionRejectReason::kReportsRequestNotFirst, now);
    return true;
  }
  if (replay_requests_ == nullptr) {  // no ledger to replay from: nothing is replayed
    s.seq.accept();
    counters_.replay_requests.add();
    auto done = proto::make_message<proto::ReportsReplayed>(0);
    done.through_exec_seq = m.after_exec_seq;
    send(s, done, now);
    return true;
  }
  const ReplayRequest rq{static_cast<std::uint32_t>(s.index), s.generation, s.client_id, m.after_exec_seq};
  if (!replay_requests_->try_push(rq)) {  // the replayer is behind: keep the bytes, retry next pass
    s.input_blocked = true;
    return false;
  }
  s.seq.accept();
  counters_.replay_requests.add();
  return true;
}

int OrderGateway::send_replayed(std::uint64_t now) noexcept {
  int work = 0;
  while (const ReplayAnswer* a = replay_answers_->front()) {
    Session* s = a->session_index < sessions_.size() ? sessions_[a->session_index].get() : nullptr;
    if (s == nullptr || s->state != SessionState::kActive || s->generation != a->generation) {
      counters_.replay_answers_dropped.add();  // the connection that asked has ended
    } else {
      // A long replay is paced by the client's reading, as its live answers
      // are (process_input's backpressure): the rest waits in the ring.
      if (s->out.size() > s->out.capacity() / 2) {
        flush(*s);
        if (s->out.size() > s->out.capacity() / 2) break;
      }
      if (a->end) send(*s, a->done, now);
      else send(*s, a->report, now);
    }
    replay_answers_->pop();
    ++work;
  }
  return work;
}

}  // namespace nanotick::exchange
