// The gateway's FIX side (docs/FIX.md "Shape"): QuickFIX's socket acceptor
// with a file store per session and validation against the FIX 4.4 data
// dictionary. QuickFIX runs the session protocol -- logon, heartbeats and
// test requests, sequence numbers, resend requests answered from the store,
// gap fills, sequence resets, Reject (3) for a message that breaks the
// dictionary, BusinessMessageReject (j) for an application message the
// gateway does not handle -- and hands this class the order messages, which
// it decodes into FixOrderRequest for the gateway's order mapping.
//
// Answers (FixExecutionReport, FixCancelReject) are encoded here and given to
// QuickFIX, which numbers them and writes them to the session's store before
// the socket. A session that is not logged on still takes them: the store
// keeps them, and the client's resend request after its next logon gets them
// (nothing the gateway answered is lost to a disconnect).
//
// C++14 (see fix_messages.hpp): this header and its .cpp include no C++20.
// Threads: single-threaded. poll() runs QuickFIX's event loop on the calling
// thread (no thread of QuickFIX's own), and the FixSessionEvents callbacks
// run inside it; send() is called on that same thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fix/fix_messages.hpp"

namespace nanotick {
namespace fix {

struct FixSessionIds {
  std::string client_comp_id;   // the client's SenderCompID
  std::string gateway_comp_id;  // what the client sends as TargetCompID
};

struct FixSessionLayerConfig {
  int port = 0;                 // QuickFIX 1.15 binds INADDR_ANY:port; fix_listen_socket narrows it
  std::string store_dir;        // one file store per session (sequence numbers, sent messages)
  std::string data_dictionary;  // FIX44.xml
  std::string message_log_dir;  // every message in and out, as files ("" = no message log)
  std::vector<FixSessionIds> sessions;
};

// What the session layer tells the gateway, on the polling thread.
class FixSessionEvents {
 public:
  virtual ~FixSessionEvents() = default;
  // A valid Logon for a configured session, its MsgSeqNum checked (a replayed
  // one is refused before this, by QuickFIX: "MsgSeqNum too low"): "" accepts
  // it, any other text refuses it (the client gets a Logout carrying that text).
  virtual std::string on_logon_request(const FixLogonRequest& logon) = 0;
  // A connection dropped without an answer (an unknown CompID pair, a session
  // already connected, a Logon with ResetSeqNumFlag = Y): why, for the log.
  virtual void on_connection_dropped(const std::string& why) = 0;
  virtual void on_logon(std::size_t session) = 0;
  virtual void on_logout(std::size_t session) = 0;
  virtual void on_request(const FixOrderRequest& request) = 0;
};

struct FixSessionLayerCounters {
  std::uint64_t requests = 0;           // D, F, G handed to the gateway
  std::uint64_t unsupported = 0;        // other application messages: BusinessMessageReject
  std::uint64_t logons_refused = 0;     // on_logon_request said no (a Logout with its reason)
  // Connections dropped at their first message, without an answer: no
  // configured session has its CompIDs (QuickFIX: "Session not found").
  std::uint64_t unknown_comp_ids = 0;
  // ... or the session is configured but another connection has it.
  std::uint64_t session_already_connected = 0;
  // Logons with ResetSeqNumFlag (141) = Y, dropped without an answer:
  // QuickFIX would reset the session's numbers and store before the
  // password is checked (docs/FIX.md "Sessions and credentials").
  std::uint64_t reset_logons_refused = 0;
  // Logouts for "MsgSeqNum too low" (a replayed Logon is refused this way).
  std::uint64_t seq_too_low = 0;
  std::uint64_t execution_reports = 0;  // sent (or stored for a session not logged on)
  std::uint64_t cancel_rejects = 0;
  std::uint64_t send_failures = 0;      // QuickFIX could not store or send one (logged)
};

class FixSessionLayer {
 public:
  // Reads the data dictionary, opens the stores and listens. Throws
  // std::runtime_error with QuickFIX's reason (a dictionary that does not
  // load, a store that cannot be opened, a port in use).
  FixSessionLayer(const FixSessionLayerConfig& config, FixSessionEvents& events);
  ~FixSessionLayer();
  FixSessionLayer(const FixSessionLayer&) = delete;
  FixSessionLayer& operator=(const FixSessionLayer&) = delete;

  // Runs QuickFIX's socket events, waiting at most timeout_s for one.
  void poll(double timeout_s);
  // Logs every session out and closes the acceptor.
  void stop();

  void send(const FixExecutionReport& report);
  void send(const FixCancelReject& reject);

  bool logged_on(std::size_t session) const;
  // The next sequence numbers of a session (its store's): sent by us, expected from the client.
  int next_sender_seq(std::size_t session) const;
  int next_target_seq(std::size_t session) const;
  const FixSessionLayerCounters& counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fix
}  // namespace nanotick
