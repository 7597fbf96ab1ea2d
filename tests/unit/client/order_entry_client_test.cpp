// The client order-entry session over real loopback TCP. Against the real
// exchange, in-process (its OrderGateway and matching engine driven by the
// test thread, as tests/unit/exchange/order_gateway_test.cpp does): logon,
// order -> ack -> fill -> modify -> cancel through the order manager,
// heartbeats, a session reject routed to the right order, fatal logon
// rejects, the exchange dropping us (cancel-on-disconnect, then reconcile),
// and an exchange restart met with back-off. Against a scripted fake
// exchange, what the real one never does: silence, sequence gaps, garbage,
// no logon answer, and a reader too slow for our writes (partial writes).
#include "client/order_entry_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "access/credential.hpp"
#include "exchange/engine_agent.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "net/socket_address.hpp"
#include "support/allocation_counter.hpp"
#include "trading/order_manager.hpp"

namespace nt = nanotick::client;
namespace ntr = nanotick::trading;  // the order manager the session feeds, as the trader wires it
namespace nx = nanotick::exchange;
namespace np = nanotick::proto;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kKey = "trader-test-key-0001";

// ---- the trader side: gateway + order manager wired through a handler ----------------

struct Trader;
using Gateway = nt::OrderEntryClient<Trader>;
using Orders = ntr::OrderManager<Gateway>;

struct Trader {
  Orders* orders = nullptr;  // optional: the fake-exchange tests drive the gateway alone
  int logons = 0;
  std::vector<nt::Disconnect> disconnects;
  std::vector<ntr::OrderEvent> events;
  std::vector<np::ExecutionReport> reports;
  std::vector<np::SessionReject> session_rejects;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> written;

  Trader() {
    // Reserved up front: the allocation check counts inside the gateway's callbacks.
    disconnects.reserve(64);
    events.reserve(4096);
    reports.reserve(4096);
    session_rejects.reserve(64);
    written.reserve(200000);
  }
  void on_logon(const np::LogonAck&) {
    ++logons;
    if (orders != nullptr) (void)orders->reconcile(1000);
  }
  void on_execution_report(const np::ExecutionReport& r) {
    reports.push_back(r);
    if (orders != nullptr) events.push_back(orders->on_execution_report(r));
  }
  void on_cancel_reject(const np::OrderReject& r) {
    if (orders != nullptr) events.push_back(orders->on_cancel_reject(r));
  }
  void on_modify_reject(const np::OrderReject& r) {
    if (orders != nullptr) events.push_back(orders->on_modify_reject(r));
  }
  void on_session_reject(const np::SessionReject& r) {
    session_rejects.push_back(r);
    if (orders != nullptr) events.push_back(orders->on_session_reject(r));
  }
  void on_disconnected(const nt::Disconnect& d) {
    disconnects.push_back(d);
    // Orders can only have been sent on a session that was logged on.
    if (orders != nullptr && d.was_logged_on) orders->on_disconnected();
  }
  void on_order_written(std::uint32_t seq, std::uint64_t tsc) { written.emplace_back(seq, tsc); }
};

nt::OrderEntryClientConfig client_config(const nn::SocketAddress& exchange, std::uint32_t client_id = 1,
                                         const std::string& key = kKey) {
  nt::OrderEntryClientConfig c;
  c.exchange = exchange;
  c.client_id = client_id;
  c.api_key = key;
  c.heartbeat_ms = 1000;
  c.reconnect_initial_ms = 20;
  c.reconnect_max_ms = 160;
  c.logon_timeout_ms = 1000;
  return c;
}

ntr::OrderRequest limit(nt::Side side, nt::Price price, nt::Qty qty) {
  ntr::OrderRequest rq;
  rq.side = side;
  rq.type = nt::OrderType::kLimit;
  rq.price = price;
  rq.qty = qty;
  return rq;
}

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

// ---- a scripted fake exchange -------------------------------------------------------------

