#include "fix/fix_order_session.hpp"

#include <algorithm>
#include <utility>

#include "fix/fix_order_mapping.hpp"
#include "market/reject_reason.hpp"

namespace nanotick::fix {

namespace {
using Kind = FixOrderRequest::Kind;
}  // namespace

FixOrderSession::FixOrderSession(std::size_t index, const FixSessionConfig& session, const venue::VenueConfig& venue,
                                 client::OrderEntryClientConfig client, const std::string& order_map_path, LogFn log)
    : index_(index),
      name_(session.sender_comp_id + "->" + session.target_comp_id),
      venue_(venue),
      orders_(order_map_path),
      client_(std::move(client), *this),
      log_(std::move(log)) {
  for (std::size_t i = 0; i < venue.instruments.instruments.size(); ++i)
    symbols_.emplace(venue.instruments.instruments[i].symbol, static_cast<market::InstrumentId>(i));
  // What the first logon asks the venue for: with orders left open, every fill
  // after the oldest of them was made (each one's after_exec_seq: the highest
  // exec_seq the session had seen then), so each order's fills can be summed
  // against the CumQty it reported; without, nothing it can miss, so only the
  // fills after the highest exec_seq the map has seen.
  last_exec_seq_ = orders_.highest_after_exec_seq();
  std::uint64_t after = last_exec_seq_;
  for (const FixOrder* o : orders_.open_orders()) {
    recovering_.emplace(o->number, 0);
    after = std::min(after, o->after_exec_seq);
  }
  client_.request_reports_after(after);
}

void FixOrderSession::attach(FixSessionLayer& layer) {
  layer_ = &layer;
  auto replay = std::move(before_attach_);
  before_attach_.clear();
  for (const auto& m : replay) {
    if (const auto* fill = std::get_if<proto::ExecutionReport>(&m)) on_replayed_fill(*fill);
    else on_reports_replayed(std::get<proto::ReportsReplayed>(m));
  }
}

std::string FixOrderSession::logon_refusal() const {
  if (venue_up()) return "";
  if (client_.logged_on())
    return std::string("the venue session of client ") + std::to_string(client_.config().client_id) +
           " is replaying the fills it missed: try again";
  return std::string("the venue session of client ") + std::to_string(client_.config().client_id) +
         " is not logged on (" + std::string(client::to_string(client_.state())) + ")";
}

std::optional<market::InstrumentId> FixOrderSession::instrument(const std::string& symbol) const {
  const auto it = symbols_.find(symbol);
  if (it == symbols_.end()) return std::nullopt;
  return it->second;
}

std::string FixOrderSession::order_id_text(const FixOrder& o) const {
  return o.order_id == 0 ? std::string("NONE") : std::to_string(o.order_id);
}

FixExecutionReport FixOrderSession::report_of(const FixOrder& o, char exec_type) const {
  FixExecutionReport r;
  r.session = index_;
  r.order_id = order_id_text(o);
  r.cl_ord_id = o.cl_ord_id;
  r.symbol = o.instrument < venue_.instruments.instruments.size() ? venue_.instruments.instruments[o.instrument].symbol
                                                                  : std::to_string(o.instrument);
  r.exec_type = exec_type;
  r.ord_status = o.status;
  r.side = o.side;
  r.ord_type = o.ord_type;
  r.time_in_force = o.time_in_force;
  r.has_price = o.ord_type == '2';
  r.price = o.price;
  r.order_qty = o.qty;
  r.cum_qty = o.cum_qty;
  r.leaves_qty = o.leaves_qty();
  r.avg_px = o.avg_px();
  return r;
}

// Nothing is answered once the order map failed to record a change: the
// gateway stops (FixGateway::failure) rather than answer for what it could
// not record.
void FixOrderSession::send(const FixExecutionReport& r) {
  if (layer_ != nullptr && orders_.failure().empty()) layer_->send(r);
}

void FixOrderSession::send(const FixCancelReject& r) {
  if (layer_ != nullptr && orders_.failure().empty()) layer_->send(r);
}

// ---- requests from the FIX client ----------------------------------------------

void FixOrderSession::on_request(const FixOrderRequest& r) {
  // A message resent after a gap (PossDupFlag) that this gateway already
  // handled: its answers are in QuickFIX's store. Handling it again would
  // refuse it as a duplicate ClOrdID.
  if (r.poss_dup && orders_.known(r.cl_ord_id)) {
    ++counters_.poss_dup_ignored;
    return;
  }
  const std::uint64_t t0 = clock_.now();
  const std::uint64_t sent_before = counters_.new_orders + counters_.cancels + counters_.replaces;
  if (r.kind == Kind::kNew) new_order(r);
  else cancel_or_replace(r);
  if (counters_.new_orders + counters_.cancels + counters_.replaces != sent_before)  // written: send_* writes at once
    inbound_ns_.record(static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(clock_.now() - t0))));
}

