// The client order-entry session over real loopback TCP against a scripted
// fake exchange, for what the real one never does: silence, sequence gaps
// and repeats, garbage, a report before the logon, a SessionReject of our
// numbering, no logon answer, a non-fatal logon reject, and a reader too
// slow for our writes (partial writes); then the reconnect back-off and the
// config's checks.
#include "client/order_entry_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/tcp.hpp"
#include "proto/order_entry_codec.hpp"
#include "unit/client/order_entry_client_fixture.hpp"

namespace {

using namespace order_entry_client_fixture;

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
    const auto r = gateway->send_new_order(sent + 1, 0, nt::Side::kBuy, nt::OrderType::kLimit,
                                           nanotick::market::StpMode::kNone, 100, 1);
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
