// The order gateway's session lifecycle over real loopback TCP
// (docs/PROTOCOL.md §1.4-1.5): cancel on disconnect, heartbeat, logon and
// partial-message timeouts, max sessions, logout and shutdown, and the
// server's own sequence numbers.
#include "exchange/sessions/order_gateway.hpp"

#include "unit/exchange/gateway_fixture.hpp"

namespace {

using namespace gateway_fixture;

TEST_F(Fixture, CancelOnDisconnectQueuesTheEnginesMassCancel) {
  Client c = connect();
  logged_on(c, 2, kKey2);  // client 2: cancel_on_disconnect = true
  send(c, new_order(11));
  send(c, new_order(12));
  ASSERT_TRUE(pump([&] { return ring->size() == 2; }));
  (void)drain_ring();
  gateway->on_report(report(ne::ReportType::kAccepted, 2, 11, 0), 0);
  gateway->on_report(report(ne::ReportType::kAccepted, 2, 12, 0), 0);
  auto done = report(ne::ReportType::kCancelled, 2, 12, 0);
  done.leaves_qty = 0;
  gateway->on_report(done, 0);  // 12 is gone already; 11 may rest
  c.stream.close();
  ASSERT_TRUE(pump([&] { return !ring->empty(); }));
  const auto got = drain_ring();
  // One request: the engine cancels whatever of client 2 rests, on every instrument.
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].request.type, ne::RequestType::kMassCancel);
  EXPECT_EQ(got[0].request.client, 2u);
  EXPECT_EQ(got[0].request.instrument, ne::kAllInstruments);
  EXPECT_EQ(got[0].request.client_order_id, 0u);
  EXPECT_EQ(gateway->counters().disconnect_mass_cancels.get(), 1u);
  // The engine's reports of it count the orders it cancelled.
  auto mass = report(ne::ReportType::kCancelled, 2, 11, got[0].request.event_id);
  mass.cancel_reason = ne::CancelReason::kMassCancel;
  gateway->on_report(mass, 0);
  EXPECT_EQ(gateway->counters().disconnect_cancels.get(), 1u);
}

TEST_F(Fixture, ASessionThatSentNoLimitOrderEndsWithoutAMassCancel) {
  Client c = connect();
  logged_on(c, 2, kKey2);
  auto ioc = new_order(21);
  ioc.order_type = static_cast<std::uint8_t>(ne::OrderType::kIoc);  // never rests
  send(c, ioc);
  ASSERT_TRUE(pump([&] { return ring->size() == 1; }));
  (void)drain_ring();
  c.stream.close();
  ASSERT_TRUE(pump([&] { return gateway->open_connections() == 0; }));
  pump_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ring->empty());
  EXPECT_EQ(gateway->counters().disconnect_mass_cancels.get(), 0u);
}

TEST_F(Fixture, AReconnectedSessionsOrdersAreCancelledAtItsEndEvenIfOldOnesFilled) {
  // Session 1 sends a limit order and ends: mass cancel. Session 2 sends one;
  // the first order's fill arrives after the reconnect. Session 2's end must
  // still queue a mass cancel: no report of an old order clears the new one.
  Client a = connect();
  logged_on(a, 2, kKey2);
  send(a, new_order(31));
  ASSERT_TRUE(pump([&] { return ring->size() == 1; }));
  a.stream.close();
  ASSERT_TRUE(pump([&] { return ring->size() == 2; }));
  Client b = connect();
  logged_on(b, 2, kKey2);
  send(b, new_order(32));
  ASSERT_TRUE(pump([&] { return ring->size() == 3; }));
  auto filled = report(ne::ReportType::kFill, 2, 31, 0);
  filled.leaves_qty = 0;
  gateway->on_report(filled, 0);
  b.stream.close();
  ASSERT_TRUE(pump([&] { return ring->size() == 4; }));
  const auto got = drain_ring();
  EXPECT_EQ(got[1].request.type, ne::RequestType::kMassCancel);
  EXPECT_EQ(got[3].request.type, ne::RequestType::kMassCancel);
  EXPECT_EQ(gateway->counters().disconnect_mass_cancels.get(), 2u);
}

TEST_F(Fixture, SilentSessionTimesOut) {
  Client c = connect();
  logon(c, 1, kKey1, 100);  // 100 ms heartbeats: closed after 300 ms of silence
  ASSERT_TRUE(next_of(c, np::MsgType::kLogonAck));
  bool heartbeat = false;
  for (;;) {
    const auto m = next(c);
    ASSERT_TRUE(m) << "no logout";
    if (m->header.type == np::MsgType::kServerHeartbeat) heartbeat = true;
    if (m->header.type == np::MsgType::kServerLogout) {
      EXPECT_EQ(m->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kHeartbeatTimeout));
      break;
    }
  }
  EXPECT_TRUE(heartbeat);
  EXPECT_TRUE(closed_by_exchange(c));
}

TEST_F(Fixture, NoLogonInTimeCloses) {
  Client c = connect();  // logon_timeout_ms = 300
  const auto m = next_of(c, np::MsgType::kServerLogout);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kLogonTimeout));
}

