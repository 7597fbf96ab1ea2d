// The exchange's order-entry gateway (docs/EXCHANGE.md "Pipeline",
// PROTOCOL.md §1): accepts TCP and shared-memory sessions (one protocol code
// for both: each session's bytes move through an ipc::StreamLink), frames and checks their messages,
// runs logon, sequence numbers, heartbeats and the rate limit, turns order
// messages into engine requests pushed into the sequencer's ring, and turns
// the engine's reports back into messages for the session of their client.
// Also keeps each client's resting orders (from the reports) so that
// cancel-on-disconnect can cancel them.
//
// An agent: do_work() polls (epoll, timeout 0), reads at most
// read_budget_bytes per session per pass, processes, runs the timers and
// flushes every session's output once. Nothing allocates after construction.
// Not thread-safe: one thread calls everything (on_report included: directly
// from the engine in compact mode, from the report ring in dedicated mode).
//
// Telemetry (docs/TELEMETRY.md), when a recorder is bound to its thread:
// ex_tcp_read for each order message framed from a logged-on session (at the
// TSC the request carries on), and ex_tcp_write for each answer (execution
// report, cancel / modify reject) once its last byte was written to the
// socket, keyed by its recipient's (client_id << 32) | ref_seq with the
// request that caused it as aux. Answers wait for their write in each
// session's written stamps (proto/written_stamps.hpp), with room for
// answer_stamp_slots when the gateway is built to stamp them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/agent.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/histogram.hpp"
#include "core/histogram_counters.hpp"
#include "core/int_hash_map.hpp"
#include "core/tsc_clock.hpp"
#include "engine/events.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/ledger/report_replay.hpp"
#include "exchange/pipeline.hpp"
#include "exchange/sessions/ack_latency.hpp"
#include "exchange/sessions/session.hpp"
#include "ipc/shm_listener.hpp"
#include "net/epoll.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"

namespace nanotick::exchange {

struct GatewayCounters {
  core::Counter connections_accepted;
  core::Counter connections_refused;  // no slot at all (beyond max_sessions + overflow, or shm_slots)
  core::Counter shm_connections_accepted;  // shared-memory sessions set up (segment sent)
  core::Counter shm_connections_refused;   // no shared-memory slot free (or shutting down)
  core::Counter shm_setup_failures;        // a segment could not be made or sent
  core::Counter shm_broken_rings;          // a client published impossible ring positions: closed
  core::Counter shm_peer_gone;             // a client's process ended (its control socket closed)
  core::Counter sessions_logged_on;
  core::Counter sessions_closed;
  core::Counter sessions_live;
  core::Counter connections_open;
  core::Counter messages_in;
  core::Counter messages_out;
  core::Counter bytes_in;
  core::Counter bytes_out;
  core::Counter requests_forwarded;
  core::Counter reports_dropped;  // the client has no live session
  core::Counter answers_dropped;  // queued for a slow consumer, never written (its session closed)
  core::Counter disconnect_cancels;          // orders the engine cancelled for a session that ended
  core::Counter disconnect_mass_cancels;  // mass-cancel requests queued (one per session end that may have left orders)
  core::Counter disconnect_cancels_dropped;  // no room left to queue one (never with the reserved capacity)
  core::Counter pending_cancels;  // queued, not yet in the sequencer's ring
  core::Counter admin_requests;  // admin requests sequenced (docs/CONTROLS.md "Admin")
  core::Counter admin_refused;  // refused before sequencing: not an admin, unknown action or target client
  // The same by reason (kAdminRefusals' order): the engine never saw them, so
  // they are not among engine_rejects.
  static constexpr std::array<engine::RejectReason, 3> kAdminRefusals{engine::RejectReason::kInvalidRequestType,
                                                                      engine::RejectReason::kUnknownTargetClient,
                                                                      engine::RejectReason::kNotAdmin};
  std::array<core::Counter, kAdminRefusals.size()> admin_refusals;
  core::Counter admin_cancels;  // orders an admin's cancel-all cancelled
  core::Counter replay_requests;  // ReportsRequests taken (docs/PROTOCOL.md §1.8)
  core::Counter replay_answers_dropped;  // replayed reports whose connection had ended
  core::Counter answers_unstamped;  // telemetry: answers sent without ex_tcp_write (a session's stamp ring was full)
  std::array<core::Counter, proto::kSessionRejectReasons> session_rejects;  // by SessionRejectReason (index = code)
  std::array<core::Counter, proto::kLogonRejectReasons> logon_rejects;  // by LogonRejectReason (0 unused)
  std::array<core::Counter, proto::kLogoutReasons> logouts;  // by LogoutReason we sent
  // Engine rejects (new order, cancel, modify) by RejectReason code (< 500:
  // the engine's 1xx-3xx and the venue controls' 4xx).
  static constexpr std::size_t kRejectCodes = 500;
  std::array<core::Counter, kRejectCodes> engine_rejects;
};

// Each configured client's fills as the engine reported them, whether or not
// its session was live to receive them: what a client's own position and
// cash must agree with. Notionals are price x qty summed as int64 (stored in
// the counters' two's complement).
struct ClientFillTotals {
  core::Counter fills;
  core::Counter bought_qty;
  core::Counter sold_qty;
  core::Counter bought_notional;
  core::Counter sold_notional;
};

class OrderGateway {
 public:
  // Binds the order-entry address (throws net::SocketError if it cannot).
  // `answer_stamp_slots`: answers per session that may wait for their write
  // with an ex_tcp_write stamp pending (0: answers are not stamped).
  OrderGateway(const ExchangeConfig& config, RequestRing& requests, std::uint64_t session_id_base,
               std::size_t answer_stamp_slots = 0);
  ~OrderGateway();
  OrderGateway(const OrderGateway&) = delete;
  OrderGateway& operator=(const OrderGateway&) = delete;

