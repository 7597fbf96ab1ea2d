// One FIX session's orders across the venue session's start and end: the
// fills the venue sends again at logon (PROTOCOL.md §1.8, docs/FIX.md
// "Restarts") and the cancels its end implies (cancel_on_disconnect).
// Split from fix_order_session.cpp by subject; same class, same thread.
#include "fix/fix_order_session.hpp"

#include <algorithm>
#include <string>

#include "fix/fix_order_mapping.hpp"

namespace nanotick::fix {

namespace {
using Kind = FixOrderRequest::Kind;
}  // namespace

// A fill the venue sent again (PROTOCOL.md §1.8). It carries exec_seq, the
// order's number, price and quantity, not the order's CumQty: whether it is
// news is decided here.
void FixOrderSession::on_replayed_fill(const proto::ExecutionReport& m) {
  FixOrder* o = m.exec_type == proto::ExecType::kFill ? orders_.find(m.client_order_id) : nullptr;
  // No order of ours, or one older than ours under the same number (an order
  // map removed by hand starts numbering again): exec_seq is venue-wide and
  // every report of an order comes after the exec_seq it was made at.
  if (o == nullptr || m.exec_seq <= o->after_exec_seq) {
    ++counters_.replayed_known;
    return;
  }
  std::int64_t fresh = 0;
  if (const auto it = recovering_.find(o->number); it != recovering_.end()) {
    // Left open by the last run: the request reached back to before the
    // order was made, so all its fills come, in exec_seq order; those within
    // the CumQty the last run reported were reported.
    it->second += m.last_qty;
    if (it->second <= o->cum_qty) {
      ++counters_.replayed_known;
      return;
    }
    fresh = std::min<std::int64_t>(m.last_qty, it->second - o->cum_qty);
  } else if (first_replay_done_ && m.exec_seq > last_exec_seq_) {
    // A reconnect: this run read every report up to last_exec_seq_ in order,
    // so a fill after it is one it never read (made as the last session ended).
    fresh = m.last_qty;
  } else {
    ++counters_.replayed_known;
    return;
  }
  last_exec_seq_ = std::max(last_exec_seq_, m.exec_seq);
  o->cum_qty += fresh;
  o->notional += m.last_price * fresh;
  // An order reported Canceled when its session ended keeps that status
  // unless the fill completed it.
  if (o->open() || o->cum_qty >= o->qty)
    o->status = o->cum_qty >= o->qty ? ord_status::kFilled : ord_status::kPartiallyFilled;
  orders_.save(*o);
  FixExecutionReport er = report_of(*o, exec_type::kTrade);
  er.exec_id = "E" + std::to_string(m.exec_seq);  // the ExecID the live report would have had
  er.has_last = true;
  er.last_px = m.last_price;
  er.last_qty = fresh;
  er.text = first_replay_done_
                ? "a fill made as the venue session ended, which the gateway had not read; replayed by the venue"
                : "a fill the gateway had not reported before it stopped; replayed by the venue at logon";
  ++counters_.fills_replayed;
  send(er);
}

void FixOrderSession::on_reports_replayed(const proto::ReportsReplayed& m) {
  if (layer_ == nullptr) {
    before_attach_.emplace_back(m);  // acted on by attach()
    return;
  }
  log_(name_ + ": the venue replayed " + std::to_string(m.count) + " fill(s) through exec_seq " +
       std::to_string(m.through_exec_seq) + " (" + std::to_string(counters_.fills_replayed) +
       " never reported before, in all)");
  last_exec_seq_ = std::max(last_exec_seq_, m.through_exec_seq);
  if (first_replay_done_) return;
  first_replay_done_ = true;
  recovering_.clear();
  // Their fills are all reported now; the venue cancelled the rest when the
  // last run's session ended.
  end_of_venue_session("the gateway restarted; its venue session had ended (cancel on disconnect)");
}

// The venue cancelled every open order of the client when its session ended
// (cancel_on_disconnect, which the gateway's config requires): report each.
// Requests still waiting for an answer never get one.
void FixOrderSession::end_of_venue_session(const std::string& why) {
  for (auto& [seq, p] : pending_)
    if (p.kind != Kind::kNew)
      refuse_cancel(p, p.kind == Kind::kCancel ? '1' : '2', cxl_rej_reason::kTooLateToCancel, why);
  pending_.clear();
  replace_in_flight_.clear();
  for (FixOrder* o : orders_.open_orders()) {
    o->status = ord_status::kCanceled;
    orders_.save(*o);
    FixExecutionReport er = report_of(*o, exec_type::kCanceled);
    er.exec_id = "G" + std::to_string(o->number) + "-C";
    er.text = why;
    ++counters_.cancelled_on_session_end;
    send(er);
  }
}

}  // namespace nanotick::fix