void FixOrderSession::refuse_new(const FixOrderRequest& r, int reason, const std::string& text) {
  ++counters_.refused_here;
  FixOrder o;
  // A ClOrdID used before keeps naming its own order: the refused one gets no name.
  o.cl_ord_id = orders_.known(r.cl_ord_id) ? std::string() : r.cl_ord_id;
  o.status = ord_status::kRejected;
  o.side = r.side;
  o.ord_type = r.ord_type;
  o.time_in_force = r.time_in_force;
  o.price = parse_whole_number(r.price).value_or(0);
  o.qty = std::max<std::int64_t>(0, parse_whole_number(r.order_qty).value_or(0));
  if (const auto id = instrument(r.symbol)) o.instrument = *id;
  const FixOrder& saved = orders_.add(std::move(o));
  FixExecutionReport er = report_of(saved, exec_type::kRejected);
  er.exec_id = "G" + std::to_string(saved.number) + "-R";
  er.cl_ord_id = r.cl_ord_id;
  er.symbol = r.symbol;
  er.ord_rej_reason = reason;
  er.text = text;
  send(er);
}

void FixOrderSession::new_order(const FixOrderRequest& r) {
  if (orders_.known(r.cl_ord_id))
    return refuse_new(r, ord_rej_reason::kDuplicateOrder, "ClOrdID " + r.cl_ord_id + " was used before");
  const auto id = instrument(r.symbol);
  if (!id) return refuse_new(r, ord_rej_reason::kUnknownSymbol, "unknown Symbol " + r.symbol);
  const auto side = venue_side(r.side);
  if (!side)
    return refuse_new(r, ord_rej_reason::kUnsupportedOrderCharacteristic,
                      std::string("Side ") + r.side + " is not supported (1 buy and 2 sell are)");
  std::string why;
  const auto type = venue_order_type(r.ord_type, r.time_in_force, why);
  if (!type) return refuse_new(r, ord_rej_reason::kUnsupportedOrderCharacteristic, why);
  const auto qty = parse_whole_number(r.order_qty);
  if (!qty || *qty <= 0)
    return refuse_new(r, ord_rej_reason::kIncorrectQuantity, "OrderQty " + r.order_qty + " is not a whole number > 0");
  std::int64_t price = 0;
  if (*type != market::OrderType::kMarket) {
    if (r.price.empty()) return refuse_new(r, ord_rej_reason::kOther, "a limit order needs a Price");
    const auto p = parse_whole_number(r.price);
    if (!p)
      return refuse_new(r, ord_rej_reason::kOther,
                        "Price " + r.price + " is not a whole number of the instrument's price unit");
    price = *p;
  }
  if (!venue_up())
    return refuse_new(r, ord_rej_reason::kExchangeClosed, "the venue session is not logged on: try again");

  FixOrder o;
  o.cl_ord_id = r.cl_ord_id;
  o.instrument = *id;
  o.side = r.side;
  o.ord_type = r.ord_type;
  o.time_in_force = r.time_in_force;
  o.price = price;
  o.qty = *qty;
  o.after_exec_seq = last_exec_seq_;
  FixOrder& saved = orders_.add(std::move(o));  // before the venue can answer for it
  const client::SendResult sent =
      client_.send_new_order(saved.number, *id, *side, *type, market::StpMode::kNone, price, *qty);
  if (!sent.sent()) {
    saved.status = ord_status::kRejected;
    orders_.save(saved);
    FixExecutionReport er = report_of(saved, exec_type::kRejected);
    er.exec_id = "G" + std::to_string(saved.number) + "-R";
    er.ord_rej_reason = ord_rej_reason::kOther;
    er.text = std::string("the venue session could not take the order: ") + std::string(client::to_string(sent.status));
    ++counters_.refused_here;
    return send(er);
  }
  ++counters_.new_orders;
  pending_[sent.seq] = Pending{Kind::kNew, saved.number, r.cl_ord_id, {}};
}

