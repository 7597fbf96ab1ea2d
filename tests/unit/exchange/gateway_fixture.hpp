// The order gateway's test fixture (order_gateway_test.cpp,
// order_gateway_lifecycle_test.cpp, report_replay_test.cpp): a gateway on
// loopback TCP with two configured clients, and raw clients that speak the
// order-entry protocol to it. The test thread drives both the gateway
// (do_work) and its clients.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "access/credential.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "net/socket_address.hpp"
#include "proto/order_entry_codec.hpp"

namespace nx = nanotick::exchange;
namespace np = nanotick::proto;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;

namespace gateway_fixture {

const std::string kKey1 = "test-key-client-one-01";
const std::string kKey2 = "test-key-client-two-02";

inline nx::ExchangeConfig make_config(std::uint32_t max_sessions = 8, std::uint32_t burst = 1000) {
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

  // Runs the gateway (and `behind`, if set) until `done()` or 2 s.
  template <typename F>
  bool pump(F&& done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done()) {
      work();
      if (std::chrono::steady_clock::now() > end) return false;
    }
    return true;
  }
  void pump_for(std::chrono::milliseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) work();
  }
  void work() {
    gateway->do_work();
    if (behind) behind();
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
  // What runs behind the gateway on the test thread (the engine, for tests
  // that need real reports); empty: the test takes the requests from `ring`.
  std::function<void()> behind;
};

inline ne::ExecReport report(ne::ReportType type, ne::ClientId client, ne::ClientOrderId coid, std::uint64_t event_id) {
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

}  // namespace gateway_fixture
