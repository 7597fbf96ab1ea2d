// The working exposure the order manager keeps (the risk manager's view of
// working orders): after every step of each state transition -- new,
// accepted, partial fill, modify pending then modified or rejected, cancel,
// reject, disconnect -> unknown -> reconcile -- the aggregates equal a
// brute-force recomputation over every order the manager keeps. A random
// sequence against a small exchange model checks the same after every step,
// and that the ledger never counts less than the exchange really has open
// (the worst case it promises for modifies in flight and session losses).
#include "trading/working_exposure.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "support/order_replies.hpp"
#include "trading/order_manager.hpp"

namespace nt = nanotick::trading;
namespace np = nanotick::proto;
namespace ne = nanotick::market;
namespace tst = nanotick::test;

namespace {

using Manager = nt::OrderManager<tst::RecordingSender>;
constexpr std::uint32_t kInstruments = 2;

nt::Int128 abs128(nt::Int128 v) { return v < 0 ? -v : v; }

struct Sums {
  nt::Int128 buy = 0;
  nt::Int128 sell = 0;
  nt::Int128 notional = 0;
  std::uint32_t orders = 0;
};

// The rules of working_exposure.hpp, recomputed from every kept order.
std::vector<Sums> recompute(const Manager& om) {
  std::vector<Sums> per(kInstruments);
  for (nt::InstrumentId i = 0; i < kInstruments; ++i) {
    for (const nt::Side side : {nt::Side::kBuy, nt::Side::kSell}) {
      om.for_each_order(i, side, [&](const nt::Order& o) {
        const bool new_version_open = o.modify_seq != 0 && o.pending_qty > o.cum_qty;
        if (o.done && !(o.done_reason == nt::DoneReason::kFilled && new_version_open)) return;
        nt::Int128 qty = o.done ? 0 : o.leaves_qty;
        nt::Int128 notional = abs128(o.price) * qty;
        if (o.pending_qty != 0) {
          const nt::Int128 open = std::max<nt::Int128>(nt::Int128{o.pending_qty} - o.cum_qty, 0);
          qty = std::max(qty, open);
          notional = std::max(notional, abs128(o.pending_price) * open);
        }
        (side == nt::Side::kBuy ? per[i].buy : per[i].sell) += qty;
        per[i].notional += notional;
        per[i].orders += 1;
      });
    }
  }
  return per;
}

void expect_matches_recomputation(const Manager& om, const char* step) {
  const nt::WorkingExposure& w = om.exposure();
  const std::vector<Sums> per = recompute(om);
  nt::Int128 notional = 0;
  std::uint32_t orders = 0;
  for (nt::InstrumentId i = 0; i < kInstruments; ++i) {
    EXPECT_EQ(w.open_buy_qty(i), nt::clamp_int64(per[i].buy)) << step << ", instrument " << i;
    EXPECT_EQ(w.open_sell_qty(i), nt::clamp_int64(per[i].sell)) << step << ", instrument " << i;
    EXPECT_EQ(w.open_notional(i), nt::clamp_int64(per[i].notional)) << step << ", instrument " << i;
    EXPECT_EQ(w.open_orders(i), per[i].orders) << step << ", instrument " << i;
    EXPECT_EQ(om.open_qty(i, nt::Side::kBuy), w.open_buy_qty(i)) << step;
    notional += per[i].notional;
    orders += per[i].orders;
  }
  EXPECT_EQ(w.open_orders(), orders) << step;
  EXPECT_EQ(w.open_notional(), nt::clamp_int64(notional)) << step;
  EXPECT_EQ(w.open_orders(kInstruments), 0u) << "out of range";
}

class WorkingExposureTest : public ::testing::Test {
 protected:
  WorkingExposureTest() : om({64, kInstruments, 1}, sender) {}

  const nt::Order& submit(nt::Side side, nt::Price price, nt::Qty qty, nt::InstrumentId instrument = 0) {
    const nt::Submitted s = om.submit(tst::limit(side, price, qty, instrument));
    EXPECT_TRUE(s.ok());
    return *om.find(s.id);
  }
  void check(const char* step) { expect_matches_recomputation(om, step); }