  std::string_view role_name() const noexcept { return "gateway"; }
  int do_work() noexcept;
  // What a blocking idle strategy sleeps on (core/agent.hpp): the epoll set
  // do_work() polls -- the listeners and every session's socket (shared
  // memory: its control socket, on which a client also rings the doorbell).
  // Being asked means the thread sleeps in the kernel: from now on each
  // shared-memory session's doorbell is on (ipc/shm_stream.hpp), armed by a
  // pass that found no work, disarmed by the next pass.
  void wait_fds(core::WaitFds& out) {
    out.add(poller_.fd());
    doorbells_ = true;
  }
  // Writes every session's pending output (do_work() ends with it too);
  // returns the number of sessions that wrote some. Lets the layouts send the
  // engine's answers in the pass that produced them (AnswerFlusher).
  int flush_answers() noexcept;
  // One engine report: routed to its client's live session, if any.
  // `received_tsc`: its request's receive TSC if it is that request's first
  // report to its sender, else 0 (pipeline.hpp FirstAnswerTsc): where the
  // ack latency of the message it answers starts.
  void on_report(const engine::ExecReport& report, std::uint64_t received_tsc) noexcept;

  // From any thread: the next do_work() stops accepting and sends
  // Logout(ServerShutdown) to every session, closing each once flushed.
  // Done when open_connections() reaches 0.
  void request_shutdown() noexcept { shutdown_requested_.store(true, std::memory_order_release); }
  // Any thread.
  std::size_t open_connections() const noexcept { return static_cast<std::size_t>(counters_.connections_open.get()); }
  std::size_t pending_cancels() const noexcept { return static_cast<std::size_t>(counters_.pending_cancels.get()); }

  // Queues a mass cancel of every order of `client` on every instrument: a
  // request the engine executes in sequence, journaled like any other. At
  // start-up, for the cancel-on-disconnect clients the recovered engine has
  // orders of (after a restart none of them has a session); at run time the
  // gateway calls it itself when such a client's session ends.
  void queue_mass_cancel(std::uint32_t client) noexcept;

