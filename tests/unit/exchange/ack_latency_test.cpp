// The gateway's ack latency (sessions/ack_latency.hpp: an order message's
// read to its first answer) with the real engine behind the gateway, in both
// layouts: each message's receive TSC comes back with its first answer
// (pipeline.hpp FirstAnswerTsc) -- as an argument of the gateway's
// on_report in compact mode, in the report's ring slot in dedicated mode --
// so every message the engine answers counts exactly once, and a report to
// another client (a maker's fill) or to an earlier connection counts for
// nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "exchange/engine_agent.hpp"
#include "exchange/pipeline.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "unit/exchange/gateway_fixture.hpp"

namespace {

using namespace gateway_fixture;

// The market data the engine emits goes nowhere: these tests look at the answers.
struct NullPublisher {
  void on_md(const ne::MdEvent&) noexcept {}
  void flush() noexcept {}
};

TEST(FirstAnswerTsc, GoesWithTheFirstReportToTheRequestsOwnClientOnly) {
  nx::FirstAnswerTsc first;
  const std::uint64_t from_client_2 = nx::make_event_id(2, 1, 5);
  first.begin_request(1234);
  EXPECT_EQ(first.take(report(ne::ReportType::kFill, 1, 8, from_client_2)), 0u) << "a maker's fill: not its answer";
  EXPECT_EQ(first.take(report(ne::ReportType::kAccepted, 2, 9, from_client_2)), 1234u);
  EXPECT_EQ(first.take(report(ne::ReportType::kFill, 2, 9, from_client_2)), 0u) << "only the first answer";
  first.begin_request(0);  // the journal replay's requests, and any request without one
  EXPECT_EQ(first.take(report(ne::ReportType::kAccepted, 2, 9, from_client_2)), 0u);
  first.begin_request(99);
  EXPECT_EQ(first.take(report(ne::ReportType::kAccepted, 2, 9, from_client_2)), 99u) << "each request its own";
}

TEST(FirstAnswerTsc, RidesInTheReportsPaddingWithoutTouchingAField) {
  ne::ExecReport r = report(ne::ReportType::kAccepted, 2, 9, nx::make_event_id(2, 1, 5));
  const ne::ExecReport before = r;
  nx::carry_received_tsc(r, 0x0123456789abcdefull);
  EXPECT_EQ(nx::carried_received_tsc(r), 0x0123456789abcdefull);
  EXPECT_EQ(r.seq, before.seq);
  EXPECT_EQ(r.event_id, before.event_id);
  EXPECT_EQ(r.request_type, before.request_type);
  EXPECT_EQ(r.cancel_reason, before.cancel_reason);
}

// Two clients on the gateway, the engine behind it on the test thread.
class AckLatency : public Fixture {
 protected:
  np::NewOrder order(std::uint64_t coid, std::uint8_t side) {
    np::NewOrder m = new_order(coid, 100, 10);
    m.side = side;
    return m;
  }

  // a rests a sell, b's buy trades with it (b: Accepted and its fill; a: its
  // maker fill), a cancels an order it does not have (CancelReject): three
  // order messages, three first answers.
  void trade_and_reject() {
    Client a = connect();
    logged_on(a, 1, kKey1);
    Client b = connect();
    logged_on(b, 2, kKey2);
    send(a, order(1, 2));
    auto m = next_of(a, np::MsgType::kExecutionReport);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->as<np::ExecutionReport>().exec_type, np::ExecType::kAccepted);
    send(b, order(1, 1));
    for (const np::ExecType want : {np::ExecType::kAccepted, np::ExecType::kFill}) {
      m = next_of(b, np::MsgType::kExecutionReport);
      ASSERT_TRUE(m);
      EXPECT_EQ(m->as<np::ExecutionReport>().exec_type, want);
    }
    m = next_of(a, np::MsgType::kExecutionReport);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->as<np::ExecutionReport>().exec_type, np::ExecType::kFill);
    EXPECT_EQ(m->as<np::ExecutionReport>().ref_seq, 0u) << "b's message caused it";
    auto cancel = np::make_message<np::CancelOrder>(0);
    cancel.client_order_id = 99;
    send(a, cancel);
    ASSERT_TRUE(next_of(a, np::MsgType::kCancelReject));

    EXPECT_EQ(gateway->ack_latency().count(), 3u);
    EXPECT_EQ(gateway->ack_ready_latency().count(), 3u);
    // Each from its message's own receive TSC: a start lost or made up
    // would show as nothing or as an age of the machine's uptime.
    EXPECT_GT(gateway->ack_latency().max(), 0u);
    EXPECT_LT(gateway->ack_latency().max(), 2'000'000'000u);
    EXPECT_LE(gateway->ack_ready_latency().max(), gateway->ack_latency().max());
  }
};

TEST_F(AckLatency, CompactModeCountsEachMessagesFirstAnswerOnce) {
  NullPublisher publisher;
  nx::DirectSink<nx::OrderGateway, NullPublisher> sink{gateway.get(), &publisher};
  nx::EngineAgent<nx::DirectSink<nx::OrderGateway, NullPublisher>> engine(config.engine, config.controls(), *ring,
                                                                          sink);
  behind = [&] { engine.do_work(); };
  trade_and_reject();
}

TEST_F(AckLatency, DedicatedModeCarriesTheStartThroughTheReportRing) {
  auto reports = std::make_unique<nx::ReportRing>();
  auto market_data = std::make_unique<nx::MdRing>();
  nx::RingSink sink(*reports, *market_data, false);
  nx::EngineAgent<nx::RingSink> engine(config.engine, config.controls(), *ring, sink);
  nx::ReportDrainer<nx::OrderGateway> drainer(*reports, *gateway);
  behind = [&] {
    engine.do_work();
    market_data->drain([](const ne::MdEvent&) {});  // a full ring would hold the engine
    drainer.do_work();
    gateway->flush_answers();
  };
  trade_and_reject();
}

TEST_F(AckLatency, AnAnswerToAnEarlierConnectionsMessageEndsNothing) {
  Client a = connect();
  logged_on(a, 1, kKey1);
  send(a, new_order(42));
  ASSERT_TRUE(pump([&] { return !ring->empty(); }));
  const nx::InboundRequest rq = drain_ring().at(0);
  ASSERT_NE(rq.received_tsc, 0u);
  // The same client and seq on a later connection of the slot (another generation): ref_seq 0.
  const std::uint64_t stale = nx::make_event_id(
      1, static_cast<std::uint16_t>(nx::event_generation(rq.request.event_id) + 1), nx::event_seq(rq.request.event_id));
  gateway->on_report(report(ne::ReportType::kAccepted, 1, 42, stale), rq.received_tsc);
  auto m = next_of(a, np::MsgType::kExecutionReport);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::ExecutionReport>().ref_seq, 0u);
  EXPECT_EQ(gateway->ack_latency().count(), 0u);
  // Its own connection's: counted.
  gateway->on_report(report(ne::ReportType::kAccepted, 1, 42, rq.request.event_id), rq.received_tsc);
  m = next_of(a, np::MsgType::kExecutionReport);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::ExecutionReport>().ref_seq, 2u);
  EXPECT_EQ(gateway->ack_latency().count(), 1u);
}

}  // namespace
