// The order gateway over real loopback TCP (docs/PROTOCOL.md §1.4-1.6): logon
// and its rejects, sequence numbers, every malformed-message answer, rate
// limit, report routing with ref_seq, cancel on disconnect, heartbeats,
// shutdown -- and that one client's trouble never disturbs another session.
// The test thread drives both the gateway (do_work) and its clients.
#include "exchange/sessions/order_gateway.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/socket_address.hpp"
#include "proto/order_entry_codec.hpp"
#include "access/credential.hpp"

namespace nx = nanotick::exchange;
namespace np = nanotick::proto;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;

namespace {

const std::string kKey1 = "test-key-client-one-01";
const std::string kKey2 = "test-key-client-two-02";

nx::ExchangeConfig make_config(std::uint32_t max_sessions = 8, std::uint32_t burst = 1000) {
  std::string toml =
      "[server]\norder_entry = \"127.0.0.1:0\"\nheartbeat_ms = 1000\nmin_heartbeat_ms = 100\n"
      "logon_timeout_ms = 300\nmax_sessions = " +
      std::to_string(max_sessions) +
      "\n[market_data]\ninterface = \"127.0.0.1\"\nincremental = \"239.255.42.1:9201\"\n"
      "snapshot = \"239.255.42.2:9202\"\n[journal]\ndir = \"run/journal\"\n"
      "[[instruments]]\nsymbol = \"A\"\ntick_size = 1\nmin_price = 1\nmax_price = 1000000\n"
      "max_order_qty = 1000000\n";
  toml += "[[clients]]\nid = 1\ncredential = \"" + nanotick::access::CredentialHash::make(kKey1).to_string() +
          "\"\nrate_burst = " + std::to_string(burst) + "\nrate_limit_per_s = 1\n";
  toml += "[[clients]]\nid = 2\ncredential = \"" + nanotick::access::CredentialHash::make(kKey2).to_string() +
          "\"\ncancel_on_disconnect = true\n";
  return nx::parse_exchange_config(toml, "test.toml");
}

// A decoded message from the exchange.
struct Received {
  np::Header header{};
  std::vector<std::uint8_t> bytes;
  template <typename M>
  M as() const {
    return np::read_message<M>(bytes.data());
  }
};

class Fixture : public ::testing::Test {
 protected:
  void start(nx::ExchangeConfig c) {
    config = std::move(c);
    ring = std::make_unique<nx::RequestRing>();
    gateway = std::make_unique<nx::OrderGateway>(config, *ring, 1000);
  }
  void SetUp() override { start(make_config()); }

