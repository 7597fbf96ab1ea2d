// The one file that includes QuickFIX (compiled as C++14: see
// fix_messages.hpp). QuickFIX's settings are built here in code from the
// gateway's config: one acceptor session per configured CompID pair, always
// in session (StartTime = EndTime), sequence numbers kept across restarts
// (no reset on logon, logout or disconnect) in a file store per session.
//
// QuickFIX's Log is the one hook it offers on a raw message before its
// session acts on it, and on the connections it drops without telling the
// application: GuardLog counts those, drops a Logon with ResetSeqNumFlag = Y
// (see FixSessionLayerCounters), and keeps Password (554) out of the message
// log.
#include "fix/fix_session_layer.hpp"

#include <quickfix/Application.h>
#include <quickfix/Exceptions.h>
#include <quickfix/FileLog.h>
#include <quickfix/FileStore.h>
#include <quickfix/Log.h>
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

bool is_logon(const std::string& raw) { return raw.find("\00135=A\001") != std::string::npos; }

// The value of `tag` ("49") in a raw message, "" when absent. For counting
// and logging only: a raw scan, not QuickFIX's parse.
std::string raw_field(const std::string& raw, const std::string& tag) {
  const std::string key = "\001" + tag + "=";
  const std::size_t at = raw.find(key);
  if (at == std::string::npos) return std::string();
  const std::size_t begin = at + key.size();
  const std::size_t end = raw.find('\001', begin);
  return raw.substr(begin, (end == std::string::npos ? raw.size() : end) - begin);
}

// Password (554) replaced by "*" wherever it appears, before a message is logged.
std::string redact(std::string raw) {
  std::size_t at = 0;
  while ((at = raw.find("\001554=", at)) != std::string::npos) {
    const std::size_t begin = at + 5;
    const std::size_t end = raw.find('\001', begin);
    raw.replace(begin, (end == std::string::npos ? raw.size() : end) - begin, "*");
    at = begin;
  }
  return raw;
}

const std::string kSessionNotFound = "Session not found for incoming message: ";
const std::string kSeqTooLow = "MsgSeqNum too low";

// One session's log (or the acceptor's, `global`): counts what QuickFIX
// drops, refuses a resetting Logon, and passes the rest, redacted, to the
// message log when there is one (`file`, owned by `file_factory`).
class GuardLog : public FIX::Log {
 public:
  GuardLog(bool global, FIX::Log* file, FixSessionLayerCounters& counters, FixSessionEvents& events,
           const std::vector<FixSessionIds>& sessions)
      : global_(global), file_(file), counters_(counters), events_(events), sessions_(sessions) {}

  FIX::Log* file() const { return file_; }

  void clear() override {
    if (file_ != nullptr) file_->clear();
  }
  void backup() override {
    if (file_ != nullptr) file_->backup();
  }
  void onOutgoing(const std::string& m) override {
    if (file_ != nullptr) file_->onOutgoing(m);
  }

  // A session's raw message, before QuickFIX parses it. A Logon with
  // ResetSeqNumFlag = Y would reset the session's numbers and store before
  // the password is checked (Session::nextLogon resets, then verifies): it
  // is refused here. An exception QuickFIX expects from the parse
  // (InvalidMessage) ends the connection without an answer.
  void onIncoming(const std::string& m) override {
    const bool logon = is_logon(m);
    if (file_ != nullptr) file_->onIncoming(logon ? redact(m) : m);
    if (!global_ && logon && m.find("\001141=Y\001") != std::string::npos) {
      ++counters_.reset_logons_refused;
      events_.on_connection_dropped("Logon from " + raw_field(m, "49") +
                                    " with ResetSeqNumFlag=Y: the gateway keeps sequence numbers (docs/FIX.md)");
      throw FIX::InvalidMessage("Logon with ResetSeqNumFlag=Y refused");
    }
  }

