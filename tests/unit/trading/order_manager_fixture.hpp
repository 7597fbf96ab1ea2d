// The fixture the order manager tests share (order_manager_test.cpp: an
// order's life through the exchange's answers; order_manager_session_test.cpp:
// the session's events): a recording sender stands in for the gateway, the
// tests play the exchange's answers (PROTOCOL.md §1.3).
#pragma once

#include <gtest/gtest.h>

#include "support/order_replies.hpp"
#include "trading/order_manager.hpp"

namespace nt = nanotick::trading;
namespace np = nanotick::proto;
namespace ne = nanotick::market;

namespace order_manager_fixture {

using nanotick::test::accepted;
using nanotick::test::cancelled;
using nanotick::test::fill;
using nanotick::test::limit;
using nanotick::test::modified;
using nanotick::test::order_reject;
using nanotick::test::RecordingSender;
using nanotick::test::report;
using nanotick::test::session_reject;
using Sent = nanotick::test::SentMessage;
using Manager = nt::OrderManager<RecordingSender>;

class OrderManagerTest : public ::testing::Test {
 protected:
  explicit OrderManagerTest(nt::OrderManagerConfig c = {64, 2, 1}) : om(c, sender) {}

  // A live order: submitted and accepted.
  const nt::Order& live(nt::Side side, nt::Price price, nt::Qty qty, nt::InstrumentId instrument = 0) {
    const auto s = om.submit(limit(side, price, qty, instrument));
    EXPECT_TRUE(s.ok()) << nt::to_string(s.status);
    const nt::Order& o = *om.find(s.id);
    EXPECT_EQ(om.on_execution_report(accepted(o, s.seq)).type, nt::OrderEventType::kAccepted);
    EXPECT_EQ(o.state, nt::OrderState::kLive);
    return o;
  }

  RecordingSender sender;
  Manager om;
};

}  // namespace order_manager_fixture
