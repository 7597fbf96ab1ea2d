// The order gateway over real loopback TCP (docs/PROTOCOL.md §1.4-1.6): logon
// and its rejects, sequence numbers, every malformed-message answer, rate
// limit, report routing with ref_seq -- and that one client's trouble never
// disturbs another session. Cancel on disconnect, timeouts and shutdown:
// order_gateway_lifecycle_test.cpp.
#include "exchange/sessions/order_gateway.hpp"

#include "unit/exchange/gateway_fixture.hpp"

namespace {

using namespace gateway_fixture;

TEST_F(Fixture, LogonThenOrderReachesTheSequencer) {
  Client c = connect();
  logged_on(c, 1, kKey1);
  send(c, new_order(42, 101, 7));
  ASSERT_TRUE(pump([&] { return !ring->empty(); }));
  const auto got = drain_ring();
  ASSERT_EQ(got.size(), 1u);
  const ne::Request& rq = got[0].request;
  EXPECT_EQ(rq.type, ne::RequestType::kNew);
  EXPECT_EQ(rq.client, 1u);
  EXPECT_EQ(rq.client_order_id, 42u);
  EXPECT_EQ(rq.price, 101);
  EXPECT_EQ(rq.qty, 7);
  EXPECT_EQ(rq.side, ne::Side::kBuy);
  EXPECT_EQ(nx::event_client(rq.event_id), 1u);
  EXPECT_EQ(nx::event_seq(rq.event_id), 2u);  // the NewOrder was the session's second message
}

TEST_F(Fixture, WrongCredentialIsRejectedAndClosed) {
  Client c = connect();
  logon(c, 1, "not-the-right-key-000");
  const auto m = next_of(c, np::MsgType::kLogonReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::LogonReject>().reason, static_cast<std::uint16_t>(np::LogonRejectReason::kBadCredentials));
  EXPECT_TRUE(closed_by_exchange(c));
  EXPECT_EQ(gateway->counters().logon_rejects[1].get(), 1u);
}

TEST_F(Fixture, UnknownClientIsRejected) {
  Client c = connect();
  logon(c, 9, kKey1);
  const auto m = next_of(c, np::MsgType::kLogonReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::LogonReject>().reason, static_cast<std::uint16_t>(np::LogonRejectReason::kUnknownClient));
}

TEST_F(Fixture, MessageBeforeLogonIsRejectedAndClosed) {
  Client c = connect();
  send(c, new_order(1));
  expect_session_reject(c, np::SessionRejectReason::kNotLoggedOn, 1, 1);
  const auto lo = next_of(c, np::MsgType::kServerLogout);
  ASSERT_TRUE(lo);
  EXPECT_EQ(lo->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kNotLoggedOn));
  EXPECT_TRUE(closed_by_exchange(c));
  EXPECT_TRUE(ring->empty());
}

TEST_F(Fixture, SecondLogonForALiveClientIsRejectedFirstKeepsWorking) {
  Client a = connect();
  logged_on(a, 1, kKey1);
  Client b = connect();
  logon(b, 1, kKey1);
  const auto m = next_of(b, np::MsgType::kLogonReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::LogonReject>().reason, static_cast<std::uint16_t>(np::LogonRejectReason::kAlreadyLoggedOn));
  send(a, new_order(1));
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
}

TEST_F(Fixture, SequenceGapAndRepeatAreRejectedNotProcessed) {
  Client c = connect();
  logged_on(c, 1, kKey1);  // seq 1
  auto m = new_order(1);
  m.header.seq = 5;  // expected 2
  send_bytes(c, &m, sizeof m);
  expect_session_reject(c, np::SessionRejectReason::kSeqGap, 5, 2);
  m.header.seq = 1;
  send_bytes(c, &m, sizeof m);
  expect_session_reject(c, np::SessionRejectReason::kSeqRepeat, 1, 2);
  EXPECT_TRUE(ring->empty());
  c.seq = 2;
  send(c, new_order(1));  // the right seq goes through
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
}

TEST_F(Fixture, UnknownTypeAndWrongVersionAreSkippedSessionContinues) {
  Client c = connect();
  logged_on(c, 1, kKey1);
  auto m = new_order(1);
  m.header.seq = c.seq++;
  m.header.type = static_cast<np::MsgType>(77);
  send_bytes(c, &m, sizeof m);
  expect_session_reject(c, np::SessionRejectReason::kUnknownType, 2, 3);
  m = new_order(1);
  m.header.seq = c.seq++;
  m.header.version = 9;
  send_bytes(c, &m, sizeof m);
  expect_session_reject(c, np::SessionRejectReason::kUnsupportedVersion, 3, 4);
  auto wrong_len = np::make_message<np::Logon>(c.seq++);  // 48 bytes claiming to be a NewOrder
  wrong_len.header.type = np::MsgType::kNewOrder;
  send_bytes(c, &wrong_len, sizeof wrong_len);
  expect_session_reject(c, np::SessionRejectReason::kBadLength, 4, 5);
  send(c, new_order(1));  // seq 5: the rejected ones consumed theirs
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
  EXPECT_EQ(nx::event_seq(drain_ring().at(0).request.event_id), 5u);
}

