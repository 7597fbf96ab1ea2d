// The trading client's order-entry session (docs/TRADER.md "OrderEntryClient",
// PROTOCOL.md §1): connects to the exchange over TCP or shared memory
// (config.transport; the session logic is the same for both), logs on with the client id and
// API key, numbers every outgoing message, checks the exchange's numbers (a
// gap or a repeat is a protocol error: log out and reconnect), sends a
// Heartbeat when it has sent nothing for the interval in force, treats 3
// intervals of silence as a dead session, reconnects with exponential
// back-off (reconnect_initial_ms doubling up to reconnect_max_ms, reset by a
// successful logon) and stops for good on a logon reject that retrying cannot
// cure (BadCredentials, UnknownClient, BadHeartbeat: our configuration is
// wrong). Every exchange message is decoded into a typed callback on the
// Handler, a template parameter (static dispatch; see OrderEntryHandler).
//
// Non-blocking: poll() (also do_work(): the client is an agent) reads what
// the socket has, runs the timers and flushes; send_* queue a message in a
// fixed output buffer and write it at once, keeping the unwritten tail of a
// partial write for the next flush. The TSC is taken when each order message
// has been written completely and handed to Handler::on_order_written(seq,
// tsc) on the next poll() (tick-to-trade). The one blocking call is the
// connect itself (net::tcp_connect or ipc::shm_connect, bounded by
// connect_timeout_ms; refused or accepted at once on loopback and LAN).
//
// Allocation: buffers are allocated in the constructor. The message path
// (poll, send_*) never allocates; a reconnect may (tcp_connect builds its
// error text), which is not the hot path.
//
// Telemetry (docs/TELEMETRY.md), when a recorder is bound to the calling
// thread: tr_tcp_write for each order message at the TSC taken after its last
// byte was written (the one on_order_written gets), tr_response_read for each
// ExecutionReport, CancelReject and ModifyReject as it is read, both keyed
// (client_id << 32) | seq (ref_seq for the answers).
//
// Not thread-safe: one thread calls everything, and the Handler's callbacks
// run on it, inside poll(). A callback may call send_* and logout(); the
// client defers closing the socket until the callback returns. counters()
// may be read from any thread.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "client/order_entry_client_types.hpp"
#include "client/reconnect_backoff.hpp"
#include "client/report_replay.hpp"
#include "core/agent.hpp"
#include "core/byte_buffer.hpp"
#include "core/counters_file.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "ipc/stream_link.hpp"
#include "market/reject_reason.hpp"
#include "market/types.hpp"
#include "net/epoll.hpp"
#include "net/socket_error.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"
#include "proto/order_entry_codec.hpp"
#include "proto/output_stream.hpp"
#include "proto/session_liveness.hpp"
#include "proto/session_sequence.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::client {

template <typename Handler>
class OrderEntryClient {
 public:
  // Validates `config` (throws std::invalid_argument) and allocates the
  // buffers. The first connect attempt is made by the first poll().
  OrderEntryClient(OrderEntryClientConfig config, Handler& handler,
                   const core::TscClock& clock = core::TscClock::global())
      : config_((validate(config), std::move(config))),
        handler_(handler),
        clock_(clock),
        backoff_(config_.reconnect_initial_ms, config_.reconnect_max_ms),
        in_(config_.input_buffer_bytes),
        // Room to stamp every order message the output can hold (the smallest is a cancel).
        out_(config_.output_buffer_bytes, config_.output_buffer_bytes / sizeof(proto::CancelOrder) + 1),
        order_key_base_(std::uint64_t{config_.client_id} << 32) {}

  OrderEntryClient(const OrderEntryClient&) = delete;
  OrderEntryClient& operator=(const OrderEntryClient&) = delete;

  std::string_view role_name() const noexcept { return "order-gateway"; }
  int do_work() noexcept { return poll(); }
  // What a blocking idle strategy sleeps on (core/agent.hpp): an epoll set
  // holding the connection's socket while there is one (TCP: its input;
  // shared memory: its control socket, whose hang-up says the exchange's
  // process ended, and on which the exchange rings the doorbell). Reconnect
  // timers run on the idle's timeout. Being asked means the thread sleeps in
  // the kernel: from now on a shared-memory session's doorbell is on
  // (ipc/shm_stream.hpp), armed by a poll() that found no work, disarmed by
  // the next poll().
  void wait_fds(core::WaitFds& out) {
    out.add(wait_set_.fd());
    doorbell_ = true;
    if (link_.is_shm() && link_.valid()) link_.shm().enable_doorbell();
  }