class FakeExchange {
 public:
  FakeExchange() : listener_(nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed)) { in_.reserve(1 << 20); }
  nn::SocketAddress address() const { return listener_.local_address(); }

  bool accept() {
    auto s = listener_.accept();
    if (!s) return false;
    conn_ = std::move(*s);
    in_.clear();
    seq_ = 1;
    ++accepted;
    eof = false;
    return true;
  }
  // Reads what is there; false at EOF.
  void read() {
    std::uint8_t buf[65536];
    for (;;) {
      const auto r = conn_.read_some(buf);
      if (r.status == nn::IoStatus::kOk) {
        in_.insert(in_.end(), buf, buf + r.bytes);
        continue;
      }
      if (r.status != nn::IoStatus::kWouldBlock) eof = true;
      return;
    }
  }
  // The next complete client message, if any.
  std::optional<np::Header> take(std::vector<std::uint8_t>* body = nullptr) {
    const np::Frame f = np::next_frame(in_, np::Direction::kFromClient);
    if (f.status != np::FrameStatus::kMessage) return std::nullopt;
    if (body != nullptr) body->assign(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
    in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
    return f.header;
  }
  template <typename M>
  void send(M m) {
    m.header.seq = seq_++;
    send_raw(&m, sizeof m);
  }
  void send_raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    while (n > 0) {
      const auto r = conn_.write_some({b, n});
      ASSERT_EQ(r.status, nn::IoStatus::kOk);
      b += r.bytes;
      n -= r.bytes;
    }
  }
  void ack_logon(std::uint32_t client_id, std::uint32_t heartbeat_ms) {
    auto ack = np::make_message<np::LogonAck>(0);
    ack.client_id = client_id;
    ack.heartbeat_ms = heartbeat_ms;
    ack.session_id = 42;
    send(ack);
  }
  void skip_seq() { ++seq_; }

  int accepted = 0;
  bool eof = false;

 private:
  nn::TcpListener listener_;
  nn::TcpStream conn_;
  std::vector<std::uint8_t> in_;
  std::uint32_t seq_ = 1;
};

class FakeExchangeTest : public ::testing::Test {
 protected:
  void start(nt::OrderEntryClientConfig c) {
    c.exchange = fake.address();
    gateway = std::make_unique<Gateway>(c, trader);
  }
  template <typename F>
  bool pump(F&& done, milliseconds limit = milliseconds(2000)) {
    const auto end = Clock::now() + limit;
    while (!done()) {
      gateway->poll();
      if (Clock::now() > end) return false;
    }
    return true;
  }
  // Connects, answers the Logon.
  void logged_on(std::uint32_t heartbeat_ms = 1000) {
    ASSERT_TRUE(pump([&] { return fake.accept(); }));
    std::optional<np::Header> h;
    ASSERT_TRUE(pump([&] {
      fake.read();
      h = fake.take();
      return h.has_value();
    }));
    EXPECT_EQ(h->type, np::MsgType::kLogon);
    EXPECT_EQ(h->seq, 1u);
    fake.ack_logon(1, heartbeat_ms);
    ASSERT_TRUE(pump([&] { return gateway->logged_on(); }));
  }

  FakeExchange fake;
  Trader trader;
  std::unique_ptr<Gateway> gateway;
};

TEST_F(FakeExchangeTest, SilenceForThreeHeartbeatsIsADeadSession) {
  start(client_config({}));
  logged_on(50);
  const auto t0 = Clock::now();
  std::vector<np::MsgType> seen;
  ASSERT_TRUE(pump([&] {
    fake.read();
    while (auto h = fake.take()) seen.push_back(h->type);
    return !trader.disconnects.empty();
  }));
  EXPECT_GE(Clock::now() - t0, milliseconds(150)) << "not before 3 intervals";
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kHeartbeatTimeout);
  EXPECT_FALSE(trader.disconnects[0].fatal);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front(), np::MsgType::kHeartbeat) << "we kept talking while it was silent";
  EXPECT_EQ(seen.back(), np::MsgType::kLogout);
  // And we come back.
  ASSERT_TRUE(pump([&] { return fake.accept(); }));
  EXPECT_EQ(fake.accepted, 2);
}