TEST_F(Fixture, BadLengthIsFatalOthersUnaffected) {
  Client good = connect();
  logged_on(good, 2, kKey2);
  Client bad = connect();
  logged_on(bad, 1, kKey1);
  const std::uint8_t garbage[8] = {3, 0, 1, 1, 2, 0, 0, 0};  // length 3
  send_bytes(bad, garbage, sizeof garbage);
  expect_session_reject(bad, np::SessionRejectReason::kBadLength, 0, 2);
  const auto lo = next_of(bad, np::MsgType::kServerLogout);
  ASSERT_TRUE(lo);
  EXPECT_EQ(lo->as<np::ServerLogout>().reason, static_cast<std::uint16_t>(np::LogoutReason::kProtocolError));
  EXPECT_TRUE(closed_by_exchange(bad));
  send(good, new_order(3));
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
}

TEST_F(Fixture, GarbageFromAStrangerCostsOthersNothing) {
  Client good = connect();
  logged_on(good, 2, kKey2);
  Client bad = connect();
  std::vector<std::uint8_t> junk(5000);
  std::uint32_t x = 7;
  for (auto& b : junk) b = static_cast<std::uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  send_bytes(bad, junk.data(), junk.size());
  EXPECT_TRUE(closed_by_exchange(bad));
  send(good, new_order(3));
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
}

TEST_F(Fixture, MessagesSplitAcrossReadsAreReassembled) {
  Client c = connect();
  logged_on(c, 1, kKey1);
  auto m = new_order(9);
  m.header.seq = c.seq++;
  const auto* p = reinterpret_cast<const std::uint8_t*>(&m);
  for (std::size_t i = 0; i < sizeof m; ++i) {
    send_bytes(c, p + i, 1);
    pump_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(pump([&] { return !ring->empty(); }));
}

TEST_F(Fixture, DisconnectMidMessageLosesOnlyThatMessage) {
  Client c = connect();
  logged_on(c, 1, kKey1);
  send(c, new_order(1));
  auto m = new_order(2);
  m.header.seq = c.seq++;
  send_bytes(c, &m, 20);  // half of it
  c.stream.close();
  pump_for(std::chrono::milliseconds(50));
  const auto got = drain_ring();
  // The whole order went through; client 1 cancels on disconnect, so the
  // order (not yet acknowledged) is cancelled right behind it: the engine's
  // mass cancel of client 1, sequenced after it.
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].request.type, ne::RequestType::kNew);
  EXPECT_EQ(got[0].request.client_order_id, 1u);
  EXPECT_EQ(got[1].request.type, ne::RequestType::kMassCancel);
  EXPECT_EQ(got[1].request.client, 1u);
  EXPECT_EQ(gateway->open_connections(), 0u);
}

TEST_F(Fixture, RateLimitRejectsBeyondTheBurst) {
  start(make_config(8, 5));  // client 1: burst 5, 1 message/s
  Client c = connect();
  logged_on(c, 1, kKey1);
  for (int i = 0; i < 10; ++i) send(c, new_order(100 + static_cast<std::uint64_t>(i)));
  for (int i = 0; i < 5; ++i)
    expect_session_reject(c, np::SessionRejectReason::kRateLimited, 7 + static_cast<std::uint32_t>(i),
                          8 + static_cast<std::uint32_t>(i));
  EXPECT_EQ(drain_ring().size(), 5u);
}

TEST_F(Fixture, ReportsGoToTheirClientWithRefSeq) {
  Client a = connect();
  logged_on(a, 1, kKey1);
  Client b = connect();
  logged_on(b, 2, kKey2);
  send(a, new_order(42));
  ASSERT_TRUE(pump([&] { return !ring->empty(); }));
  const std::uint64_t ev = drain_ring().at(0).request.event_id;
  gateway->on_report(report(ne::ReportType::kAccepted, 1, 42, ev), 0);
  auto m = next_of(a, np::MsgType::kExecutionReport);
  ASSERT_TRUE(m);
  auto er = m->as<np::ExecutionReport>();
  EXPECT_EQ(er.exec_type, np::ExecType::kAccepted);
  EXPECT_EQ(er.client_order_id, 42u);
  EXPECT_EQ(er.exec_seq, 77u);
  EXPECT_EQ(er.ref_seq, 2u);
  // A fill of client 2's resting order caused by client 1's message: ref_seq 0.
  auto fill = report(ne::ReportType::kFill, 2, 8, ev);
  fill.is_maker = true;
  gateway->on_report(fill, 0);
  m = next_of(b, np::MsgType::kExecutionReport);
  ASSERT_TRUE(m);
  er = m->as<np::ExecutionReport>();
  EXPECT_EQ(er.exec_type, np::ExecType::kFill);
  EXPECT_EQ(er.ref_seq, 0u);
  EXPECT_EQ(er.is_maker, 1);
  // Cancel and modify rejects are their own messages.
  auto cr = report(ne::ReportType::kCancelRejected, 1, 43, ev);
  cr.reason = ne::RejectReason::kUnknownOrder;
  gateway->on_report(cr, 0);
  m = next_of(a, np::MsgType::kCancelReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::OrderReject>().reason, 201);
  // A report for a client without a session is dropped and counted.
  gateway->on_report(report(ne::ReportType::kAccepted, 3, 1, 0), 0);
  EXPECT_EQ(gateway->counters().reports_dropped.get(), 1u);
}

}  // namespace