void FixOrderSession::refuse_cancel(const FixOrderRequest& r, const FixOrder* o, int reason, const std::string& text) {
  ++counters_.refused_here;
  send_cancel_reject(o, r.cl_ord_id, r.orig_cl_ord_id, r.kind == Kind::kCancel ? '1' : '2', reason, text);
}

void FixOrderSession::send_cancel_reject(const FixOrder* o, const std::string& cl_ord_id,
                                         const std::string& orig_cl_ord_id, char response_to, int reason,
                                         const std::string& text) {
  FixCancelReject cr;
  cr.session = index_;
  cr.order_id = o == nullptr ? std::string("NONE") : order_id_text(*o);
  cr.cl_ord_id = cl_ord_id;
  cr.orig_cl_ord_id = orig_cl_ord_id;
  cr.ord_status = o == nullptr ? ord_status::kRejected : o->status;
  cr.response_to = response_to;
  cr.cxl_rej_reason = reason;
  cr.text = text;
  send(cr);
}

void FixOrderSession::cancel_or_replace(const FixOrderRequest& r) {
  FixOrder* o = orders_.find(r.orig_cl_ord_id);
  if (o == nullptr)
    return refuse_cancel(r, nullptr, cxl_rej_reason::kUnknownOrder, "unknown OrigClOrdID " + r.orig_cl_ord_id);
  if (orders_.known(r.cl_ord_id))
    return refuse_cancel(r, o, cxl_rej_reason::kOther, "ClOrdID " + r.cl_ord_id + " was used before");
  if (!o->open()) return refuse_cancel(r, o, cxl_rej_reason::kTooLateToCancel, "the order is no longer open");
  if (o->status == ord_status::kPendingNew)
    return refuse_cancel(r, o, cxl_rej_reason::kAlreadyPending, "the order is not acknowledged yet");
  if (replace_in_flight_.contains(o->number))
    return refuse_cancel(r, o, cxl_rej_reason::kAlreadyPending, "a cancel or replace of the order is pending");
  const auto id = instrument(r.symbol);
  if (!id || *id != o->instrument)
    return refuse_cancel(r, o, cxl_rej_reason::kOther, "Symbol differs from the order's");
  if (r.side != o->side) return refuse_cancel(r, o, cxl_rej_reason::kOther, "Side differs from the order's");
  if (!venue_up()) return refuse_cancel(r, o, cxl_rej_reason::kOther, "the venue session is not logged on: try again");

  client::SendResult sent;
  if (r.kind == Kind::kCancel) {
    sent = client_.send_cancel(o->number, o->instrument);
  } else {
    if (r.ord_type != o->ord_type || r.ord_type != '2')
      return refuse_cancel(r, o, cxl_rej_reason::kOther,
                           "a replace may change Price and OrderQty of a limit order only");
    if (r.time_in_force != o->time_in_force)
      return refuse_cancel(r, o, cxl_rej_reason::kOther, "a replace may not change TimeInForce");
    const auto qty = parse_whole_number(r.order_qty);
    if (!qty || *qty <= 0)
      return refuse_cancel(r, o, cxl_rej_reason::kOther, "OrderQty " + r.order_qty + " is not a whole number > 0");
    const auto price = parse_whole_number(r.price);
    if (!price)
      return refuse_cancel(r, o, cxl_rej_reason::kOther,
                           "Price " + r.price + " is not a whole number of the instrument's price unit");
    sent = client_.send_modify(o->number, o->instrument, *price, *qty);
  }
  if (!sent.sent())
    return refuse_cancel(
        r, o, cxl_rej_reason::kOther,
        std::string("the venue session could not take the request: ") + std::string(client::to_string(sent.status)));
  ++(r.kind == Kind::kCancel ? counters_.cancels : counters_.replaces);
  pending_[sent.seq] = Pending{r.kind, o->number, r.cl_ord_id, r.orig_cl_ord_id};
  replace_in_flight_[o->number] = sent.seq;
}