  // Start-up, before the gateway's thread runs: ReportsRequests go to a
  // ReportReplayer through `requests`, its answers come back through
  // `answers` (ledger/report_replay.hpp). Without it a ReportsRequest is
  // answered at once with ReportsReplayed{count 0}.
  void enable_report_replay(ReplayRequestRing& requests, ReplayAnswerRing& answers) noexcept {
    replay_requests_ = &requests;
    replay_answers_ = &answers;
  }

  const net::SocketAddress& listen_address() const noexcept { return listener_.local_address(); }
  const GatewayCounters& counters() const noexcept { return counters_; }
  // Start-up, before the gateway's thread runs: every counter above, each
  // client's fill totals and the ack latency summaries move into `file`
  // under the names the exchange has always reported them by.
  void place_counters(core::CountersFile& file);
  // The ack latency summaries as of now (the gateway's thread does this once
  // a second; the exchange once more after that thread stopped).
  void publish_latency_summaries() noexcept;
  // Fill totals of a configured client (nullptr for another id).
  const ClientFillTotals* client_fills(std::uint32_t client_id) const noexcept {
    return client_id < client_index_.size() && client_index_[client_id] >= 0
               ? &client_fills_[static_cast<std::size_t>(client_index_[client_id])]
               : nullptr;
  }
  // TCP read of an order message -> its first answer written to the socket,
  // ns. Written by the gateway's thread: read it after that thread stopped.
  const core::LatencyHistogram& ack_latency() const noexcept { return ack_.written; }
  // TCP read of an order message -> its first answer handed to send(), ns:
  // the exchange's processing alone, without the kernel's share of the write
  // (on loopback a send() of one answer takes ~4.8 us by itself). Same thread rule.
  const core::LatencyHistogram& ack_ready_latency() const noexcept { return ack_.ready; }

 private:
  static constexpr std::size_t kOverflowSlots = 4;  // room to tell a logon "max sessions"
  static constexpr std::uint64_t kListenerToken = ~std::uint64_t{0};
  static constexpr std::uint64_t kShmListenerToken = ~std::uint64_t{0} - 1;
  static constexpr std::uint64_t kUnstampedAnswer = ~std::uint64_t{0};  // a written-stamp entry's aux: no ex_tcp_write

  void accept_all(std::uint64_t now) noexcept;
  void accept_shm(std::uint64_t now) noexcept;
  // Before a sleep: arms every shared-memory session's doorbell; the number
  // of sessions whose input came meanwhile (> 0: do not sleep).
  int arm_doorbells() noexcept;
  void disarm_doorbells() noexcept;
  Session* free_slot() noexcept;
  // A slot whose link was just attached starts a connection (awaiting logon).
  void open_session(Session& s, std::uint64_t now) noexcept;
  void read_session(Session& s, std::uint64_t now) noexcept;
  void process_input(Session& s, std::uint64_t now) noexcept;
  // Handles one framed message; false = stop processing this session's input now.
  bool handle_message(Session& s, const proto::Header& h, const std::uint8_t* bytes, std::uint64_t now) noexcept;
  void handle_logon(Session& s, const proto::Logon& m, std::uint64_t now) noexcept;
  // An AdminRequest (its seq accepted): refused with an AdminResponse, or sequenced.
  bool handle_admin(Session& s, const proto::Header& h, const proto::AdminRequest& m, std::uint64_t tsc,
                    std::uint64_t now) noexcept;
  // A ReportsRequest (its seq not yet accepted; `first`: the first message
  // after the LogonAck). False: no room to pass it on, retried next pass.
  bool handle_reports_request(Session& s, const proto::Header& h, const proto::ReportsRequest& m, bool first,
                              std::uint64_t now) noexcept;
  // The replayer's answers sent on (order_gateway_replay.cpp); work done.
  int send_replayed(std::uint64_t now) noexcept;
  void forward(Session& s, const engine::Request& rq, std::uint64_t tsc) noexcept;
  void push_pending_cancels() noexcept;
  void begin_shutdown() noexcept;
  void run_timers(std::uint64_t now) noexcept;
  void flush(Session& s) noexcept;
  void drop_unwritten_output(Session& s) noexcept;

