// The client order-entry session over real loopback TCP against the real
// exchange, in-process (its OrderGateway and matching engine driven by the
// test thread, as tests/unit/exchange/order_gateway_test.cpp does): logon,
// order -> ack -> fill -> modify -> cancel through the order manager,
// heartbeats, a session reject routed to the right order, fatal logon
// rejects, the exchange dropping us (cancel-on-disconnect, then reconcile),
// and an exchange restart met with back-off. What the real exchange never
// does: order_entry_client_protocol_test.cpp.
#include "client/order_entry_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "access/credential.hpp"
#include "exchange/engine_agent.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "support/allocation_counter.hpp"
#include "unit/client/order_entry_client_fixture.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;

namespace {

using namespace order_entry_client_fixture;

// ---- the real exchange, in-process --------------------------------------------------------

struct NullPublisher {
  void on_md(const ne::MdEvent&) noexcept {}
  void flush() noexcept {}
};

struct VenueOptions {
  std::uint16_t port = 0;
  bool cancel_on_disconnect = true;
  std::uint32_t rate_burst = 1000;
};

// The exchange's order gateway and matching engine in compact mode (reports
// go straight from the engine to the gateway), without journal or market data.
class Venue {
 public:
  explicit Venue(const VenueOptions& o)
      : config_(make_config(o)),
        ring_(std::make_unique<nx::RequestRing>()),
        gateway_(config_, *ring_, 5000),
        sink_{&gateway_, &publisher_},
        engine_(config_.engine, config_.controls(), *ring_, sink_) {}

  int do_work() { return gateway_.do_work() + engine_.do_work(); }
  nn::SocketAddress address() const { return gateway_.listen_address(); }
  nx::OrderGateway& gateway() { return gateway_; }

 private:
  static nx::ExchangeConfig make_config(const VenueOptions& o) {
    std::string toml = "[server]\norder_entry = \"127.0.0.1:" + std::to_string(o.port) +
                       "\"\nheartbeat_ms = 1000\nmin_heartbeat_ms = 20\nlogon_timeout_ms = 1000\n"
                       "[market_data]\ninterface = \"127.0.0.1\"\nincremental = \"239.255.42.1:9201\"\n"
                       "snapshot = \"239.255.42.2:9202\"\n[journal]\ndir = \"run/journal\"\n"
                       "[[instruments]]\nsymbol = \"A\"\ntick_size = 1\nmin_price = 1\nmax_price = 1000000\n"
                       "max_order_qty = 1000000\nmax_orders = 1024\nmax_levels = 256\n";
    toml += "[[clients]]\nid = 1\ncredential = \"" + nanotick::access::CredentialHash::make(kKey).to_string() + "\"\n" +
            "cancel_on_disconnect = " + (o.cancel_on_disconnect ? "true" : "false") + "\n" +
            "rate_burst = " + std::to_string(o.rate_burst) + "\nrate_limit_per_s = 1\n";
    return nx::parse_exchange_config(toml, "venue.toml");
  }

  nx::ExchangeConfig config_;
  std::unique_ptr<nx::RequestRing> ring_;
  nx::OrderGateway gateway_;
  NullPublisher publisher_;
  nx::DirectSink<nx::OrderGateway, NullPublisher> sink_;
  nx::EngineAgent<nx::DirectSink<nx::OrderGateway, NullPublisher>> engine_;
};

class VenueTest : public ::testing::Test {
 protected:
  void start(const VenueOptions& o = {}, nt::OrderEntryClientConfig c = {}) {
    venue = std::make_unique<Venue>(o);
    if (c.client_id == 0) c = client_config(venue->address());
    c.exchange = venue->address();
    gateway = std::make_unique<Gateway>(c, trader);
    orders = std::make_unique<Orders>(ntr::OrderManagerConfig{256, 1, 1}, *gateway);
    trader.orders = orders.get();
  }
  // Runs both sides until done() or `limit`.
  template <typename F>
  bool pump(F&& done, milliseconds limit = milliseconds(2000)) {
    const auto end = Clock::now() + limit;
    while (!done()) {
      if (venue) venue->do_work();
      gateway->poll();
      if (Clock::now() > end) return false;
    }
    return true;
  }
  void pump_for(milliseconds d) {
    pump([] { return false; }, d);
  }
  const ntr::Order* order(nt::ClientOrderId id) const { return orders->find(id); }
  // Only the exchange runs -- we are silent -- until it drops us for 3
  // heartbeat intervals of silence (and cancels our orders if configured).
  void exchange_drops_us() {
    const auto end = Clock::now() + milliseconds(2000);
    while (venue->gateway().counters().logouts[1].get() == 0 && Clock::now() < end) venue->do_work();
    ASSERT_EQ(venue->gateway().counters().logouts[1].get(), 1u) << "the exchange timed us out";
  }