  // One pass: connect when due; read and dispatch what arrived; timers
  // (logon timeout, heartbeat, silence); flush; on_order_written for the
  // order messages written since the last pass; close a broken session.
  // Returns the work done (0 = nothing happened).
  int poll() noexcept {
    static_assert(OrderEntryHandler<Handler>,
                  "OrderEntryClient<Handler>: Handler lacks a callback (see OrderEntryHandler)");
    now_ns_ = clock_.now_ns();
    if (doorbell_) link_.shm().disarm_doorbell();  // a no-op unless the last poll() armed it
    if (state_ == SessionState::kStopped) return 0;
    if (state_ == SessionState::kDisconnected) {
      if (now_ns_ < next_attempt_ns_) return 0;
      connect();
      return 1;
    }
    int work = read_input();
    if (!close_pending_) run_timers();
    if (!close_pending_ && !out_.empty()) flush();
    work += static_cast<int>(deliver_stamps());
    if (close_pending_) {
      teardown();
      ++work;
    }
    // Nothing to do: the thread may sleep, so the exchange's answer must ring
    // (true: input came meanwhile -- one more pass instead of a sleep).
    if (work == 0 && doorbell_ && link_.is_shm()) work = link_.shm().arm_doorbell() ? 1 : 0;
    return work;
  }

  // Order messages (PROTOCOL.md §1.2), sent as given (the order manager
  // validates the values), only while logged on. The returned seq is what
  // the exchange's answers quote as ref_seq.
  [[nodiscard]] SendResult send_new_order(market::ClientOrderId id, market::InstrumentId instrument, market::Side side,
                                          market::OrderType type, market::StpMode stp, market::Price price,
                                          market::Qty qty) noexcept {
    auto m = proto::make_message<proto::NewOrder>(0);
    m.client_order_id = id;
    m.instrument = instrument;
    m.side = static_cast<std::uint8_t>(side);
    m.order_type = static_cast<std::uint8_t>(type);
    m.stp = static_cast<std::uint8_t>(stp);
    m.price = price;
    m.qty = qty;
    return send_order(m);
  }
  [[nodiscard]] SendResult send_cancel(market::ClientOrderId id, market::InstrumentId instrument) noexcept {
    auto m = proto::make_message<proto::CancelOrder>(0);
    m.client_order_id = id;
    m.instrument = instrument;
    return send_order(m);
  }
  [[nodiscard]] SendResult send_modify(market::ClientOrderId id, market::InstrumentId instrument, market::Price price,
                                       market::Qty total_qty) noexcept {
    auto m = proto::make_message<proto::ModifyOrder>(0);
    m.client_order_id = id;
    m.instrument = instrument;
    m.price = price;
    m.qty = total_qty;
    return send_order(m);
  }

  // An admin request (PROTOCOL.md §1.7; the session's client must be an
  // admin). Its AdminResponse reaches the handler's on_admin_response, which
  // a handler that sends these must have.
  [[nodiscard]] SendResult send_admin_request(std::uint64_t request_id, proto::AdminAction action,
                                              std::uint32_t instrument, std::uint32_t target_client,
                                              std::int64_t amount = 0) noexcept {
    auto m = proto::make_message<proto::AdminRequest>(0);
    m.request_id = request_id;
    m.action = action;
    m.instrument = instrument;
    m.target_client = target_client;
    m.amount = amount;
    return send_order(m);
  }

