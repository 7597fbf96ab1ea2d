#include "exchange/sessions/order_gateway.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/time_units.hpp"
#include "engine/order.hpp"
#include "exchange/sessions/order_gateway_send.hpp"
#include "exchange/sessions/wire_translation.hpp"
#include "net/socket_address.hpp"
#include "proto/order_entry_codec.hpp"
#include "telemetry/instrument.hpp"

namespace nanotick::exchange {

namespace {

constexpr std::size_t kInputBufferBytes = 64 * 1024;
constexpr std::uint64_t kTimerPeriodNs = core::kNsPerMs;     // heartbeat/timeout checks: every 1 ms
constexpr std::uint64_t kSummaryPeriodNs = core::kNsPerSec;  // latency summaries into the counters file
constexpr std::uint64_t kCloseLingerNs = core::kNsPerSec;    // wait this long for the peer's EOF
constexpr std::uint64_t kShmOnlyPollNs = 50 * core::kNsPerUs;  // epoll period while only shm sessions are open

}  // namespace

OrderGateway::OrderGateway(const ExchangeConfig& config, RequestRing& requests, std::uint64_t session_id_base,
                           std::size_t answer_stamp_slots)
    : config_(config),
      requests_(requests),
      stamp_answers_(answer_stamp_slots != 0),
      clock_(core::TscClock::global()),
      session_id_base_(session_id_base),
      listener_(net::parse_socket_address(config.server.order_entry, net::PortZero::kAllowed)),
      shm_listener_(config.server.shm_path.empty()
                        ? nullptr
                        : std::make_unique<ipc::ShmListener>(config.server.shm_path, config.server.shm_ring_bytes)),
      poller_(config.server.max_sessions + kOverflowSlots + 2),
      session_of_client_(engine::kMaxClientId + 1, -1),
      client_index_(engine::kMaxClientId + 1, -1),
      client_fills_(std::make_unique<ClientFillTotals[]>(config.clients.size())),
      may_have_orders_(config.clients.size(), 0) {
  const std::size_t slots = config.server.max_sessions + kOverflowSlots;
  sessions_.reserve(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    sessions_.push_back(
        std::make_unique<Session>(i, kInputBufferBytes, config.server.output_buffer_bytes, answer_stamp_slots));
  }
  // At most one pending per client and session end; drained as the ring has room.
  pending_cancels_.reserve(2 * (config.clients.size() + slots));
  for (std::size_t i = 0; i < config.clients.size(); ++i)
    client_index_[config.clients[i].id & engine::kMaxClientId] = static_cast<std::int32_t>(i);
  if (const auto ec = poller_.add(listener_.fd(), net::Interest::kRead, kListenerToken); ec)
    throw std::runtime_error("gateway: cannot poll the listening socket: " + ec.message());
  if (shm_listener_ != nullptr) {
    if (const auto ec = poller_.add(shm_listener_->fd(), net::Interest::kRead, kShmListenerToken); ec)
      throw std::runtime_error("gateway: cannot poll the shared-memory listener: " + ec.message());
  }
  last_timer_ns_ = clock_.now_ns();
}

OrderGateway::~OrderGateway() = default;

int OrderGateway::do_work() noexcept {
  const std::uint64_t now = clock_.now_ns();
  int work = 0;
  if (doorbells_armed_) disarm_doorbells();
  if (accepting_ && shutdown_requested_.load(std::memory_order_acquire)) begin_shutdown();
  // Sockets need epoll every pass; while every open session is a shared-memory
  // one (their data is polled below), only the listeners and the control
  // sockets remain, and once per kShmOnlyPollNs is soon enough for an accept
  // or a client's death -- the system call (~0.3 us here) leaves each pass.
  const bool poll_sockets = open_connections_ != open_shm_ || now - last_epoll_ns_ >= kShmOnlyPollNs;
  if (poll_sockets) last_epoll_ns_ = now;
  for (const net::ReadyEvent& ev : poll_sockets ? poller_.wait(0) : std::span<const net::ReadyEvent>{}) {
    ++work;
    if (ev.token == kListenerToken) {
      accept_all(now);
      continue;
    }
    if (ev.token == kShmListenerToken) {
      accept_shm(now);
      continue;
    }
    const auto index = static_cast<std::size_t>(ev.token);
    if (index >= sessions_.size() || sessions_[index]->state == SessionState::kFree) continue;
    Session& s = *sessions_[index];
    // Shared memory: the event is the control socket's (the client's process
    // ended); read_session() then takes what it published and sees the end.
    if (s.link.is_shm() && s.link.check_peer()) counters_.shm_peer_gone.add();
    if (ev.readable() || ev.hangup() || ev.error()) read_session(s, now);
    if (ev.writable()) flush(s);
  }
  if (replay_answers_ != nullptr) work += send_replayed(now);
  if (pending_cancel_head_ != pending_cancels_.size()) {
    push_pending_cancels();
    ++work;  // not idle while cancels wait (shutdown waits for them)
  }
  for (const auto& sp : sessions_) {
    // Sessions that stopped because the sequencer ring was full retry.
    if (sp->input_blocked && sp->state == SessionState::kActive) {
      sp->input_blocked = false;
      process_input(*sp, now);
    }
    // Shared-memory input is polled, not announced: one load per session.
    if (sp->state != SessionState::kFree && !sp->input_blocked && sp->link.shm_input_pending()) {
      ++work;
      read_session(*sp, now);
    }
  }
  if (now - last_timer_ns_ >= kTimerPeriodNs) {
    run_timers(now);
    last_timer_ns_ = now;
    if (now - last_summary_ns_ >= kSummaryPeriodNs) [[unlikely]] {
      publish_latency_summaries();
      last_summary_ns_ = now;
    }
  }
  flush_answers();
  // Nothing to do: the thread may sleep, so a client's write must ring.
  if (work == 0 && doorbells_ && open_shm_ != 0) work = arm_doorbells();
  return work;
}

int OrderGateway::arm_doorbells() noexcept {
  int pending = 0;
  for (const auto& sp : sessions_) {
    // A session whose input waits for room in the sequencer's ring is retried
    // every pass, not woken: its word stays awake (no ring for its writes).
    if (sp->state == SessionState::kFree || sp->input_blocked || !sp->link.is_shm()) continue;
    pending += sp->link.shm().arm_doorbell();
  }
  doorbells_armed_ = true;
  return pending;
}

void OrderGateway::disarm_doorbells() noexcept {
  doorbells_armed_ = false;
  for (const auto& sp : sessions_)
    if (sp->link.is_shm()) sp->link.shm().disarm_doorbell();
}

void OrderGateway::accept_all(std::uint64_t now) noexcept {
  while (auto stream = listener_.accept()) {
    if (!accepting_) continue;  // shutting down: the destructor of `stream` closes it
    Session* s = free_slot();
    if (s == nullptr) {
      counters_.connections_refused.add();
      continue;
    }
    s->link.attach(std::move(*stream));
    open_session(*s, now);
  }
}

void OrderGateway::accept_shm(std::uint64_t now) noexcept {
  for (;;) {
    if (!accepting_ || open_shm_ >= config_.server.shm_slots || free_slot() == nullptr) {
      // No slot: the connection is closed before a segment is made for it
      // (the client's connect reports it); shutting down: likewise.
      if (!shm_listener_->refuse()) return;
      counters_.shm_connections_refused.add();
      counters_.connections_refused.add();
      continue;
    }
    const std::uint64_t failures = shm_listener_->accept_errors();
    auto stream = shm_listener_->accept();
    if (!stream) {
      if (shm_listener_->accept_errors() == failures) return;  // none pending
      counters_.shm_setup_failures.add();
      continue;
    }
    Session& s = *free_slot();
    if (doorbells_) stream->enable_doorbell();
    s.link.attach(std::move(*stream));
    ++open_shm_;
    counters_.shm_connections_accepted.add();
    open_session(s, now);
  }
}

Session* OrderGateway::free_slot() noexcept {
  for (const auto& sp : sessions_)
    if (sp->state == SessionState::kFree) return sp.get();
  return nullptr;
}

void OrderGateway::open_session(Session& s, std::uint64_t now) noexcept {
  if (poller_.add(s.link.fd(), net::Interest::kRead, s.index)) {
    counters_.connections_refused.add();
    if (s.link.is_shm()) --open_shm_;
    s.link.close();
    return;
  }
  s.state = SessionState::kAwaitingLogon;
  s.generation = ++connection_serial_;  // wraps after 65536 connections
  s.client_id = 0;
  s.client = nullptr;
  s.seq.reset();
  s.liveness.start(now, core::ns_from_ms(config_.server.heartbeat_ms));
  s.write_interest = false;
  s.write_shut = false;
  s.output_stalled_ns = 0;
  s.partial_since_ns = 0;
  s.output_held_back = false;
  s.kernel_room = 0;
  s.input_blocked = false;
  s.first_after_logon = false;
  s.in.clear();
  s.out.reset();
  ++open_connections_;
  counters_.connections_open.set(open_connections_);
  counters_.connections_accepted.add();
}

void OrderGateway::read_session(Session& s, std::uint64_t now) noexcept {
  std::size_t budget = config_.server.read_budget_bytes;
  while (budget > 0 && s.state != SessionState::kFree) {
    if (s.input_blocked) break;  // input waits (ring full or output backed up): leave it in the socket
    std::span<std::uint8_t> room = s.in.writable();
    if (room.empty()) break;  // a full buffer of unprocessed input (ring full): read later
    if (room.size() > budget) room = room.first(budget);
    const net::IoResult r = s.link.read_some(room);
    if (r.status == net::IoStatus::kWouldBlock) break;
    if (r.status != net::IoStatus::kOk) {  // EOF, reset or error: whatever was complete is processed
      if (r.error == EPROTO && s.link.is_shm()) counters_.shm_broken_rings.add();
      if (s.state != SessionState::kClosing) process_input(s, now);
      release(s);
      return;
    }
    budget -= r.bytes;
    counters_.bytes_in.add(r.bytes);
    if (s.state == SessionState::kClosing) {
      s.in.clear();  // after our Logout nothing the peer sends is processed
      continue;
    }
    s.in.commit(r.bytes);
    s.liveness.heard(now);
    const std::size_t unframed = s.in.size();
    process_input(s, now);
    // A message left incomplete began in this read if this read completed
    // the one before it (or none was waiting); else it is still the one
    // begun earlier, whatever trickled in since.
    if (s.in.empty()) s.partial_since_ns = 0;
    else if (s.in.size() < unframed || s.partial_since_ns == 0) s.partial_since_ns = now;
    // A short read emptied the socket (a stream socket returns what it holds):
    // the level-triggered poller reports it again when more arrives, so another
    // read now would only return EAGAIN -- a syscall before the engine sees
    // the order (in compact mode the engine runs after this pass).
    if (r.bytes < room.size()) break;
  }
}

void OrderGateway::process_input(Session& s, std::uint64_t now) noexcept {
  while (s.state == SessionState::kAwaitingLogon || s.state == SessionState::kActive) {
    if (s.out.size() > s.out.capacity() / 2) {
      // Backpressure: answers are piling up unwritten. Process the rest once
      // the client has read some (retried every pass), rather than overflow.
      s.input_blocked = true;
      return;
    }
    const std::span<const std::uint8_t> bytes = s.in.readable();
    const proto::Frame f = proto::next_frame(bytes, proto::Direction::kFromClient);
    if (f.status == proto::FrameStatus::kNeedMore) return;
    if (f.status == proto::FrameStatus::kFatal) {  // rule 1: framing lost
      counters_.messages_in.add();
      proto::Header h = f.header;
      h.seq = 0;  // unreadable
      session_reject(s, h, f.reason, now);
      logout_and_close(s, proto::LogoutReason::kProtocolError, now);
      return;
    }
    counters_.messages_in.add();
    if (f.status == proto::FrameStatus::kSkip) {  // rules 2-4: framing holds, the message is bad
      if (s.state == SessionState::kAwaitingLogon) {
        session_reject(s, f.header, f.reason, now);
        logout_and_close(s, proto::LogoutReason::kNotLoggedOn, now);
        return;
      }
      s.first_after_logon = false;
      if (s.seq.check(f.header.seq) == proto::SeqCheck::kExpected) s.seq.accept();  // the reject tells the next one
      session_reject(s, f.header, f.reason, now);
      s.in.consume(f.length);
      continue;
    }
    if (!handle_message(s, f.header, bytes.data(), now)) return;
    if (s.state == SessionState::kAwaitingLogon || s.state == SessionState::kActive) s.in.consume(f.length);
  }
}

bool OrderGateway::handle_message(Session& s, const proto::Header& h, const std::uint8_t* bytes,
                                  std::uint64_t now) noexcept {
  using proto::MsgType;
  if (s.state == SessionState::kAwaitingLogon) {
    // Rule 5 and logon step 2: the first message must be a Logon with seq 1.
    if (h.type != MsgType::kLogon || h.seq != 1) {
      session_reject(s, h, proto::SessionRejectReason::kNotLoggedOn, now);
      logout_and_close(s, proto::LogoutReason::kNotLoggedOn, now);
      return false;
    }
    handle_logon(s, proto::read_message<proto::Logon>(bytes), now);
    return true;
  }
  const bool first = s.first_after_logon;  // a ReportsRequest is valid only as the first message (§1.8)
  s.first_after_logon = false;
  if (const proto::SeqCheck c = s.seq.check(h.seq); c != proto::SeqCheck::kExpected) {
    // Rules 6-7: not processed, expected unchanged.
    session_reject(
        s, h, c == proto::SeqCheck::kGap ? proto::SessionRejectReason::kSeqGap : proto::SessionRejectReason::kSeqRepeat,
        now);
    return true;
  }
  switch (h.type) {
    case MsgType::kLogon:
      s.seq.accept();
      session_reject(s, h, proto::SessionRejectReason::kAlreadyLoggedOn, now);
      return true;
    case MsgType::kLogout:
      s.seq.accept();
      logout_and_close(s, proto::LogoutReason::kClientRequest, now);
      return false;
    case MsgType::kHeartbeat: s.seq.accept(); return true;
    case MsgType::kReportsRequest:
      if (handle_reports_request(s, h, proto::read_message<proto::ReportsRequest>(bytes), first, now)) return true;
      s.first_after_logon = first;  // retried as it was
      return false;
    case MsgType::kNewOrder:
    case MsgType::kCancelOrder:
    case MsgType::kModifyOrder:
    case MsgType::kAdminRequest: {
      if (requests_.size() >= RequestRing::capacity()) {  // no room: keep the bytes, retry next pass
        s.input_blocked = true;
        return false;
      }
      // Taken once the message is consumed (a blocked one is framed again
      // later): its request carries it on, and the ack latency starts here.
      const std::uint64_t tsc = clock_.now();
      NT_HOP_AT(ex_tcp_read, tsc, (std::uint64_t{s.client_id} << 32) | h.seq);
      if (!s.rate.try_take(now)) {
        s.seq.accept();
        session_reject(s, h, proto::SessionRejectReason::kRateLimited, now);
        return true;
      }
      if (h.type == MsgType::kAdminRequest) [[unlikely]] {
        s.seq.accept();
        return handle_admin(s, h, proto::read_message<proto::AdminRequest>(bytes), tsc, now);
      }
      engine::Request rq =
          h.type == MsgType::kNewOrder      ? to_request(proto::read_message<proto::NewOrder>(bytes), s.client_id)
          : h.type == MsgType::kCancelOrder ? to_request(proto::read_message<proto::CancelOrder>(bytes), s.client_id)
                                            : to_request(proto::read_message<proto::ModifyOrder>(bytes), s.client_id);
      rq.event_id = make_event_id(s.client_id, s.generation, h.seq);
      s.seq.accept();
      forward(s, rq, tsc);
      return true;
    }
    default:
      // next_frame only passes client types; a new one must be handled above.
      s.seq.accept();
      session_reject(s, h, proto::SessionRejectReason::kUnknownType, now);
      return true;
  }
}

void OrderGateway::forward(Session& s, const engine::Request& rq, std::uint64_t tsc) noexcept {
  // A limit order may rest: from now on the session's end queues a mass cancel
  // (sequenced behind this order, so it covers it even before its acknowledgement).
  if (rq.type == engine::RequestType::kNew && rq.order_type == engine::OrderType::kLimit && s.client != nullptr)
    may_have_orders_[static_cast<std::size_t>(client_index_[s.client_id])] = 1;
  // Room was checked before the message was consumed; this thread is the only
  // producer. The receive TSC comes back with the first answer (on_report).
  (void)requests_.try_push(InboundRequest{rq, tsc});
  counters_.requests_forwarded.add();
}

void OrderGateway::handle_logon(Session& s, const proto::Logon& m, std::uint64_t now) noexcept {
  using proto::LogonRejectReason;
  s.seq.accept();  // the Logon, seq 1
  auto reject = [&](LogonRejectReason why) {
    auto r = proto::make_message<proto::LogonReject>(0);
    r.reason = static_cast<std::uint16_t>(why);
    counters_.logon_rejects[static_cast<std::size_t>(why)].add();
    send(s, r, now);
    start_closing(s, now);
  };
  const ClientConfig* client = config_.find_client(m.client_id);
  if (logged_on_ >= config_.server.max_sessions) return reject(LogonRejectReason::kMaxSessions);
  if (client == nullptr) return reject(LogonRejectReason::kUnknownClient);
  if (!client->credential.matches(std::span<const char>(m.credential, sizeof m.credential)))
    return reject(LogonRejectReason::kBadCredentials);
  if (session_of_client_[m.client_id] >= 0) return reject(LogonRejectReason::kAlreadyLoggedOn);
  std::uint32_t hb = m.heartbeat_ms == 0 ? config_.server.heartbeat_ms : m.heartbeat_ms;
  if (hb < config_.server.min_heartbeat_ms || hb > config_.server.max_heartbeat_ms)
    return reject(LogonRejectReason::kBadHeartbeat);

  s.state = SessionState::kActive;
  s.client = client;
  s.client_id = m.client_id;
  s.liveness.set_interval_ns(core::ns_from_ms(hb));
  s.rate = TokenBucket(client->rate_limit_per_s, client->rate_burst, now);
  session_of_client_[m.client_id] = static_cast<std::int32_t>(s.index);
  ++logged_on_;
  counters_.sessions_logged_on.add();
  counters_.sessions_live.set(logged_on_);
  auto ack = proto::make_message<proto::LogonAck>(0);
  ack.client_id = m.client_id;
  ack.heartbeat_ms = hb;
  ack.session_id = session_id_base_ + ++next_session_serial_;
  send(s, ack, now);
  s.first_after_logon = true;
}

void OrderGateway::session_reject(Session& s, const proto::Header& h, proto::SessionRejectReason reason,
                                  std::uint64_t now) noexcept {
  auto r = proto::make_message<proto::SessionReject>(0);
  r.ref_seq = h.seq;
  r.expected_seq = s.seq.expected_in();
  r.ref_type = static_cast<std::uint8_t>(h.type);
  r.reason = static_cast<std::uint16_t>(reason);
  counters_.session_rejects[static_cast<std::size_t>(reason)].add();
  send(s, r, now);
}

void OrderGateway::logout_and_close(Session& s, proto::LogoutReason reason, std::uint64_t now) noexcept {
  if (s.state == SessionState::kFree || s.state == SessionState::kClosing) return;
  auto m = proto::make_message<proto::ServerLogout>(0);
  m.reason = static_cast<std::uint16_t>(reason);
  counters_.logouts[static_cast<std::size_t>(reason)].add();
  send(s, m, now);
  start_closing(s, now);
}

void OrderGateway::log_off(Session& s) noexcept {
  if (s.state != SessionState::kActive) return;
  session_of_client_[s.client_id] = -1;
  --logged_on_;
  counters_.sessions_live.set(logged_on_);
  if (s.client == nullptr || !s.client->cancel_on_disconnect) return;
  std::uint8_t& may = may_have_orders_[static_cast<std::size_t>(client_index_[s.client_id])];
  if (may == 0) return;  // no limit order since the last mass cancel: nothing can rest
  may = 0;
  queue_mass_cancel(s.client_id);
}

void OrderGateway::start_closing(Session& s, std::uint64_t now) noexcept {
  log_off(s);
  s.state = SessionState::kClosing;
  s.in.clear();
  s.input_blocked = false;
  s.close_deadline_ns = now + kCloseLingerNs;
  // Flush what we can now; the write side is shut once the output is empty,
  // so the peer reads our last messages before the end of the stream.
  flush(s);
}

void OrderGateway::release(Session& s) noexcept {
  if (s.state == SessionState::kFree) return;
  log_off(s);
  (void)poller_.remove(s.link.fd());
  s.link.discard_input();  // unread input would turn close() into a reset that discards our last messages
  if (s.link.is_shm()) --open_shm_;
  s.link.close();
  s.state = SessionState::kFree;
  s.in.clear();
  s.out.discard();
  s.input_blocked = false;
  s.write_interest = false;
  --open_connections_;
  counters_.connections_open.set(open_connections_);
  counters_.sessions_closed.add();
}

}  // namespace nanotick::exchange