  Trader trader;
  std::unique_ptr<Venue> venue;
  std::unique_ptr<Gateway> gateway;
  std::unique_ptr<Orders> orders;
};

TEST_F(VenueTest, LogsOnThenAnOrderIsAckedFilledModifiedAndCancelled) {
  start();
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  EXPECT_EQ(trader.logons, 1);
  EXPECT_EQ(gateway->heartbeat_ms(), 1000u);
  EXPECT_NE(gateway->session_id(), 0u);

  const auto buy = orders->submit(limit(nt::Side::kBuy, 100, 10));
  ASSERT_TRUE(buy.ok()) << ntr::to_string(buy.status);
  EXPECT_EQ(buy.seq, 2u);  // after the Logon
  ASSERT_TRUE(pump([&] { return order(buy.id)->state == ntr::OrderState::kLive; }));
  ASSERT_FALSE(trader.reports.empty());
  EXPECT_EQ(trader.reports.back().exec_type, np::ExecType::kAccepted);
  EXPECT_EQ(trader.reports.back().ref_seq, buy.seq);
  ASSERT_FALSE(trader.written.empty());
  EXPECT_EQ(trader.written.front().first, buy.seq);
  EXPECT_NE(trader.written.front().second, 0u);
  EXPECT_EQ(gateway->last_order_written_tsc(), trader.written.back().second);

  // Our own sell crosses our resting buy (no self-trade prevention): both fill.
  const auto sell = orders->submit(limit(nt::Side::kSell, 100, 4));
  ASSERT_TRUE(pump([&] { return order(sell.id) == nullptr; }));
  EXPECT_EQ(order(buy.id)->cum_qty, 4);
  EXPECT_EQ(order(buy.id)->leaves_qty, 6);
  EXPECT_EQ(orders->counters().fills.get(), 2u);

  // The price moves: a ModifyOrder, not cancel + new.
  const auto m = orders->reprice(buy.id, 99);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(pump([&] { return order(buy.id)->state == ntr::OrderState::kLive; }));
  EXPECT_EQ(order(buy.id)->price, 99);
  EXPECT_EQ(order(buy.id)->leaves_qty, 6);

  const auto c = orders->cancel(buy.id);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(pump([&] { return order(buy.id) == nullptr; }));
  EXPECT_EQ(trader.events.back().type, ntr::OrderEventType::kCancelled);
  EXPECT_EQ(orders->open_orders(), 0u);
  EXPECT_EQ(orders->counters().unmatched.get(), 0u);
  EXPECT_TRUE(trader.disconnects.empty());
}

TEST_F(VenueTest, OrderPathDoesNotAllocate) {
  start();
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  std::size_t allocations = 0;
  auto counted = [&](auto&& fn) {
    const nanotick::test::AllocationScope scope;
    fn();
    allocations += scope.count();
  };
  for (int i = 0; i < 50; ++i) {
    ntr::Submitted s;
    counted([&] { s = orders->submit(limit(nt::Side::kBuy, 100, 5)); });
    ASSERT_TRUE(s.ok());
    const auto end = Clock::now() + milliseconds(2000);
    while (order(s.id)->state != ntr::OrderState::kLive && Clock::now() < end) {
      venue->do_work();  // the exchange's own allocations are not ours to count
      counted([&] { gateway->poll(); });
    }
    counted([&] { (void)orders->cancel(s.id); });
    while (order(s.id) != nullptr && Clock::now() < end) {
      venue->do_work();
      counted([&] { gateway->poll(); });
    }
    ASSERT_EQ(order(s.id), nullptr);
  }
  EXPECT_EQ(allocations, 0u);
}

TEST_F(VenueTest, IdleSessionSendsHeartbeatsAndStaysUp) {
  auto c = client_config({});
  c.heartbeat_ms = 80;  // the exchange drops a session silent for 240 ms
  c.client_id = 1;
  start({}, c);
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  EXPECT_EQ(gateway->heartbeat_ms(), 80u);
  pump_for(milliseconds(500));
  EXPECT_TRUE(gateway->logged_on());
  EXPECT_TRUE(trader.disconnects.empty());
  EXPECT_GE(gateway->counters().heartbeats_sent.get(), 3u);
  EXPECT_GE(gateway->counters().heartbeats_received.get(), 3u);
  EXPECT_EQ(venue->gateway().counters().sessions_live.get(), 1u);
  EXPECT_EQ(venue->gateway().counters().logouts[1].get(), 0u) << "no heartbeat timeout at the exchange";
}

TEST_F(VenueTest, BadCredentialsAreFatal) {
  start({}, client_config({}, 1, "not-the-right-key-0000"));
  ASSERT_TRUE(pump([&] { return gateway->stopped(); }));
  ASSERT_EQ(trader.disconnects.size(), 1u);
  const nt::Disconnect& d = trader.disconnects[0];
  EXPECT_EQ(d.reason, nt::DisconnectReason::kLogonRejected);
  EXPECT_EQ(d.detail, static_cast<std::uint16_t>(np::LogonRejectReason::kBadCredentials));
  EXPECT_TRUE(d.fatal);
  EXPECT_FALSE(d.was_logged_on);
  pump_for(milliseconds(200));  // 10 back-off periods: no retry
  EXPECT_EQ(venue->gateway().counters().connections_accepted.get(), 1u);
  EXPECT_EQ(gateway->counters().connect_attempts.get(), 1u);
  EXPECT_EQ(orders->submit(limit(nt::Side::kBuy, 100, 1)).status, ntr::SubmitStatus::kNotLoggedOn);
}

TEST_F(VenueTest, UnknownClientIsFatal) {
  start({}, client_config({}, 9));
  ASSERT_TRUE(pump([&] { return gateway->stopped(); }));
  ASSERT_EQ(trader.disconnects.size(), 1u);
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(np::LogonRejectReason::kUnknownClient));
  EXPECT_TRUE(trader.disconnects[0].fatal);
  pump_for(milliseconds(100));
  EXPECT_EQ(gateway->counters().connect_attempts.get(), 1u);
}