  // Missed reports (PROTOCOL.md §1.8): from the next logon on, each session
  // first asks the venue for this client's fills with exec_seq >
  // after_exec_seq; they come to on_execution_report again, flagged
  // proto::kReportReplayed, then the handler's on_reports_replayed (optional)
  // hears the replay is complete. The mark then moves on by itself (the
  // highest exec_seq replayed or filled since: client/report_replay.hpp), so a
  // reconnect asks only for what this client has not been told. Asked while
  // logged on, it applies from the next logon (the request must be a
  // session's first message).
  void request_reports_after(std::uint64_t after_exec_seq) noexcept { replay_.ask_after(after_exec_seq); }
  // A ReportsRequest went out in this session and its ReportsReplayed has not come yet.
  bool replaying() const noexcept { return replay_.pending(); }
  // What the next logon asks for (the fills after it), once asked.
  std::uint64_t reports_after_exec_seq() const noexcept { return replay_.after_exec_seq(); }

  // Corked, order messages are queued but not written until uncork(): the
  // orders one decision makes (a market maker's bid and ask) leave in one
  // write, one system call instead of one each.
  void cork() noexcept { corked_ = true; }
  void uncork() noexcept {
    corked_ = false;
    if (!out_.empty()) flush();
  }

  // Ends for good: logged on, sends Logout and waits (at most 3 heartbeat
  // intervals) for the exchange's Logout or close; logging on, closes at the
  // next poll(); otherwise stops at once. Then kStopped, no reconnect.
  void logout() noexcept {
    switch (state_) {
      case SessionState::kActive:
        if (enqueue(proto::make_message<proto::Logout>(0))) flush();
        state_ = SessionState::kLoggingOut;
        logout_sent_ns_ = now_ns_;
        break;
      case SessionState::kLoggingOn: close_later(DisconnectReason::kClientLogout, 0, true); break;
      case SessionState::kDisconnected: state_ = SessionState::kStopped; break;
      case SessionState::kLoggingOut:
      case SessionState::kStopped: break;
    }
  }

  SessionState state() const noexcept { return state_; }
  bool logged_on() const noexcept { return state_ == SessionState::kActive && !close_pending_; }
  bool stopped() const noexcept { return state_ == SessionState::kStopped; }
  // The interval in force (LogonAck), or the one asked for before that.
  std::uint32_t heartbeat_ms() const noexcept {
    return static_cast<std::uint32_t>(core::whole_ms_from_ns(liveness_.interval_ns()));
  }
  std::uint64_t session_id() const noexcept { return session_id_; }
  const Disconnect& last_disconnect() const noexcept { return last_disconnect_; }
  std::uint64_t last_order_written_tsc() const noexcept { return last_written_tsc_; }
  const OrderEntryClientCounters& counters() const noexcept { return counters_; }
  // Start-up, before poll() runs: the counters into `file` as "session.*".
  void place_counters(core::CountersFile& file) { place_session_counters(file, counters_); }
  const OrderEntryClientConfig& config() const noexcept { return config_; }

 private:
  bool connected() const noexcept {
    return state_ == SessionState::kLoggingOn || state_ == SessionState::kActive || state_ == SessionState::kLoggingOut;
  }

  // ---- connection life ----------------------------------------------------------

  void connect() noexcept {
    counters_.connect_attempts.add();
    int error = 0;
    try {
      const std::chrono::milliseconds timeout(config_.connect_timeout_ms);
      if (config_.transport == ipc::Transport::kShm) {
        link_.attach(ipc::shm_connect(config_.shm_path, timeout));
      } else {
        link_.attach(net::tcp_connect(config_.exchange, timeout));
        if (config_.socket_send_buffer_bytes != 0)
          (void)link_.tcp().set_send_buffer_bytes(static_cast<int>(config_.socket_send_buffer_bytes));
      }
    } catch (const net::SocketError& e) {
      error = e.code().value();
      if (error == 0) error = -1;
    } catch (const std::system_error& e) {  // shared memory: the segment could not be mapped
      error = e.code().value();
      if (error == 0) error = -1;
    } catch (...) {
      error = -1;  // std::bad_alloc, or a segment that is not what the exchange said: retried after the back-off
    }
    if (error != 0) {
      link_.close();
      end_connection(DisconnectReason::kConnectFailed, static_cast<std::uint16_t>(error < 0 ? 0 : error), false);
      return;
    }
    counters_.connects.add();
    // Closing the socket takes it out of the set again: only adds are needed.
    // Failing leaves a blocking idle on its timeout: slower, never stuck.
    (void)wait_set_.add(link_.fd(), net::Interest::kRead, 0);
    if (doorbell_ && link_.is_shm()) link_.shm().enable_doorbell();
    state_ = SessionState::kLoggingOn;
    seq_.reset();
    liveness_.start(now_ns_, core::ns_from_ms(config_.heartbeat_ms));
    out_.reset();
    auto logon = proto::make_message<proto::Logon>(0);
    logon.client_id = config_.client_id;
    logon.heartbeat_ms = config_.heartbeat_ms;
    std::memcpy(logon.credential, config_.api_key.data(), config_.api_key.size());
    (void)enqueue(logon);  // the buffer is empty and larger than a Logon
    flush();
  }