TEST_F(FakeExchangeTest, ExchangeSequenceGapIsAProtocolError) {
  start(client_config({}));
  logged_on();
  fake.skip_seq();
  fake.send(np::make_message<np::ServerHeartbeat>(0));  // seq 3 where 2 is due
  std::vector<np::MsgType> seen;
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kProtocolError);
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(nt::ProtocolError::kSeqGap));
  EXPECT_TRUE(trader.disconnects[0].was_logged_on);
  ASSERT_TRUE(pump([&] {
    fake.read();
    while (auto h = fake.take()) seen.push_back(h->type);
    return fake.eof;
  }));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), np::MsgType::kLogout) << "logged out before closing";
  ASSERT_TRUE(pump([&] { return fake.accept(); })) << "then reconnects";
}

TEST_F(FakeExchangeTest, ExchangeSequenceRepeatIsAProtocolError) {
  start(client_config({}));
  logged_on();
  auto hb = np::make_message<np::ServerHeartbeat>(1);  // seq 1 again
  fake.send_raw(&hb, sizeof hb);
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(nt::ProtocolError::kSeqRepeat));
}

TEST_F(FakeExchangeTest, MalformedMessageIsAProtocolError) {
  start(client_config({}));
  logged_on();
  const std::uint8_t garbage[8] = {3, 0, 104, 1, 2, 0, 0, 0};  // length 3
  fake.send_raw(garbage, sizeof garbage);
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kProtocolError);
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(nt::ProtocolError::kMalformed));
}

TEST_F(FakeExchangeTest, ReportBeforeLogonIsUnexpected) {
  start(client_config({}));
  ASSERT_TRUE(pump([&] { return fake.accept(); }));
  fake.send(np::make_message<np::ExecutionReport>(0));
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(nt::ProtocolError::kUnexpectedMessage));
  EXPECT_FALSE(trader.disconnects[0].was_logged_on);
  EXPECT_TRUE(trader.reports.empty());
}

TEST_F(FakeExchangeTest, SessionRejectOfOurSeqForcesANewSession) {
  start(client_config({}));
  logged_on();
  auto r = np::make_message<np::SessionReject>(0);
  r.ref_seq = 5;
  r.expected_seq = 2;
  r.reason = static_cast<std::uint16_t>(np::SessionRejectReason::kSeqGap);
  fake.send(r);
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  ASSERT_EQ(trader.session_rejects.size(), 1u) << "the handler sees it first";
  EXPECT_EQ(trader.disconnects[0].detail, static_cast<std::uint16_t>(nt::ProtocolError::kSeqRejected));
}

TEST_F(FakeExchangeTest, NoAnswerToTheLogonTimesOut) {
  auto c = client_config({});
  c.logon_timeout_ms = 60;
  start(c);
  ASSERT_TRUE(pump([&] { return fake.accept(); }));
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kLogonTimeout);
  EXPECT_FALSE(trader.disconnects[0].fatal);
}

TEST_F(FakeExchangeTest, NonFatalLogonRejectIsRetried) {
  start(client_config({}));
  ASSERT_TRUE(pump([&] { return fake.accept(); }));
  auto rj = np::make_message<np::LogonReject>(0);
  rj.reason = static_cast<std::uint16_t>(np::LogonRejectReason::kAlreadyLoggedOn);
  fake.send(rj);
  ASSERT_TRUE(pump([&] { return !trader.disconnects.empty(); }));
  EXPECT_EQ(trader.disconnects[0].reason, nt::DisconnectReason::kLogonRejected);
  EXPECT_FALSE(trader.disconnects[0].fatal);
  ASSERT_TRUE(pump([&] { return fake.accept(); }));
  EXPECT_EQ(fake.accepted, 2);
}

