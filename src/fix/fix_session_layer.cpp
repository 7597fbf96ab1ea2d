// The one file that includes QuickFIX (compiled as C++14: see
// fix_messages.hpp). QuickFIX's settings are built here in code from the
// gateway's config: one acceptor session per configured CompID pair, always
// in session (StartTime = EndTime), sequence numbers kept across restarts
// (no reset on logon, logout or disconnect) in a file store per session.
#include "fix/fix_session_layer.hpp"

#include <quickfix/Application.h>
#include <quickfix/Exceptions.h>
#include <quickfix/FileLog.h>
#include <quickfix/FileStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/Values.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace nanotick {
namespace fix {

namespace {

constexpr const char* kBeginString = "FIX.4.4";

char first_char(const FIX::Message& m, int tag) {
  if (!m.isSetField(tag)) return 0;
  const std::string& v = m.getField(tag);
  return v.size() == 1 ? v[0] : '?';  // the dictionary allows only one-character values here
}

std::string text_of(const FIX::Message& m, int tag) { return m.isSetField(tag) ? m.getField(tag) : std::string(); }

void set_common(FIX::Message& m, const std::string& order_id, const std::string& cl_ord_id,
                const std::string& orig_cl_ord_id, char ord_status, const std::string& text) {
  m.setField(FIX::FIELD::OrderID, order_id);
  m.setField(FIX::FIELD::ClOrdID, cl_ord_id);
  if (!orig_cl_ord_id.empty()) m.setField(FIX::FIELD::OrigClOrdID, orig_cl_ord_id);
  m.setField(FIX::FIELD::OrdStatus, std::string(1, ord_status));
  if (!text.empty()) m.setField(FIX::FIELD::Text, text);
}

}  // namespace

// QuickFIX's Application declares its callbacks with dynamic exception
// specifications; an override must repeat them, which C++11 deprecates.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated"
struct FixSessionLayer::Impl : public FIX::Application {
  Impl(const FixSessionLayerConfig& config, FixSessionEvents& e) : events(e) {
    FIX::Dictionary defaults;
    defaults.setString(FIX::CONNECTION_TYPE, "acceptor");
    defaults.setInt(FIX::SOCKET_ACCEPT_PORT, config.port);
    defaults.setBool(FIX::SOCKET_REUSE_ADDRESS, true);
    defaults.setBool(FIX::SOCKET_NODELAY, true);
    defaults.setString(FIX::START_TIME, "00:00:00");  // equal: always in session
    defaults.setString(FIX::END_TIME, "00:00:00");
    defaults.setString(FIX::FILE_STORE_PATH, config.store_dir);
    defaults.setBool(FIX::USE_DATA_DICTIONARY, true);
    defaults.setString(FIX::DATA_DICTIONARY, config.data_dictionary);
    defaults.setBool(FIX::RESET_ON_LOGON, false);
    defaults.setBool(FIX::RESET_ON_LOGOUT, false);
    defaults.setBool(FIX::RESET_ON_DISCONNECT, false);
    defaults.setBool(FIX::PERSIST_MESSAGES, true);  // resend requests are answered with the messages
    defaults.setBool(FIX::CHECK_LATENCY, false);    // SendingTime is the client's clock, not ours
    defaults.setInt(FIX::TIMESTAMP_PRECISION, 6);
    if (!config.message_log_dir.empty()) defaults.setString(FIX::FILE_LOG_PATH, config.message_log_dir);
    settings.set(defaults);
    for (std::size_t i = 0; i < config.sessions.size(); ++i) {
      const FIX::SessionID id(kBeginString, config.sessions[i].gateway_comp_id, config.sessions[i].client_comp_id);
      settings.set(id, FIX::Dictionary());
      index.emplace(id, i);
      ids.push_back(id);
    }
    store = std::unique_ptr<FIX::FileStoreFactory>(new FIX::FileStoreFactory(config.store_dir));
    if (!config.message_log_dir.empty()) {
      log = std::unique_ptr<FIX::FileLogFactory>(new FIX::FileLogFactory(config.message_log_dir));
      acceptor = std::unique_ptr<FIX::SocketAcceptor>(new FIX::SocketAcceptor(*this, *store, settings, *log));
    } else {
      acceptor = std::unique_ptr<FIX::SocketAcceptor>(new FIX::SocketAcceptor(*this, *store, settings));
    }
  }