  // Records why the session must end; poll() closes it at its next safe
  // point (never inside a callback). The first reason wins.
  void close_later(DisconnectReason reason, std::uint16_t detail, bool fatal) noexcept {
    if (close_pending_) return;
    close_pending_ = true;
    close_reason_ = reason;
    close_detail_ = detail;
    close_fatal_ = fatal;
  }

  void teardown() noexcept {
    DisconnectReason reason = close_reason_;
    bool fatal = close_fatal_;
    if (state_ == SessionState::kLoggingOut) {  // our own logout ends in a stop, however it ends
      reason = DisconnectReason::kClientLogout;
      fatal = true;
    }
    was_logged_on_ = state_ == SessionState::kActive || state_ == SessionState::kLoggingOut;
    deliver_stamps();  // messages fully written before the end still count
    out_.discard();    // the unwritten tail is gone
    link_.close();
    in_.clear();
    close_pending_ = false;
    end_connection(reason, close_detail_, fatal);
  }

  void end_connection(DisconnectReason reason, std::uint16_t detail, bool fatal) noexcept {
    Disconnect d;
    d.reason = reason;
    d.detail = detail;
    d.fatal = fatal;
    d.was_logged_on = was_logged_on_;
    was_logged_on_ = false;
    replay_.on_disconnect();
    if (fatal) {
      state_ = SessionState::kStopped;
    } else {
      state_ = SessionState::kDisconnected;
      d.retry_in_ms = backoff_.next_delay_ms();
      next_attempt_ns_ = now_ns_ + core::ns_from_ms(d.retry_in_ms);
    }
    counters_.disconnects[static_cast<std::size_t>(reason)].add();
    last_disconnect_ = d;
    handler_.on_disconnected(d);
  }

  void protocol_error(ProtocolError e) noexcept {
    if (close_pending_) return;
    counters_.protocol_errors[static_cast<std::size_t>(e)].add();
    // Best effort: a Logout before the close (the exchange then knows it was on purpose).
    if (state_ == SessionState::kActive && enqueue(proto::make_message<proto::Logout>(0))) flush();
    close_later(DisconnectReason::kProtocolError, static_cast<std::uint16_t>(e), false);
  }

  void run_timers() noexcept {
    switch (state_) {
      case SessionState::kLoggingOn:
        if (now_ns_ - liveness_.connected_ns() >= core::ns_from_ms(config_.logon_timeout_ms))
          close_later(DisconnectReason::kLogonTimeout, 0, false);
        break;
      case SessionState::kActive:
        if (liveness_.silent(now_ns_)) {
          if (enqueue(proto::make_message<proto::Logout>(0))) flush();
          close_later(DisconnectReason::kHeartbeatTimeout, 0, false);
        } else if (liveness_.heartbeat_due(now_ns_)) {
          if (enqueue(proto::make_message<proto::Heartbeat>(0))) counters_.heartbeats_sent.add();
        }
        break;
      case SessionState::kLoggingOut:
        if (liveness_.stalled_too_long(logout_sent_ns_, now_ns_)) close_later(DisconnectReason::kClientLogout, 0, true);
        break;
      default: break;
    }
  }

  // ---- output -----------------------------------------------------------------------

  template <typename M>
  bool enqueue(M m) noexcept {
    m.header.seq = seq_.next_out();
    if (!out_.append(m)) {
      flush();  // make room with what the socket takes now
      if (!out_.append(m)) return false;
    }
    seq_.sent();
    liveness_.sent(now_ns_);
    counters_.messages_out.add();
    return true;
  }