// ---- answers from the venue --------------------------------------------------------

void FixOrderSession::on_logon(const proto::LogonAck&) {
  log_(name_ + ": venue session of client " + std::to_string(client_.config().client_id) + " logged on");
}

void FixOrderSession::on_execution_report(const proto::ExecutionReport& m) {
  if ((m.flags & proto::kReportReplayed) != 0) {
    if (layer_ == nullptr) before_attach_.emplace_back(m);  // acted on by attach()
    else on_replayed_fill(m);
    return;
  }
  const std::uint64_t t0 = clock_.now();
  handle_report(m);
  outbound_ns_.record(static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(clock_.now() - t0))));
}

void FixOrderSession::handle_report(const proto::ExecutionReport& m) {
  last_exec_seq_ = std::max(last_exec_seq_, m.exec_seq);
  FixOrder* o = orders_.find(m.client_order_id);
  if (o == nullptr) {
    ++counters_.unknown_reports;
    log_(name_ + ": a venue report for client order id " + std::to_string(m.client_order_id) +
         ", which this gateway never sent: ignored");
    return;
  }
  ++counters_.venue_reports;
  // The request this report answers first, if it is one of ours still pending.
  Pending answered;
  bool first_answer = false;
  if (m.ref_seq != 0) {
    if (const auto it = pending_.find(m.ref_seq); it != pending_.end() && it->second.number == o->number) {
      const bool answers =
          it->second.kind == Kind::kNew
              ? (m.exec_type == proto::ExecType::kAccepted || m.exec_type == proto::ExecType::kRejected)
              : (m.exec_type == proto::ExecType::kCancelled || m.exec_type == proto::ExecType::kModified);
      if (answers) {
        answered = std::move(it->second);
        first_answer = true;
        pending_.erase(it);
        if (answered.kind != Kind::kNew) replace_in_flight_.erase(o->number);
      }
    }
  }
  const std::string exec_id = "E" + std::to_string(m.exec_seq);  // the venue's: unique, across restarts
  switch (m.exec_type) {
    case proto::ExecType::kAccepted: {
      o->order_id = m.order_id;
      o->status = ord_status::kNew;
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kNew);
      er.exec_id = exec_id;
      return send(er);
    }
    case proto::ExecType::kRejected: {
      o->status = ord_status::kRejected;
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kRejected);
      er.exec_id = exec_id;
      const auto reason = static_cast<market::RejectReason>(m.reject_reason);
      er.ord_rej_reason = fix_ord_rej_reason(reason);
      er.text = std::string(market::to_string(reason));
      return send(er);
    }
    case proto::ExecType::kFill: {
      o->cum_qty = m.cum_qty;
      o->notional += m.last_price * m.last_qty;
      o->status = m.leaves_qty == 0 ? ord_status::kFilled : ord_status::kPartiallyFilled;
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kTrade);
      er.exec_id = exec_id;
      er.has_last = true;
      er.last_px = m.last_price;
      er.last_qty = m.last_qty;
      er.leaves_qty = m.leaves_qty;
      return send(er);
    }
    case proto::ExecType::kCancelled: {
      const std::string previous = o->cl_ord_id;
      o->status = ord_status::kCanceled;
      // The cancel's ClOrdID names the cancelled order (or the replace's: one to
      // at or below the filled quantity, which the venue answers by cancelling).
      if (first_answer) orders_.rename(*o, answered.cl_ord_id);
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kCanceled);
      er.exec_id = exec_id;
      if (first_answer) er.orig_cl_ord_id = previous;
      if (!first_answer || answered.kind != Kind::kCancel) er.text = std::string(cancel_reason_text(m.cancel_reason));
      return send(er);
    }
    case proto::ExecType::kModified: {
      const std::string previous = o->cl_ord_id;
      if (first_answer) orders_.rename(*o, answered.cl_ord_id);
      o->price = m.price;
      o->qty = m.order_qty;
      o->cum_qty = m.cum_qty;
      o->status = m.cum_qty > 0 ? ord_status::kPartiallyFilled : ord_status::kNew;
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kReplaced);
      er.exec_id = exec_id;
      er.orig_cl_ord_id = previous;
      er.leaves_qty = m.leaves_qty;
      return send(er);
    }
  }
  ++counters_.unknown_reports;
  log_(name_ + ": a venue report of unknown exec_type " + std::to_string(static_cast<int>(m.exec_type)) + ": ignored");
}