// Issue 30: a logged-on client trickling a message (each byte counts as heard,
// so the silence rule never fires) is closed once its message has been
// incomplete for partial_message_timeout_ms, and not before.
TEST_F(Fixture, AMessageLeftIncompleteTooLongCloses) {
  nx::ExchangeConfig c = make_config();
  c.server.partial_message_timeout_ms = 500;
  start(std::move(c));
  Client a = connect();
  logged_on(a, 1, kKey1);
  np::NewOrder m = new_order(1);
  m.header.seq = a.seq++;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&m);
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  while (sent < 8 && !a.eof) {  // one byte every 100 ms: 5 of its 40 before the timeout, 8 in all
    send_bytes(a, bytes + sent++, 1);
    pump_for(std::chrono::milliseconds(100));
    read_some(a);
  }
  const auto logout = next_of(a, np::MsgType::kServerLogout);
  ASSERT_TRUE(logout);
  EXPECT_EQ(logout->as<np::ServerLogout>().reason,
            static_cast<std::uint16_t>(np::LogoutReason::kPartialMessageTimeout));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_TRUE(closed_by_exchange(a));
  EXPECT_EQ(gateway->counters().logouts[static_cast<std::size_t>(np::LogoutReason::kPartialMessageTimeout)].get(), 1u);
  EXPECT_EQ(gateway->counters().requests_forwarded.get(), 0u);  // the begun order was never taken
}

// The timeout is per message: a client whose input always ends inside a
// message (each piece completes the one before and begins the next) for far
// longer than the timeout is never closed, as long as each message completes in time.
TEST_F(Fixture, InputEndingMidMessageIsNotTimedOutWhileEachMessageCompletes) {
  nx::ExchangeConfig c = make_config();
  c.server.partial_message_timeout_ms = 500;
  start(std::move(c));
  Client a = connect();
  logged_on(a, 1, kKey1);
  std::vector<std::uint8_t> stream;
  constexpr int kOrders = 10;
  for (int i = 0; i < kOrders; ++i) {
    np::NewOrder m = new_order(static_cast<std::uint64_t>(i + 1));
    m.header.seq = a.seq++;
    const auto* b = reinterpret_cast<const std::uint8_t*>(&m);
    stream.insert(stream.end(), b, b + sizeof m);
  }
  // Pieces of one message's length, starting mid-message: 100 ms apart, 1 s in
  // all (twice the timeout; each message complete within a fifth of it).
  const std::size_t half = sizeof(np::NewOrder) / 2;
  send_bytes(a, stream.data(), half);
  for (std::size_t at = half; at < stream.size(); at += sizeof(np::NewOrder)) {
    pump_for(std::chrono::milliseconds(100));
    send_bytes(a, stream.data() + at, std::min(sizeof(np::NewOrder), stream.size() - at));
  }
  pump_for(std::chrono::milliseconds(50));
  read_some(a);
  EXPECT_FALSE(a.eof);
  EXPECT_EQ(gateway->counters().logouts[static_cast<std::size_t>(np::LogoutReason::kPartialMessageTimeout)].get(), 0u);
  EXPECT_EQ(gateway->counters().requests_forwarded.get(), static_cast<std::uint64_t>(kOrders));
}

TEST_F(Fixture, MaxSessionsIsEnforcedAtLogon) {
  start(make_config(1));
  Client a = connect();
  logged_on(a, 1, kKey1);
  Client b = connect();
  logon(b, 2, kKey2);
  const auto m = next_of(b, np::MsgType::kLogonReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::LogonReject>().reason, static_cast<std::uint16_t>(np::LogonRejectReason::kMaxSessions));
}

TEST_F(Fixture, ClientLogoutIsAnsweredAndShutdownLogsEveryoneOut) {
  Client a = connect();
  logged_on(a, 1, kKey1);
  send(a, np::make_message<np::Logout>(0));
  const auto lo = next_of(a, np::MsgType::kServerLogout);
  ASSERT_TRUE(lo);
  EXPECT_EQ(lo->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kClientRequest));
  EXPECT_TRUE(closed_by_exchange(a));
  a.stream.close();

  Client b = connect();
  logged_on(b, 2, kKey2);
  gateway->request_shutdown();
  const auto sd = next_of(b, np::MsgType::kServerLogout);
  ASSERT_TRUE(sd);
  EXPECT_EQ(sd->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kServerShutdown));
  EXPECT_TRUE(closed_by_exchange(b));
  b.stream.close();
  EXPECT_TRUE(pump([&] { return gateway->open_connections() == 0; }));
}

TEST_F(Fixture, ServerSequenceNumbersCountEveryMessage) {
  Client c = connect();
  logged_on(c, 1, kKey1);  // LogonAck = seq 1
  auto m = new_order(1);
  m.header.seq = 9;
  send_bytes(c, &m, sizeof m);
  const auto r = next(c);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header.seq, 2u);
}

}  // namespace