  template <typename M>
  SendResult send_order(const M& m) noexcept {
    if (state_ != SessionState::kActive || close_pending_) return {0, SendStatus::kNotLoggedOn};
    const std::uint32_t seq = seq_.next_out();
    if (out_.stamps().full() || !enqueue(m)) {
      counters_.output_full.add();
      return {0, SendStatus::kOutputFull};
    }
    (void)out_.stamps().push(out_.queued_end(), order_key_base_ | seq, seq);  // not full: checked above
    counters_.orders_sent.add();
    if (!corked_) flush();
    return {seq, SendStatus::kSent};
  }

  void flush() noexcept {
    while (!out_.empty() && !close_pending_) {
      const std::span<const std::uint8_t> pending = out_.pending();
      const net::IoResult r = link_.write_some(pending);
      if (r.status == net::IoStatus::kOk) {
        if (r.bytes < pending.size()) counters_.partial_writes.add();
        out_.wrote(r.bytes);
        counters_.bytes_out.add(r.bytes);
        continue;
      }
      if (r.status == net::IoStatus::kWouldBlock) break;
      close_later(r.status == net::IoStatus::kClosed ? DisconnectReason::kPeerClosed : DisconnectReason::kIoError,
                  static_cast<std::uint16_t>(r.error), false);
    }
    if (out_.stamps().has_written(out_.written())) {
      last_written_tsc_ = clock_.now();
      out_.stamps().stamp_written(out_.written(), last_written_tsc_);
    }
  }

  std::size_t deliver_stamps() noexcept {
    return out_.stamps().take_stamped([this](const proto::WrittenStamps::Entry& e) {
      NT_HOP_AT(tr_tcp_write, e.written_tsc, e.key);
      handler_.on_order_written(static_cast<std::uint32_t>(e.aux), e.written_tsc);
    });
  }

  // ---- input (order_entry_client_input.hpp) --------------------------------------------

  int read_input() noexcept;
  void process_input() noexcept;
  void dispatch(proto::MsgType type, const std::uint8_t* bytes) noexcept;
  static std::size_t slot(std::uint16_t code, std::size_t first, std::size_t last) noexcept {
    return code >= first && code <= last ? code : last + 1;  // last + 1: a code the spec does not define
  }

  const OrderEntryClientConfig config_;
  Handler& handler_;
  const core::TscClock& clock_;
  ReconnectBackoff backoff_;
  ReportReplay replay_;  // request_reports_after(); §1.8
  ipc::StreamLink link_;  // TCP or shared memory (config_.transport)
  net::EpollPoller wait_set_{1};  // link_'s socket, for wait_fds(); never waited on here
  SessionState state_ = SessionState::kDisconnected;
  std::uint64_t now_ns_ = 0;           // read once per poll()
  std::uint64_t next_attempt_ns_ = 0;  // kDisconnected: connect at or after this time (0: at once)
  std::uint64_t logout_sent_ns_ = 0;
  std::uint64_t session_id_ = 0;
  proto::SessionSequence seq_;
  proto::SessionLiveness liveness_;
  bool was_logged_on_ = false;
  // A session that must end (failure found while reading, writing or inside
  // a callback): poll() closes it at its next safe point.
  bool corked_ = false;
  bool doorbell_ = false;  // the thread sleeps in the kernel (wait_fds() was asked): shm doorbell on
  bool close_pending_ = false;
  bool close_fatal_ = false;
  DisconnectReason close_reason_ = DisconnectReason::kPeerClosed;
  std::uint16_t close_detail_ = 0;
  core::ByteBuffer in_;
  // Order messages wait in its stamps for their write: key (client << 32) | seq, aux the seq.
  proto::OutputStream out_;
  const std::uint64_t order_key_base_;  // client_id << 32 (telemetry order keys)
  std::uint64_t last_written_tsc_ = 0;
  Disconnect last_disconnect_{};
  OrderEntryClientCounters counters_;
};

}  // namespace nanotick::client

#include "client/order_entry_client_input.hpp"  // the input side: read, check, dispatch