  // Queues `m`; false when it was not (session closing or gone, or a slow consumer dropped).
  template <typename M>
  bool send(Session& s, M m, std::uint64_t now) noexcept;
  // An answer to a client (report or reject): sent; once written, its ack
  // latency recorded (received_tsc != 0: the order's first answer) and
  // stamped when telemetry records.
  template <typename M>
  void send_answer(Session& s, const M& m, std::uint64_t cause_event_id, std::uint64_t received_tsc,
                   std::uint64_t now) noexcept;
  // The answers written in full so far, at `tsc`.
  void take_written_answers(Session& s, std::uint64_t tsc) noexcept;
  void session_reject(Session& s, const proto::Header& h, proto::SessionRejectReason reason,
                      std::uint64_t now) noexcept;
  // Sends Logout(reason) and starts closing (flush, shut the write side, wait for EOF).
  void logout_and_close(Session& s, proto::LogoutReason reason, std::uint64_t now) noexcept;
  void start_closing(Session& s, std::uint64_t now) noexcept;
  // The session leaves the logged-on set (cancel-on-disconnect runs here).
  void log_off(Session& s) noexcept;
  void release(Session& s) noexcept;
  void count_mass_cancelled(const engine::ExecReport& r) noexcept;
  std::size_t bytes_to_write(Session& s, std::span<const std::uint8_t> bytes) noexcept;
  void update_write_interest(Session& s) noexcept;

  const ExchangeConfig& config_;
  RequestRing& requests_;
  const bool stamp_answers_;  // telemetry: answers wait for their write to be stamped ex_tcp_write
  const core::TscClock& clock_;
  std::uint64_t session_id_base_;
  net::TcpListener listener_;
  std::unique_ptr<ipc::ShmListener> shm_listener_;
  ReplayRequestRing* replay_requests_ = nullptr;  // enable_report_replay()
  ReplayAnswerRing* replay_answers_ = nullptr;  // null: no shared-memory sessions offered
  net::EpollPoller poller_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::int32_t> session_of_client_;  // client id -> logged-on session index, -1 none
  std::vector<std::int32_t> client_index_;  // client id -> position in the config's clients, -1 none
  std::unique_ptr<ClientFillTotals[]> client_fills_;
  std::size_t logged_on_ = 0;
  std::size_t open_connections_ = 0;
  std::size_t open_shm_ = 0;  // of which shared memory (at most shm_slots)
  std::atomic<bool> shutdown_requested_{false};
  std::uint64_t last_timer_ns_ = 0;
  std::uint64_t last_epoll_ns_ = 0;  // the poller's last wait (throttled while only shm sessions are open)
  bool accepting_ = true;
  bool doorbells_ = false;  // the thread sleeps in the kernel (wait_fds() was asked)
  bool doorbells_armed_ = false;  // the last pass armed the shared-memory sessions' doorbells
  std::uint64_t next_session_serial_ = 0;
  std::uint16_t connection_serial_ = 0;  // gateway-wide: event ids tell connections apart across slots
  // Per configured client (client_index_): 1 once it has sent a limit order
  // since its last mass cancel was queued. Not a copy of the engine's orders
  // (the engine alone knows which rest where): it only spares the journal a
  // mass cancel when a session that never sent an order that could rest ends.
  // Reports do not clear it -- a report of an order from before a reconnect
  // cannot be told from one of the new session's, so counting orders down
  // could reach 0 while one rests. Recovered orders are cancelled at start-up.
  std::vector<std::uint8_t> may_have_orders_;
  // Mass cancels queued at a session's end, pushed into the request ring as it
  // has room (the ring's consumer may run on this same thread: never wait for it).
  std::vector<engine::Request> pending_cancels_;  // capacity reserved: never grows
  std::size_t pending_cancel_head_ = 0;
  GatewayCounters counters_;
  AckLatency ack_;
  std::uint64_t last_summary_ns_ = 0;
};

}  // namespace nanotick::exchange