TEST_F(VenueTest, SessionRejectGoesToTheOrderItNames) {
  start({0, true, 2});  // a burst of 2 orders, then 1 per second
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  const auto a = orders->submit(limit(nt::Side::kBuy, 100, 1));
  const auto b = orders->submit(limit(nt::Side::kBuy, 101, 1));
  const auto c = orders->submit(limit(nt::Side::kBuy, 102, 1));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(pump([&] { return orders->count(ntr::OrderState::kPendingNew) == 0; }));
  ASSERT_EQ(trader.session_rejects.size(), 1u);
  EXPECT_EQ(trader.session_rejects[0].ref_seq, c.seq);
  EXPECT_EQ(trader.session_rejects[0].reason, static_cast<std::uint16_t>(np::SessionRejectReason::kRateLimited));
  EXPECT_EQ(order(a.id)->state, ntr::OrderState::kLive);
  EXPECT_EQ(order(b.id)->state, ntr::OrderState::kLive);
  EXPECT_EQ(order(c.id), nullptr);
  EXPECT_EQ(orders->counters().done[static_cast<std::size_t>(ntr::DoneReason::kSessionRejected)].get(), 1u);
  EXPECT_TRUE(gateway->logged_on()) << "a rate limit is not a session error";
}

TEST_F(VenueTest, DroppedByTheExchangeReconnectsAndCancelOnDisconnectIsReconciled) {
  auto c = client_config({});
  c.heartbeat_ms = 40;
  start({0, true, 1000}, c);
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  const auto s = orders->submit(limit(nt::Side::kBuy, 100, 10));
  ASSERT_TRUE(pump([&] { return order(s.id)->state == ntr::OrderState::kLive; }));

  exchange_drops_us();
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  const nt::Disconnect d = trader.disconnects[0];
  EXPECT_EQ(d.reason, nt::DisconnectReason::kServerLogout);
  EXPECT_EQ(d.detail, static_cast<std::uint16_t>(np::LogoutReason::kHeartbeatTimeout));
  EXPECT_FALSE(d.fatal);
  EXPECT_TRUE(d.was_logged_on);
  EXPECT_EQ(d.retry_in_ms, 20u);
  EXPECT_EQ(order(s.id)->state, ntr::OrderState::kUnknown);
  EXPECT_EQ(orders->open_qty(0, nt::Side::kBuy), 10) << "unknown still counts";

  // Reconnect, log on, reconcile: CancelReject 202 (the exchange cancelled it at the disconnect).
  ASSERT_TRUE(pump([&] { return order(s.id) == nullptr; }));
  EXPECT_EQ(trader.logons, 2);
  EXPECT_EQ(venue->gateway().counters().disconnect_cancels.get(), 1u);
  EXPECT_EQ(orders->counters().reconcile_cancels.get(), 1u);
  EXPECT_EQ(orders->counters().done[static_cast<std::size_t>(ntr::DoneReason::kFinishedUnseen)].get(), 1u);
  EXPECT_EQ(orders->counters().unexpected_rejects.get(), 0u);
  EXPECT_EQ(orders->open_qty(0, nt::Side::kBuy), 0);
  EXPECT_EQ(gateway->counters().protocol_errors[static_cast<std::size_t>(nt::ProtocolError::kSeqGap)].get(), 0u)
      << "the new session numbers from 1 again";
}