TEST_F(FakeExchangeTest, PartialWritesAreKeptAndCompletedInOrder) {
  auto c = client_config({});
  c.output_buffer_bytes = 64 * 1024;  // far more than the socket takes: flushes are cut short
  c.socket_send_buffer_bytes = 4096;
  start(c);
  logged_on();
  // The fake does not read: the socket fills, then our buffer.
  std::uint32_t sent = 0;
  bool full = false;
  while (!full && sent < 200000) {
    const auto r =
        gateway->send_new_order(sent + 1, 0, nt::Side::kBuy, nt::OrderType::kLimit, ne::StpMode::kNone, 100, 1);
    if (r.status == nt::SendStatus::kOutputFull) full = true;
    else {
      ASSERT_EQ(r.status, nt::SendStatus::kSent);
      ASSERT_EQ(r.seq, sent + 2);
      ++sent;
    }
  }
  ASSERT_TRUE(full) << "the kernel took " << sent << " orders without pushing back";
  EXPECT_GE(gateway->counters().output_full.get(), 1u);
  const std::uint64_t partial_before = gateway->counters().partial_writes.get();
  // Now it reads: every message arrives whole, in order, none lost or doubled.
  std::uint32_t received = 0;
  std::uint32_t next_seq = 2;
  bool ordered = true;
  std::vector<std::uint8_t> body;
  ASSERT_TRUE(pump(
      [&] {
        fake.read();
        while (auto h = fake.take(&body)) {
          if (h->type != np::MsgType::kNewOrder) continue;
          const auto m = np::read_message<np::NewOrder>(body.data());
          ordered = ordered && h->seq == next_seq && m.client_order_id == received + 1;
          ++next_seq;
          ++received;
        }
        return received == sent;
      },
      milliseconds(4000)));
  EXPECT_TRUE(ordered);
  EXPECT_GT(gateway->counters().partial_writes.get(), partial_before)
      << "no write was cut short: the test proves nothing";
  pump([&] { return trader.written.size() == sent; });
  ASSERT_EQ(trader.written.size(), sent);
  for (std::uint32_t i = 0; i < sent; ++i) {
    ASSERT_EQ(trader.written[i].first, i + 2);
    if (i > 0) {
      ASSERT_GE(trader.written[i].second, trader.written[i - 1].second);
    }
  }
}

TEST(ReconnectBackoff, DoublesFromTheInitialDelayToTheCapAndResets) {
  nt::ReconnectBackoff b(100, 5000);
  const std::vector<std::uint32_t> expected{100, 200, 400, 800, 1600, 3200, 5000, 5000};
  for (const std::uint32_t e : expected) EXPECT_EQ(b.next_delay_ms(), e);
  b.reset();
  EXPECT_EQ(b.next_delay_ms(), 100u);
  nt::ReconnectBackoff odd(300, 1000);  // a cap that is not a power-of-two multiple
  EXPECT_EQ(odd.next_delay_ms(), 300u);
  EXPECT_EQ(odd.next_delay_ms(), 600u);
  EXPECT_EQ(odd.next_delay_ms(), 1000u);
}

TEST(OrderEntryClientConfig, IsValidatedWithTheFieldNamed) {
  const auto good = client_config(nn::parse_socket_address("127.0.0.1:9100"));
  EXPECT_NO_THROW(nt::validate(good));
  auto expect_error = [](nt::OrderEntryClientConfig c, const std::string& field) {
    try {
      nt::validate(c);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto c = good;
  c.exchange.port = 0;
  expect_error(c, "exchange");
  c = good;
  c.client_id = 0;
  expect_error(c, "client_id");
  c = good;
  c.client_id = 70000;
  expect_error(c, "client_id");
  c = good;
  c.api_key = "short";
  expect_error(c, "api_key");
  c = good;
  c.api_key = std::string(33, 'k');
  expect_error(c, "api_key");
  c = good;
  c.api_key = "has a space in the key";
  expect_error(c, "api_key");
  c = good;
  c.reconnect_max_ms = 10;  // below the initial 20
  expect_error(c, "reconnect_max_ms");
  c = good;
  c.output_buffer_bytes = 100;
  expect_error(c, "output_buffer_bytes");
  c = good;
  c.connect_timeout_ms = 0;
  expect_error(c, "connect_timeout_ms");
}

}  // namespace