void FixOrderSession::refuse_cancel(const Pending& p, char response_to, int reason, const std::string& text) {
  send_cancel_reject(orders_.find(p.number), p.cl_ord_id, p.orig_cl_ord_id, response_to, reason, text);
}

void FixOrderSession::on_order_reject(const proto::OrderReject& m, char response_to) {
  const auto it = pending_.find(m.ref_seq);
  if (it == pending_.end()) {
    ++counters_.unknown_reports;
    log_(name_ + ": a venue cancel/modify reject for a request this gateway is not waiting on: ignored");
    return;
  }
  const Pending p = std::move(it->second);
  pending_.erase(it);
  replace_in_flight_.erase(p.number);
  const auto reason = static_cast<market::RejectReason>(m.reason);
  refuse_cancel(p, response_to, fix_cxl_rej_reason(reason), std::string(market::to_string(reason)));
}

void FixOrderSession::on_session_reject(const proto::SessionReject& m) {
  // The venue refused one of our messages before sequencing it (rate limit, a
  // sequence problem): the request it carried is answered as refused.
  const auto it = pending_.find(m.ref_seq);
  if (it == pending_.end()) return;
  const Pending p = std::move(it->second);
  pending_.erase(it);
  const std::string text = "the venue refused the message: session reject " + std::to_string(m.reason);
  if (p.kind == Kind::kNew) {
    if (FixOrder* o = orders_.find(p.number)) {
      o->status = ord_status::kRejected;
      orders_.save(*o);
      FixExecutionReport er = report_of(*o, exec_type::kRejected);
      er.exec_id = "G" + std::to_string(o->number) + "-R";
      er.ord_rej_reason = ord_rej_reason::kOther;
      er.text = text;
      send(er);
    }
    return;
  }
  replace_in_flight_.erase(p.number);
  refuse_cancel(p, p.kind == Kind::kCancel ? '1' : '2', cxl_rej_reason::kOther, text);
}

void FixOrderSession::on_disconnected(const client::Disconnect& d) {
  const std::string why = std::string("venue session ended: ") + std::string(client::to_string(d.reason)) +
                          (d.fatal ? " (no retry)" : "; reconnecting in " + std::to_string(d.retry_in_ms) + " ms");
  if (d.was_logged_on || d.fatal) log_(name_ + ": " + why);
  // Before the first replay is complete the orders the last run left open
  // wait for it (at the next logon): their missed fills come before their Canceled.
  if (d.was_logged_on && first_replay_done_) end_of_venue_session(why + " (cancel on disconnect)");
}

}  // namespace nanotick::fix