  // Runs the gateway until `done()` or 2 s.
  template <typename F>
  bool pump(F&& done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done()) {
      gateway->do_work();
      if (std::chrono::steady_clock::now() > end) return false;
    }
    return true;
  }
  void pump_for(std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) gateway->do_work();
  }

  struct Client {
    nn::TcpStream stream;
    std::vector<std::uint8_t> in;
    std::uint32_t seq = 1;
    bool eof = false;
  };
  Client connect() {
    Client c;
    c.stream = nn::tcp_connect(gateway->listen_address(), std::chrono::milliseconds(1000));
    return c;
  }
  void send_bytes(Client& c, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    while (n > 0) {
      const auto r = c.stream.write_some({b, n});
      if (r.status == nn::IoStatus::kOk) {
        b += r.bytes;
        n -= r.bytes;
      } else {
        ASSERT_EQ(r.status, nn::IoStatus::kWouldBlock);
        gateway->do_work();
      }
    }
  }
  template <typename M>
  void send(Client& c, M m) {
    m.header.seq = c.seq++;
    send_bytes(c, &m, sizeof m);
  }
  void logon(Client& c, std::uint32_t client_id, const std::string& key, std::uint32_t hb = 0) {
    auto m = np::make_message<np::Logon>(0);
    m.client_id = client_id;
    m.heartbeat_ms = hb;
    std::memcpy(m.credential, key.data(), key.size());
    send(c, m);
  }
  np::NewOrder new_order(std::uint64_t coid, std::int64_t price = 100, std::int64_t qty = 10) {
    auto m = np::make_message<np::NewOrder>(0);
    m.client_order_id = coid;
    m.instrument = 0;
    m.side = 1;
    m.order_type = 1;
    m.price = price;
    m.qty = qty;
    return m;
  }
  // Reads what is there (non-blocking).
  void read_some(Client& c) {
    std::uint8_t buf[4096];
    for (;;) {
      const auto r = c.stream.read_some(buf);
      if (r.status == nn::IoStatus::kOk) {
        c.in.insert(c.in.end(), buf, buf + r.bytes);
        continue;
      }
      if (r.status != nn::IoStatus::kWouldBlock) c.eof = true;
      return;
    }
  }
  // Next complete message, pumping the gateway for up to 2 s.
  std::optional<Received> next(Client& c) {
    std::optional<Received> out;
    pump([&] {
      read_some(c);
      const np::Frame f = np::next_frame(c.in, np::Direction::kFromExchange);
      if (f.status == np::FrameStatus::kMessage) {
        out = Received{f.header, std::vector<std::uint8_t>(c.in.begin(), c.in.begin() + f.length)};
        c.in.erase(c.in.begin(), c.in.begin() + f.length);
        return true;
      }
      EXPECT_NE(f.status, np::FrameStatus::kFatal) << "the exchange sent a malformed message";
      EXPECT_NE(f.status, np::FrameStatus::kSkip) << "the exchange sent a malformed message";
      return c.eof && c.in.empty();
    });
    return out;
  }
  std::optional<Received> next_of(Client& c, np::MsgType t) {
    auto m = next(c);
    EXPECT_TRUE(m.has_value()) << "no message, wanted " << np::to_string(t);
    if (m) {
      EXPECT_EQ(m->header.type, t) << "got " << np::to_string(m->header.type);
    }
    return m;
  }
  bool closed_by_exchange(Client& c) {
    return pump([&] {
      read_some(c);
      return c.eof;
    });
  }
  void logged_on(Client& c, std::uint32_t id, const std::string& key) {
    logon(c, id, key);
    const auto ack = next_of(c, np::MsgType::kLogonAck);
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->as<np::LogonAck>().client_id, id);
  }
  std::vector<nx::InboundRequest> drain_ring() {
    std::vector<nx::InboundRequest> out;
    ring->drain([&](const nx::InboundRequest& r) { out.push_back(r); });
    return out;
  }
  void expect_session_reject(Client& c, np::SessionRejectReason why, std::uint32_t ref_seq, std::uint32_t expected) {
    const auto m = next_of(c, np::MsgType::kSessionReject);
    ASSERT_TRUE(m);
    const auto r = m->as<np::SessionReject>();
    EXPECT_EQ(r.reason, static_cast<std::uint16_t>(why))
        << np::to_string(static_cast<np::SessionRejectReason>(r.reason));
    EXPECT_EQ(r.ref_seq, ref_seq);
    EXPECT_EQ(r.expected_seq, expected);
  }

  nx::ExchangeConfig config;
  std::unique_ptr<nx::RequestRing> ring;
  std::unique_ptr<nx::OrderGateway> gateway;
};

ne::ExecReport report(ne::ReportType type, ne::ClientId client, ne::ClientOrderId coid, std::uint64_t event_id) {
  ne::ExecReport r{};
  r.seq = 77;
  r.type = type;
  r.client = client;
  r.client_order_id = coid;
  r.event_id = event_id;
  r.order_id = 5;
  r.price = 100;
  r.order_qty = 10;
  r.leaves_qty = 10;
  r.side = ne::Side::kBuy;
  r.order_type = ne::OrderType::kLimit;
  return r;
}

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
  gateway->on_report(report(ne::ReportType::kAccepted, 1, 42, ev));
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
  gateway->on_report(fill);
  m = next_of(b, np::MsgType::kExecutionReport);
  ASSERT_TRUE(m);
  er = m->as<np::ExecutionReport>();
  EXPECT_EQ(er.exec_type, np::ExecType::kFill);
  EXPECT_EQ(er.ref_seq, 0u);
  EXPECT_EQ(er.is_maker, 1);
  // Cancel and modify rejects are their own messages.
  auto cr = report(ne::ReportType::kCancelRejected, 1, 43, ev);
  cr.reason = ne::RejectReason::kUnknownOrder;
  gateway->on_report(cr);
  m = next_of(a, np::MsgType::kCancelReject);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->as<np::OrderReject>().reason, 201);
  // A report for a client without a session is dropped and counted.
  gateway->on_report(report(ne::ReportType::kAccepted, 3, 1, 0));
  EXPECT_EQ(gateway->counters().reports_dropped.get(), 1u);
}

TEST_F(Fixture, CancelOnDisconnectQueuesTheEnginesMassCancel) {
  Client c = connect();
  logged_on(c, 2, kKey2);  // client 2: cancel_on_disconnect = true
  send(c, new_order(11));
  send(c, new_order(12));
  ASSERT_TRUE(pump([&] { return ring->size() == 2; }));
  (void)drain_ring();
  gateway->on_report(report(ne::ReportType::kAccepted, 2, 11, 0));
  gateway->on_report(report(ne::ReportType::kAccepted, 2, 12, 0));
  auto done = report(ne::ReportType::kCancelled, 2, 12, 0);
  done.leaves_qty = 0;
  gateway->on_report(done);  // 12 is gone already; 11 may rest
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
  gateway->on_report(mass);
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
  gateway->on_report(filled);
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