  tst::RecordingSender sender;
  Manager om;
};

TEST_F(WorkingExposureTest, FollowsEachStateTransition) {
  const nt::WorkingExposure& w = om.exposure();
  check("empty");
  const nt::Order& a = submit(nt::Side::kBuy, 100, 10);
  const nt::ClientOrderId a_id = a.id;
  check("new");
  EXPECT_EQ(w.open_buy_qty(0), 10);
  EXPECT_EQ(w.open_notional(0), 1'000);
  EXPECT_TRUE(w.is_working(a_id));
  EXPECT_EQ(w.find(a_id), &a);
  (void)om.on_execution_report(tst::accepted(a, a.new_seq));
  check("accepted");
  EXPECT_EQ(w.open_buy_qty(0), 10) << "an acceptance changes nothing";
  (void)om.on_execution_report(tst::fill(a, 3));
  check("partial fill");
  EXPECT_EQ(w.open_buy_qty(0), 7);
  EXPECT_EQ(w.open_notional(0), 700);

  const nt::Submitted m = om.modify(a_id, 90, 15);  // 12 open in the new version
  ASSERT_TRUE(m.ok());
  check("modify pending");
  EXPECT_EQ(w.open_buy_qty(0), 12);
  EXPECT_EQ(w.open_notional(0), 1'080);
  (void)om.on_execution_report(tst::modified(a, m.seq, 90, 15));
  check("modified");
  EXPECT_EQ(w.open_notional(0), 1'080);
  const nt::Submitted m2 = om.modify(a_id, 110, 5);  // 2 open at 110 = 220, old 12 at 90 = 1080
  ASSERT_TRUE(m2.ok());
  check("second modify pending");
  EXPECT_EQ(w.open_buy_qty(0), 12);
  EXPECT_EQ(w.open_notional(0), 1'080);
  (void)om.on_modify_reject(
      tst::order_reject(np::MsgType::kModifyReject, a, m2.seq, ne::RejectReason::kPriceOutOfBand));
  check("modify rejected");
  EXPECT_EQ(w.open_buy_qty(0), 12);

  const nt::Order& b = submit(nt::Side::kSell, -20, 4, 1);  // a negative price: |price| for notional
  check("second order");
  EXPECT_EQ(w.open_notional(1), 80);
  const nt::ClientOrderId b_id = b.id;
  auto rejected = tst::report(np::ExecType::kRejected, b, b.new_seq);
  (void)om.on_execution_report(rejected);
  check("rejected");
  EXPECT_FALSE(w.is_working(b_id));
  EXPECT_EQ(w.open_orders(1), 0u);

  const nt::Submitted c = om.cancel(a_id);
  check("pending cancel");
  EXPECT_EQ(w.open_buy_qty(0), 12) << "counts until the answer";
  (void)om.on_execution_report(tst::cancelled(a, c.seq));
  check("cancelled");
  EXPECT_EQ(w.open_orders(), 0u);
  EXPECT_EQ(w.open_notional(), 0);
}

TEST_F(WorkingExposureTest, UnknownOrdersCountTheWorstCaseUntilReconciled) {
  const nt::WorkingExposure& w = om.exposure();
  const nt::Order& a = submit(nt::Side::kBuy, 100, 10);
  (void)om.on_execution_report(tst::accepted(a, a.new_seq));
  const nt::Order& b = submit(nt::Side::kSell, 105, 4);  // pending new at the loss
  const nt::ClientOrderId b_id = b.id;
  ASSERT_TRUE(om.modify(a.id, 101, 16).ok());  // in flight at the loss: its answer is lost
  check("before the loss");
  EXPECT_EQ(w.open_buy_qty(0), 16);

  om.on_disconnected();
  check("disconnected");
  EXPECT_EQ(a.state, nt::OrderState::kUnknown);
  EXPECT_EQ(w.open_buy_qty(0), 16) << "the modify may have been applied";
  EXPECT_EQ(w.open_notional(0), 101 * 16 + 105 * 4);
  EXPECT_EQ(w.open_orders(), 2u);

  // A fill from the old session still applies; the worst case stays.
  sender.new_session();
  (void)om.on_execution_report(tst::fill(a, 4));
  check("fill while unknown");
  EXPECT_EQ(w.open_buy_qty(0), 12);

  ASSERT_EQ(om.reconcile(10), 2u);
  check("reconcile sent");
  EXPECT_EQ(w.open_orders(), 2u);
  std::uint32_t cancel_a = 0;
  std::uint32_t cancel_b = 0;
  for (const tst::SentMessage& s : sender.sent) {
    if (s.type != np::MsgType::kCancelOrder) continue;
    (s.id == a.id ? cancel_a : cancel_b) = s.seq;
  }
  (void)om.on_execution_report(tst::cancelled(a, cancel_a));
  check("unknown cancelled");
  EXPECT_EQ(w.open_buy_qty(0), 0);
  (void)om.on_cancel_reject(
      tst::order_reject(np::MsgType::kCancelReject, *om.find(b_id), cancel_b, ne::RejectReason::kUnknownOrder));
  check("unknown never arrived");
  EXPECT_EQ(w.open_orders(), 0u);
  EXPECT_EQ(w.open_notional(), 0);
}

TEST_F(WorkingExposureTest, AModifiedReportSettlesTheVersionALossLeftUnknown) {
  const nt::Order& a = submit(nt::Side::kBuy, 100, 10);
  (void)om.on_execution_report(tst::accepted(a, a.new_seq));
  ASSERT_TRUE(om.modify(a.id, 100, 20).ok());
  om.on_disconnected();
  EXPECT_EQ(om.exposure().open_buy_qty(0), 20);
  // The exchange reports the modify after all (no request of ours answered):
  // the order is known to be the new version, nothing else may be live.
  (void)om.on_execution_report(tst::modified(a, 0, 100, 20));
  EXPECT_EQ(a.pending_qty, 0);
  check("modified while unknown");
  EXPECT_EQ(om.exposure().open_buy_qty(0), 20);
  (void)om.on_execution_report(tst::fill(a, 15));
  check("filled while unknown");
  EXPECT_EQ(om.exposure().open_buy_qty(0), 5);
}

// ---- random sequences against a small exchange ---------------------------------------------

struct ExchangeOrder {
  nt::InstrumentId instrument = 0;
  nt::Side side = nt::Side::kBuy;
  nt::Price price = 0;
  nt::Qty qty = 0;
  nt::Qty cum = 0;
  bool live = false;
};

// Takes the manager's messages in order, answers at once (or, at a session
// loss, silently: the answers are lost), fills resting orders at random.
class Exchange {
 public:
  Exchange(Manager& om, tst::RecordingSender& sender, std::mt19937_64& rng) : om_(om), sender_(sender), rng_(rng) {}

  bool has_pending() const { return next_ < sender_.sent.size(); }

  void process_next(bool deliver) {
    const tst::SentMessage m = sender_.sent[next_++];
    switch (m.type) {
      case np::MsgType::kNewOrder: {
        const nt::Order& o = *om_.find(m.id);  // kept while its NewOrder is unanswered
        if (draw(10) == 0) {
          const ExchangeOrder refused{o.instrument, o.side, m.price, m.qty};
          send(deliver, report(np::ExecType::kRejected, m.id, refused, m.seq));
          return;
        }
        ExchangeOrder& x = orders_[m.id];
        x = ExchangeOrder{o.instrument, o.side, m.price, m.qty, 0, true};
        send(deliver, report(np::ExecType::kAccepted, m.id, x, m.seq));
        if (o.type == nt::OrderType::kIoc) {
          x.live = false;
          send(deliver, report(np::ExecType::kCancelled, m.id, x, m.seq));
        }
        return;
      }
      case np::MsgType::kCancelOrder: {
        const auto it = orders_.find(m.id);
        if (it == orders_.end() || !it->second.live) {
          reject(deliver, np::MsgType::kCancelReject, m,
                 it == orders_.end() ? ne::RejectReason::kUnknownOrder : ne::RejectReason::kTooLateToCancel);
          return;
        }
        it->second.live = false;
        send(deliver, report(np::ExecType::kCancelled, m.id, it->second, m.seq));
        return;
      }
      default: {  // ModifyOrder
        const auto it = orders_.find(m.id);
        if (it == orders_.end() || !it->second.live) {
          reject(deliver, np::MsgType::kModifyReject, m,
                 it == orders_.end() ? ne::RejectReason::kUnknownOrder : ne::RejectReason::kTooLateToCancel);
          return;
        }
        ExchangeOrder& x = it->second;
        if (draw(6) == 0) {
          reject(deliver, np::MsgType::kModifyReject, m, ne::RejectReason::kPriceOutOfBand);
        } else if (m.qty <= x.cum) {
          x.live = false;
          send(deliver, report(np::ExecType::kCancelled, m.id, x, m.seq));
        } else {
          x.price = m.price;
          x.qty = m.qty;
          send(deliver, report(np::ExecType::kModified, m.id, x, m.seq));
        }
        return;
      }
    }
  }

  // The session refuses the next message (RateLimited): it never reaches the book.
  void session_reject_next() {
    const tst::SentMessage m = sender_.sent[next_++];
    (void)om_.on_session_reject(tst::session_reject(m.seq, m.type, np::SessionRejectReason::kRateLimited));
  }

  void fill_one(bool deliver) {
    std::vector<nt::ClientOrderId> live;
    for (const auto& [id, x] : orders_)
      if (x.live) live.push_back(id);
    if (live.empty()) return;
    const nt::ClientOrderId id = live[draw(live.size())];
    ExchangeOrder& x = orders_[id];
    const nt::Qty q = static_cast<nt::Qty>(draw(static_cast<std::uint64_t>(x.qty - x.cum))) + 1;
    x.cum += q;
    x.live = x.cum < x.qty;
    auto r = report(np::ExecType::kFill, id, x, 0);
    r.last_qty = q;
    r.last_price = x.price;
    send(deliver, r);
  }

  // The session ends: some messages are handled with their answers lost, the
  // rest never arrive; the exchange may cancel what rests.
  void disconnect() {
    while (has_pending() && draw(2) == 0) process_next(false);
    if (draw(2) == 0) fill_one(false);
    next_ = sender_.sent.size();
    if (draw(2) == 0)
      for (auto& [id, x] : orders_) x.live = false;  // cancel on disconnect
    om_.on_disconnected();
    sender_.new_session();
  }

  // The ledger never counts less than the exchange has open: every live order
  // of ours is counted with at least its leaves and their notional.
  void expect_ledger_covers_the_book(const char* step) const {
    std::vector<nt::Int128> buy(kInstruments), sell(kInstruments);
    for (const auto& [id, x] : orders_) {
      if (!x.live) continue;
      const nt::Order* o = om_.exposure().find(id);
      ASSERT_NE(o, nullptr) << step << ": order " << id << " rests at the exchange";
      ASSERT_TRUE(o->exposure.counted) << step << ": order " << id;
      EXPECT_GE(o->exposure.qty, x.qty - x.cum) << step << ": order " << id;
      EXPECT_GE(o->exposure.notional, abs128(x.price) * (x.qty - x.cum)) << step << ": order " << id;
      (x.side == nt::Side::kBuy ? buy : sell)[x.instrument] += x.qty - x.cum;
    }
    for (nt::InstrumentId i = 0; i < kInstruments; ++i) {
      EXPECT_GE(om_.exposure().open_buy_qty(i), buy[i]) << step;
      EXPECT_GE(om_.exposure().open_sell_qty(i), sell[i]) << step;
    }
  }

 private:
  std::uint64_t draw(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }

  static np::ExecutionReport report(np::ExecType type, nt::ClientOrderId id, const ExchangeOrder& x,
                                    std::uint32_t ref_seq) {
    auto r = np::make_message<np::ExecutionReport>(0);
    r.exec_type = type;
    r.client_order_id = id;
    r.instrument = x.instrument;
    r.order_id = 1000 + id;
    r.side = static_cast<std::uint8_t>(x.side);
    r.price = x.price;
    r.order_qty = x.qty;
    r.cum_qty = x.cum;
    r.leaves_qty = x.live ? x.qty - x.cum : 0;
    r.ref_seq = ref_seq;
    return r;
  }
  void send(bool deliver, const np::ExecutionReport& r) {
    if (deliver) (void)om_.on_execution_report(r);
  }
  void reject(bool deliver, np::MsgType type, const tst::SentMessage& m, ne::RejectReason why) {
    if (!deliver) return;
    auto r = np::make_message<np::OrderReject>(0, type);
    r.client_order_id = m.id;
    r.instrument = m.instrument;
    r.ref_seq = m.seq;
    r.reason = static_cast<std::uint16_t>(why);
    (void)(type == np::MsgType::kCancelReject ? om_.on_cancel_reject(r) : om_.on_modify_reject(r));
  }

  Manager& om_;
  tst::RecordingSender& sender_;
  std::mt19937_64& rng_;
  std::map<nt::ClientOrderId, ExchangeOrder> orders_;
  std::size_t next_ = 0;
};

TEST(WorkingExposureRandom, MatchesARecomputationAndCoversTheExchangeAfterEveryStep) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    auto draw = [&](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
    tst::RecordingSender sender;
    Manager om({256, kInstruments, 1}, sender);
    Exchange exchange(om, sender, rng);
    auto pick = [&]() -> nt::ClientOrderId {
      std::vector<nt::ClientOrderId> ids;
      for (nt::InstrumentId i = 0; i < kInstruments; ++i)
        for (const nt::Side side : {nt::Side::kBuy, nt::Side::kSell})
          om.for_each_order(i, side, [&](const nt::Order& o) { ids.push_back(o.id); });
      return ids.empty() ? 0 : ids[draw(ids.size())];
    };
    std::size_t disconnects = 0;
    for (int step = 0; step < 3'000; ++step) {
      const std::uint64_t r = draw(100);
      const char* what = "";
      if (r < 22) {
        what = "submit";
        nt::OrderRequest rq =
            tst::limit(draw(2) == 0 ? nt::Side::kBuy : nt::Side::kSell, static_cast<nt::Price>(draw(30)) - 5,
                       static_cast<nt::Qty>(draw(20)) + 1, static_cast<nt::InstrumentId>(draw(kInstruments)));
        if (draw(6) == 0) rq.type = nt::OrderType::kIoc;
        (void)om.submit(rq);
      } else if (r < 32) {
        what = "cancel";
        (void)om.cancel(pick());
      } else if (r < 47) {
        what = "modify";
        (void)om.modify(pick(), static_cast<nt::Price>(draw(30)) - 5, static_cast<nt::Qty>(draw(25)) + 1);
      } else if (r < 80) {
        what = "exchange answers";
        if (exchange.has_pending()) exchange.process_next(true);
      } else if (r < 93) {
        what = "fill";
        exchange.fill_one(true);
      } else if (r < 95) {
        what = "session reject";
        if (exchange.has_pending()) exchange.session_reject_next();
      } else if (r < 96) {
        what = "disconnect";
        exchange.disconnect();
        ++disconnects;
      } else {
        what = "reconcile";
        (void)om.reconcile(8);
      }
      expect_matches_recomputation(om, what);
      exchange.expect_ledger_covers_the_book(what);
      if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(disconnects, 0u);
    EXPECT_GT(om.counters().fills.get(), 0u);
  }
}

}  // namespace
