// The fixture the RiskManager tests share (risk_manager_test.cpp: each
// limit, validation, the order of the checks; risk_manager_exposure_test.cpp:
// the working exposure through the order manager's events): limits wide
// enough that only the one a test is about binds, a risk manager over a
// position keeper and an order manager driven with a recording sender and
// the exchange's answers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "support/order_replies.hpp"
#include "trading/position_keeper.hpp"
#include "trading/risk_manager.hpp"

namespace nt = nanotick::trading;
namespace np = nanotick::proto;
namespace ne = nanotick::market;

namespace risk_manager_fixture {

inline constexpr nt::Side kBuy = nt::Side::kBuy;
inline constexpr nt::Side kSell = nt::Side::kSell;
inline constexpr nt::RiskResult kAllowed = nt::RiskResult::kAllowed;
inline constexpr double kFair = 100.0;
inline constexpr nt::TimeNs kT0 = 1'000'000'000;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Limits wide enough that only the one a test is about can bind.
inline nt::InstrumentRiskLimits wide() {
  nt::InstrumentRiskLimits l;
  l.max_order_qty = 1'000;
  l.max_position = 1'000'000;
  l.max_open_orders = 1'000;
  l.max_open_notional = 1'000'000'000;
  l.max_loss = 1'000'000;
  l.price_band = 50;
  return l;
}

inline nt::GlobalRiskLimits wide_global() {
  nt::GlobalRiskLimits g;
  g.max_open_orders = 10'000;
  g.max_open_notional = 1'000'000'000'000;
  g.max_loss = 100'000'000;
  g.orders_per_second = 1'000'000;
  g.burst = 100'000;
  return g;
}

// The risk manager as the trade engine uses it: it checks against the
// working exposure of an order manager, which the tests drive with a
// recording sender and the exchange's answers.
struct Fixture {
  explicit Fixture(const nt::InstrumentRiskLimits& l = wide(), const nt::GlobalRiskLimits& g = wide_global(),
                   std::uint32_t instruments = 2)
      : keeper(instruments),
        risk(std::vector<nt::InstrumentRiskLimits>(instruments, l), g, kT0),
        orders({4096, instruments, 1}, sender) {}

  nt::PositionKeeper keeper;
  nt::RiskManager risk;
  nanotick::test::RecordingSender sender;
  nt::OrderManager<nanotick::test::RecordingSender> orders;

  const nt::WorkingExposure& working() const { return orders.exposure(); }
  const nt::Order& find(nt::ClientOrderId id) const { return *orders.find(id); }

  // A request (client order id 0: the order manager assigns it).
  static nt::OrderRequest order(nt::Side side, nt::Price price, nt::Qty qty, nt::InstrumentId inst = 0) {
    return nanotick::test::limit(side, price, qty, inst);
  }
  nt::RiskResult check(const nt::OrderRequest& r, nt::TimeNs now = kT0, double fair = kFair) {
    return risk.check_new(r, working(), keeper, fair, now);
  }
  nt::RiskResult check_modify(nt::ClientOrderId id, nt::Price price, nt::Qty qty, nt::TimeNs now = kT0,
                              double fair = kFair) {
    return risk.check_modify(id, price, qty, working(), keeper, fair, now);
  }
  // Checks and, if allowed, sends (the order manager counts it from now on,
  // `r` gets its id) and takes the throttle token; returns the check's result.
  nt::RiskResult send(nt::OrderRequest& r, nt::TimeNs now = kT0, double fair = kFair) {
    const nt::RiskResult res = check(r, now, fair);
    if (res == kAllowed) {
      nt::OrderRequest rq = r;
      rq.client_order_id = 0;
      const nt::Submitted s = orders.submit(rq);
      EXPECT_TRUE(s.ok()) << nt::to_string(s.status);
      r.client_order_id = s.id;
      risk.on_sent(now);
    }
    return res;
  }
  nt::RiskResult send(nt::OrderRequest&& r, nt::TimeNs now = kT0, double fair = kFair) { return send(r, now, fair); }
  // A modify the check allowed goes out: returns its session seq.
  std::uint32_t send_modify(nt::ClientOrderId id, nt::Price price, nt::Qty qty, nt::TimeNs now = kT0) {
    const nt::Submitted s = orders.modify(id, price, qty);
    EXPECT_TRUE(s.ok()) << nt::to_string(s.status);
    risk.on_sent(now);
    return s.seq;
  }

  // The exchange's answers.
  void accept(nt::ClientOrderId id) {
    (void)orders.on_execution_report(nanotick::test::accepted(find(id), find(id).new_seq));
  }
  void reject(nt::ClientOrderId id) {
    (void)orders.on_execution_report(nanotick::test::report(np::ExecType::kRejected, find(id), find(id).new_seq));
  }
  void filled(nt::ClientOrderId id, nt::Qty qty) {
    (void)orders.on_execution_report(nanotick::test::fill(find(id), qty));
  }
  // Our cancel, answered.
  void cancel(nt::ClientOrderId id) {
    const nt::Submitted c = orders.cancel(id);
    ASSERT_TRUE(c.ok()) << nt::to_string(c.status);
    (void)orders.on_execution_report(nanotick::test::cancelled(find(id), c.seq));
  }
  void modified(nt::ClientOrderId id) {
    const nt::Order& o = find(id);
    (void)orders.on_execution_report(nanotick::test::modified(o, o.modify_seq, o.pending_price, o.pending_qty));
  }
  void modify_rejected(nt::ClientOrderId id, ne::RejectReason why = ne::RejectReason::kPriceOutOfBand) {
    const nt::Order& o = find(id);
    (void)orders.on_modify_reject(nanotick::test::order_reject(np::MsgType::kModifyReject, o, o.modify_seq, why));
  }

  // A fill booked in the positions (the risk manager reads position and PnL there).
  void fill(nt::InstrumentId inst, nt::Side side, nt::Price price, nt::Qty qty) {
    nt::FillEvent f;
    f.instrument = inst;
    f.side = side;
    f.price = price;
    f.qty = qty;
    ASSERT_EQ(keeper.on_fill(f), nt::FillResult::kOk);
  }
};

}  // namespace risk_manager_fixture
