// The trader side the OrderEntryClient tests share
// (order_entry_client_test.cpp against the real exchange,
// order_entry_client_protocol_test.cpp against a scripted one): the session
// and an order manager wired through one handler, as the trader wires them.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/order_entry_client.hpp"
#include "net/socket_address.hpp"
#include "trading/order_manager.hpp"

namespace nt = nanotick::client;
namespace ntr = nanotick::trading;  // the order manager the session feeds, as the trader wires it
namespace np = nanotick::proto;
namespace nn = nanotick::net;

namespace order_entry_client_fixture {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline const std::string kKey = "trader-test-key-0001";

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

inline nt::OrderEntryClientConfig client_config(const nn::SocketAddress& exchange, std::uint32_t client_id = 1,
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

inline ntr::OrderRequest limit(nt::Side side, nt::Price price, nt::Qty qty) {
  ntr::OrderRequest rq;
  rq.side = side;
  rq.type = nt::OrderType::kLimit;
  rq.price = price;
  rq.qty = qty;
  return rq;
}

}  // namespace order_entry_client_fixture