  void onEvent(const std::string& e) override {
    if (global_ && e.compare(0, kSessionNotFound.size(), kSessionNotFound) == 0) {
      const std::string raw = e.substr(kSessionNotFound.size());
      const std::string client = raw_field(raw, "49"), gateway = raw_field(raw, "56");
      bool configured = false;
      for (const FixSessionIds& s : sessions_)
        configured = configured || (s.client_comp_id == client && s.gateway_comp_id == gateway);
      if (configured) {
        ++counters_.session_already_connected;
        events_.on_connection_dropped("a second connection for " + client + " -> " + gateway +
                                      ", which another connection has");
      } else {
        ++counters_.unknown_comp_ids;
        events_.on_connection_dropped("no session " + client + " -> " + gateway);
      }
      if (file_ != nullptr) file_->onEvent(kSessionNotFound + redact(raw));
      return;
    }
    if (!global_ && e.compare(0, kSeqTooLow.size(), kSeqTooLow) == 0) ++counters_.seq_too_low;
    if (file_ != nullptr) file_->onEvent(e);
  }

 private:
  bool global_;
  FIX::Log* file_;
  FixSessionLayerCounters& counters_;
  FixSessionEvents& events_;
  const std::vector<FixSessionIds>& sessions_;
};

class GuardLogFactory : public FIX::LogFactory {
 public:
  GuardLogFactory(FIX::LogFactory* file_factory, FixSessionLayerCounters& counters, FixSessionEvents& events,
                  const std::vector<FixSessionIds>& sessions)
      : file_factory_(file_factory), counters_(counters), events_(events), sessions_(sessions) {}

  FIX::Log* create() override {
    return new GuardLog(true, file_factory_ != nullptr ? file_factory_->create() : nullptr, counters_, events_,
                        sessions_);
  }
  FIX::Log* create(const FIX::SessionID& id) override {
    return new GuardLog(false, file_factory_ != nullptr ? file_factory_->create(id) : nullptr, counters_, events_,
                        sessions_);
  }
  void destroy(FIX::Log* log) override {
    GuardLog* g = static_cast<GuardLog*>(log);
    if (g->file() != nullptr) file_factory_->destroy(g->file());
    delete g;
  }

 private:
  FIX::LogFactory* file_factory_;
  FixSessionLayerCounters& counters_;
  FixSessionEvents& events_;
  const std::vector<FixSessionIds>& sessions_;
};

}  // namespace

// QuickFIX's Application declares its callbacks with dynamic exception
// specifications; an override must repeat them, which C++11 deprecates.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated"
struct FixSessionLayer::Impl : public FIX::Application {
  Impl(const FixSessionLayerConfig& config, FixSessionEvents& e) : events(e), configured(config.sessions) {
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
    if (!config.message_log_dir.empty())
      file_log = std::unique_ptr<FIX::FileLogFactory>(new FIX::FileLogFactory(config.message_log_dir));
    guard_log = std::unique_ptr<GuardLogFactory>(new GuardLogFactory(file_log.get(), counters, events, configured));
    acceptor = std::unique_ptr<FIX::SocketAcceptor>(new FIX::SocketAcceptor(*this, *store, settings, *guard_log));
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
    FixLogonRequest logon;
    logon.session = session_of(id);
    logon.has_password = m.isSetField(FIX::FIELD::Password);
    if (logon.has_password) logon.password = m.getField(FIX::FIELD::Password);
    const std::string refusal = events.on_logon_request(logon);
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
  FixSessionLayerCounters counters;  // before guard_log, which counts into it
  std::vector<FixSessionIds> configured;
  FIX::SessionSettings settings;
  std::map<FIX::SessionID, std::size_t> index;
  std::vector<FIX::SessionID> ids;
  std::unique_ptr<FIX::FileStoreFactory> store;
  std::unique_ptr<FIX::FileLogFactory> file_log;  // the message log, when there is one
  std::unique_ptr<GuardLogFactory> guard_log;     // outlives the acceptor, which destroys its logs through it
  std::unique_ptr<FIX::SocketAcceptor> acceptor;
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
