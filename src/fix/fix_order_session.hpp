// One FIX session's orders, end to end (docs/FIX.md "Messages", "Restarts"):
// a FixOrderRequest from the session layer becomes a venue order message on
// this session's own nanotick order-entry session (trading::OrderEntryClient,
// whose Handler this class is), and each venue answer becomes the FIX answer:
// ExecutionReport New / Trade / Canceled / Replaced / Rejected, or
// OrderCancelReject. Requests the venue would not understand (an unknown
// symbol, a price that is not a whole number of the instrument's unit, an
// OrdType or TimeInForce it has no type for, a ClOrdID used before) are
// answered here without reaching the venue.
//
// Every change to an order is written to the session's FixOrderMap before
// the answer reporting it is handed to the session layer, so a restarted
// gateway knows every order it acknowledged. The venue cancels a FIX
// client's open orders when the gateway's venue session ends (the gateway
// requires cancel_on_disconnect = true), so when it ends -- the gateway
// stopped or died, the exchange restarted, the connection broke -- each order
// still open is reported Canceled, at the end of the session or at the
// gateway's next start.
//
// Missed fills (docs/FIX.md "Restarts"): every venue logon first asks the
// venue for this client's fills since a given exec_seq (ReportsRequest,
// docs/PROTOCOL.md §1.8), and the session counts as up (FIX logons and orders
// taken) only once the venue's ReportsReplayed has come. At the gateway's
// start the request reaches back to the oldest order the last run left open,
// so that every fill of those orders is replayed; fills beyond the CumQty the
// last run reported are the ones it never read, reported before the orders'
// Canceled. At a reconnect while running, every replayed fill after the last
// report this run read is one it missed.
//
// Not thread-safe: the gateway's polling thread calls everything.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "client/order_entry_client.hpp"
#include "core/histogram.hpp"
#include "core/tsc_clock.hpp"
#include "fix/fix_gateway_config.hpp"
#include "fix/fix_messages.hpp"
#include "fix/fix_order_map.hpp"
#include "fix/fix_session_layer.hpp"
#include "proto/order_entry.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::fix {

// ExecType (150) values the gateway sends.
namespace exec_type {
inline constexpr char kNew = '0';
inline constexpr char kCanceled = '4';
inline constexpr char kReplaced = '5';
inline constexpr char kRejected = '8';
inline constexpr char kTrade = 'F';
}  // namespace exec_type

struct FixOrderSessionCounters {
  std::uint64_t new_orders = 0;       // NewOrderSingle sent to the venue
  std::uint64_t cancels = 0;          // OrderCancelRequest sent
  std::uint64_t replaces = 0;         // OrderCancelReplaceRequest sent
  std::uint64_t refused_here = 0;     // answered by the gateway without reaching the venue
  std::uint64_t poss_dup_ignored = 0; // a resent request (PossDupFlag) the gateway had already handled
  std::uint64_t venue_reports = 0;    // venue ExecutionReports turned into FIX ones
  std::uint64_t cancelled_on_session_end = 0;  // open orders reported Canceled when the venue session ended
  std::uint64_t unknown_reports = 0;  // venue answers naming no order of this session (logged)
  std::uint64_t fills_replayed = 0;   // fills the venue replayed at a logon that the gateway had never reported
  std::uint64_t replayed_known = 0;   // replayed fills it had reported already (or of no order of its own)
};

class FixOrderSession {
 public:
  using Client = client::OrderEntryClient<FixOrderSession>;
  using LogFn = std::function<void(const std::string&)>;

  FixOrderSession(std::size_t index, const FixSessionConfig& session, const venue::VenueConfig& venue,
                  client::OrderEntryClientConfig client, const std::string& order_map_path, LogFn log);

  // Once the session layer exists: answers go through it from now on. The
  // replay that came before it (at start, the venue sessions log on before
  // QuickFIX listens) is acted on now, in the order it came: its missed fills
  // and the Canceled of the orders the last run left open are recorded in the
  // order map only when they can be handed to QuickFIX's store, so that a
  // start that fails after the logons (QuickFIX could not start) leaves them
  // to the next start.
  void attach(FixSessionLayer& layer);