  std::size_t session_of(const FIX::SessionID& id) const {
    const auto it = index.find(id);
    if (it == index.end()) throw FIX::RejectLogon("unknown session");  // the acceptor accepts only configured ones
    return it->second;
  }

  FIX::Session* session(std::size_t i) const { return FIX::Session::lookupSession(ids.at(i)); }

  // ---- FIX::Application ---------------------------------------------------------

  void onCreate(const FIX::SessionID&) override {}
  void onLogon(const FIX::SessionID& id) override { events.on_logon(session_of(id)); }
  void onLogout(const FIX::SessionID& id) override { events.on_logout(session_of(id)); }
  void toAdmin(FIX::Message&, const FIX::SessionID&) override {}
  void toApp(FIX::Message&, const FIX::SessionID&) throw(FIX::DoNotSend) override {}

  void fromAdmin(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                        FIX::IncorrectTagValue,
                                                                        FIX::RejectLogon) override {
    if (m.getHeader().getField(FIX::FIELD::MsgType) != FIX::MsgType_Logon) return;
    const std::string refusal = events.on_logon_request(session_of(id));
    if (!refusal.empty()) {
      ++counters.logons_refused;
      throw FIX::RejectLogon(refusal);
    }
  }

  void fromApp(const FIX::Message& m, const FIX::SessionID& id) throw(FIX::FieldNotFound, FIX::IncorrectDataFormat,
                                                                      FIX::IncorrectTagValue,
                                                                      FIX::UnsupportedMessageType) override {
    const std::string& type = m.getHeader().getField(FIX::FIELD::MsgType);
    FixOrderRequest r;
    if (type == FIX::MsgType_NewOrderSingle) {
      r.kind = FixOrderRequest::Kind::kNew;
    } else if (type == FIX::MsgType_OrderCancelRequest) {
      r.kind = FixOrderRequest::Kind::kCancel;
    } else if (type == FIX::MsgType_OrderCancelReplaceRequest) {
      r.kind = FixOrderRequest::Kind::kReplace;
    } else {
      ++counters.unsupported;
      throw FIX::UnsupportedMessageType();  // QuickFIX answers BusinessMessageReject, reason 3
    }
    r.session = session_of(id);
    r.msg_seq_num = std::stoi(m.getHeader().getField(FIX::FIELD::MsgSeqNum));
    r.poss_dup =
        m.getHeader().isSetField(FIX::FIELD::PossDupFlag) && m.getHeader().getField(FIX::FIELD::PossDupFlag) == "Y";
    r.cl_ord_id = text_of(m, FIX::FIELD::ClOrdID);
    r.orig_cl_ord_id = text_of(m, FIX::FIELD::OrigClOrdID);
    r.symbol = text_of(m, FIX::FIELD::Symbol);
    r.side = first_char(m, FIX::FIELD::Side);
    r.ord_type = first_char(m, FIX::FIELD::OrdType);
    r.time_in_force = first_char(m, FIX::FIELD::TimeInForce);
    r.price = text_of(m, FIX::FIELD::Price);
    r.order_qty = text_of(m, FIX::FIELD::OrderQty);
    ++counters.requests;
    events.on_request(r);
  }

  void send_message(FIX::Message& m, std::size_t s) {
    try {
      if (!FIX::Session::sendToTarget(m, ids.at(s))) ++counters.send_failures;
    } catch (const FIX::SessionNotFound&) {
      ++counters.send_failures;
    }
  }