TEST_F(VenueTest, WithoutCancelOnDisconnectReconcileCancelsTheSurvivors) {
  auto c = client_config({});
  c.heartbeat_ms = 40;
  start({0, false, 1000}, c);
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  const auto s = orders->submit(limit(nt::Side::kSell, 105, 3));
  ASSERT_TRUE(pump([&] { return order(s.id)->state == ntr::OrderState::kLive; }));
  exchange_drops_us();
  ASSERT_TRUE(pump([&] { return order(s.id) == nullptr; }));
  EXPECT_EQ(trader.logons, 2);
  EXPECT_EQ(trader.events.back().type, ntr::OrderEventType::kCancelled);
  EXPECT_EQ(orders->counters().done[static_cast<std::size_t>(ntr::DoneReason::kCancelled)].get(), 1u);
}

TEST_F(VenueTest, ExchangeRestartIsMetWithExponentialBackOff) {
  start();
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  const std::uint16_t port = venue->address().port;
  venue.reset();  // the exchange is gone: EOF, then refused connects
  ASSERT_TRUE(pump([&] { return trader.disconnects.size() >= 6; }, milliseconds(3000)));
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kPeerClosed);
  EXPECT_TRUE(trader.disconnects[0].was_logged_on);
  const std::vector<std::uint32_t> expected{20, 40, 80, 160, 160, 160};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(trader.disconnects[i].retry_in_ms, expected[i]) << "attempt " << i;
    if (i > 0) {
      EXPECT_EQ(trader.disconnects[i].reason, nt::DisconnectReason::kConnectFailed);
      EXPECT_FALSE(trader.disconnects[i].was_logged_on);
    }
  }
  EXPECT_EQ(gateway->counters().connect_attempts.get(), 6u) << "one attempt per back-off period";

  VenueOptions again;
  again.port = port;
  venue = std::make_unique<Venue>(again);
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  EXPECT_EQ(trader.logons, 2);
  // A successful logon resets the back-off.
  venue->gateway().request_shutdown();
  const std::size_t before = trader.disconnects.size();
  ASSERT_TRUE(pump([&] { return trader.disconnects.size() > before; }));
  EXPECT_EQ(trader.disconnects.back().reason, nt::DisconnectReason::kServerLogout);
  EXPECT_EQ(trader.disconnects.back().detail, static_cast<std::uint16_t>(np::LogoutReason::kServerShutdown));
  EXPECT_EQ(trader.disconnects.back().retry_in_ms, 20u);
}

TEST_F(VenueTest, LogoutStopsForGood) {
  start();
  ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  gateway->logout();
  EXPECT_EQ(gateway->state(), nt::SessionState::kLoggingOut);
  EXPECT_EQ(orders->submit(limit(nt::Side::kBuy, 100, 1)).status, ntr::SubmitStatus::kNotLoggedOn);
  ASSERT_TRUE(pump([&] { return gateway->stopped(); }));
  ASSERT_EQ(trader.disconnects.size(), 1u);
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kClientLogout);
  EXPECT_TRUE(trader.disconnects[0].fatal);
  EXPECT_EQ(venue->gateway().counters().logouts[0].get(), 1u) << "the exchange answered ClientRequest";
}

}  // namespace