  int poll() noexcept { return client_.poll(); }
  void on_request(const FixOrderRequest& request);
  // Logged on to the venue and its missed fills replayed: orders may go.
  bool venue_up() const noexcept { return client_.logged_on() && !client_.replaying(); }
  // "" when a FIX logon may proceed; else why not (the venue session is down).
  std::string logon_refusal() const;
  void logout() noexcept { client_.logout(); }
  // Requests sent to the venue and not answered yet: the gateway does not
  // wait in QuickFIX's poll while there are any.
  bool awaiting_answers() const noexcept { return !pending_.empty(); }
  const Client& client() const noexcept { return client_; }
  const FixOrderSessionCounters& counters() const noexcept { return counters_; }
  // The gateway's own time, in ns (docs/FIX.md "What the gateway adds"):
  // inbound, from QuickFIX handing over a request to its venue message
  // written; outbound, from a venue report read to its FIX answer handed to
  // QuickFIX (which writes it to the socket before returning when it can).
  const core::LatencyHistogram& inbound_ns() const noexcept { return inbound_ns_; }
  const core::LatencyHistogram& outbound_ns() const noexcept { return outbound_ns_; }
  const FixOrderMap& orders() const noexcept { return orders_; }

  // ---- trading::OrderEntryHandler (the venue session's callbacks) -----------
  void on_logon(const proto::LogonAck& ack);
  void on_execution_report(const proto::ExecutionReport& report);
  void on_cancel_reject(const proto::OrderReject& reject) { on_order_reject(reject, '1'); }
  void on_modify_reject(const proto::OrderReject& reject) { on_order_reject(reject, '2'); }
  void on_session_reject(const proto::SessionReject& reject);
  void on_reports_replayed(const proto::ReportsReplayed& m);
  void on_disconnected(const client::Disconnect& d);
  void on_order_written(std::uint32_t, std::uint64_t) noexcept {}

 private:
  // A request sent to the venue and not answered yet, by its venue seq.
  struct Pending {
    FixOrderRequest::Kind kind = FixOrderRequest::Kind::kNew;
    std::uint64_t number = 0;    // the order
    std::string cl_ord_id;       // the request's
    std::string orig_cl_ord_id;  // the name it gave the order by (F, G)
  };

  void handle_report(const proto::ExecutionReport& m);
  void new_order(const FixOrderRequest& r);
  void cancel_or_replace(const FixOrderRequest& r);
  void on_order_reject(const proto::OrderReject& reject, char response_to);
  void end_of_venue_session(const std::string& why);
  void on_replayed_fill(const proto::ExecutionReport& m);

  FixExecutionReport report_of(const FixOrder& o, char exec_type) const;
  void send(const FixExecutionReport& r);
  void send(const FixCancelReject& r);
  void refuse_new(const FixOrderRequest& r, int reason, const std::string& text);
  void refuse_cancel(const FixOrderRequest& r, const FixOrder* o, int reason, const std::string& text);
  void refuse_cancel(const Pending& p, char response_to, int reason, const std::string& text);
  void send_cancel_reject(const FixOrder* o, const std::string& cl_ord_id, const std::string& orig_cl_ord_id,
                          char response_to, int reason, const std::string& text);
  std::optional<market::InstrumentId> instrument(const std::string& symbol) const;
  std::string order_id_text(const FixOrder& o) const;

  std::size_t index_;
  std::string name_;  // "CLIENT1->NANOTICK", for logs
  const venue::VenueConfig& venue_;
  FixOrderMap orders_;
  Client client_;
  LogFn log_;
  FixSessionLayer* layer_ = nullptr;
  std::unordered_map<std::uint32_t, Pending> pending_;  // by the venue seq of the request
  std::unordered_map<std::uint64_t, std::uint32_t> replace_in_flight_;  // order number -> seq of its F or G
  std::unordered_map<std::string, market::InstrumentId> symbols_;
  FixOrderSessionCounters counters_;
  // The orders the last run left open, by number, with the quantity of their
  // fills replayed so far; emptied once the first logon's replay is complete.
  std::unordered_map<std::uint64_t, std::int64_t> recovering_;
  bool first_replay_done_ = false;
  // The replay as it came before attach(): replayed fills and ReportsReplayed.
  std::vector<std::variant<proto::ExecutionReport, proto::ReportsReplayed>> before_attach_;
  std::uint64_t last_exec_seq_ = 0;  // the highest venue exec_seq seen (FixOrder::after_exec_seq)
  const core::TscClock& clock_ = core::TscClock::global();
  core::LatencyHistogram inbound_ns_;
  core::LatencyHistogram outbound_ns_;
};

}  // namespace nanotick::fix