  FixSessionEvents& events;
  FIX::SessionSettings settings;
  std::map<FIX::SessionID, std::size_t> index;
  std::vector<FIX::SessionID> ids;
  std::unique_ptr<FIX::FileStoreFactory> store;
  std::unique_ptr<FIX::FileLogFactory> log;
  std::unique_ptr<FIX::SocketAcceptor> acceptor;
  FixSessionLayerCounters counters;
  bool stopped = false;
};
#pragma GCC diagnostic pop

FixSessionLayer::FixSessionLayer(const FixSessionLayerConfig& config, FixSessionEvents& events) {
  try {
    impl_ = std::unique_ptr<Impl>(new Impl(config, events));
    impl_->acceptor->poll(0.0);  // the first poll reads the dictionary, opens the stores and listens
  } catch (const FIX::Exception& e) {
    throw std::runtime_error(std::string("QuickFIX: ") + e.what());
  }
}

FixSessionLayer::~FixSessionLayer() { stop(); }

void FixSessionLayer::poll(double timeout_s) {
  try {
    impl_->acceptor->poll(timeout_s);
  } catch (const FIX::Exception& e) {
    throw std::runtime_error(std::string("QuickFIX: ") + e.what());
  }
}

// QuickFIX's own stop() waits for the sessions' Logouts without polling, and
// here nothing else polls: so the Logouts are sent and their answers read
// here (at most 2 s), then the acceptor is stopped without waiting.
void FixSessionLayer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  try {
    for (std::size_t i = 0; i < impl_->ids.size(); ++i) {
      FIX::Session* s = impl_->session(i);
      if (s != nullptr && s->isLoggedOn()) s->logout("the gateway is stopping");
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (impl_->acceptor->isLoggedOn() && std::chrono::steady_clock::now() < deadline) impl_->acceptor->poll(0.01);
    impl_->acceptor->stop(true);
  } catch (const FIX::Exception&) {
    // Stopping: nothing more to do about a session that would not log out.
  }
}

void FixSessionLayer::send(const FixExecutionReport& r) {
  FIX::Message m;
  m.getHeader().setField(FIX::FIELD::MsgType, FIX::MsgType_ExecutionReport);
  set_common(m, r.order_id, r.cl_ord_id, r.orig_cl_ord_id, r.ord_status, r.text);
  m.setField(FIX::FIELD::ExecID, r.exec_id);
  m.setField(FIX::FIELD::ExecType, std::string(1, r.exec_type));
  m.setField(FIX::FIELD::Symbol, r.symbol);
  m.setField(FIX::FIELD::Side, std::string(1, r.side));
  if (r.ord_type != 0) m.setField(FIX::FIELD::OrdType, std::string(1, r.ord_type));
  if (r.time_in_force != 0) m.setField(FIX::FIELD::TimeInForce, std::string(1, r.time_in_force));
  if (r.has_price) m.setField(FIX::FIELD::Price, std::to_string(r.price));
  m.setField(FIX::FIELD::OrderQty, std::to_string(r.order_qty));
  if (r.has_last) {
    m.setField(FIX::FIELD::LastPx, std::to_string(r.last_px));
    m.setField(FIX::FIELD::LastQty, std::to_string(r.last_qty));
  }
  m.setField(FIX::FIELD::CumQty, std::to_string(r.cum_qty));
  m.setField(FIX::FIELD::LeavesQty, std::to_string(r.leaves_qty));
  m.setField(FIX::AvgPx(r.avg_px));
  if (r.ord_rej_reason >= 0) m.setField(FIX::FIELD::OrdRejReason, std::to_string(r.ord_rej_reason));
  m.setField(FIX::TransactTime());  // now, UTC
  ++impl_->counters.execution_reports;
  impl_->send_message(m, r.session);
}

void FixSessionLayer::send(const FixCancelReject& r) {
  FIX::Message m;
  m.getHeader().setField(FIX::FIELD::MsgType, FIX::MsgType_OrderCancelReject);
  set_common(m, r.order_id, r.cl_ord_id, r.orig_cl_ord_id, r.ord_status, r.text);
  m.setField(FIX::FIELD::CxlRejResponseTo, std::string(1, r.response_to));
  m.setField(FIX::FIELD::CxlRejReason, std::to_string(r.cxl_rej_reason));
  ++impl_->counters.cancel_rejects;
  impl_->send_message(m, r.session);
}

bool FixSessionLayer::logged_on(std::size_t session) const {
  FIX::Session* s = impl_->session(session);
  return s != nullptr && s->isLoggedOn();
}

int FixSessionLayer::next_sender_seq(std::size_t session) const {
  FIX::Session* s = impl_->session(session);
  return s == nullptr ? 0 : s->getExpectedSenderNum();
}

int FixSessionLayer::next_target_seq(std::size_t session) const {
  FIX::Session* s = impl_->session(session);
  return s == nullptr ? 0 : s->getExpectedTargetNum();
}

const FixSessionLayerCounters& FixSessionLayer::counters() const { return impl_->counters; }

}  // namespace fix
}  // namespace nanotick
