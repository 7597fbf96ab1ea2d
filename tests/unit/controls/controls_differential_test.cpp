// The venue's controls (src/controls) against their reference model
// (tests/reference/reference_controls.hpp) on seeded random request streams
// (tests/reference/random_requests.hpp, every engine shape): identical
// report and market data streams after every request -- so every pre-trade
// refusal has the same reason at the same point -- and, every request, the
// same cash and positions for every account and the same holds (the model
// sums them over the book; src/controls tracks them from the reports).
//
// The properties the issue asks for, checked after every request on the
// fast side: no account's cash falls below what its working orders hold or
// below zero, no position below -short_limit after its working sells, the
// venue's total cash and each instrument's total position never change
// (every fill moves them from one account to another), and at the end, once
// every client's orders are mass-cancelled, nothing is held.
//
// Accounts are sized so that every check binds sometimes: a rich client, a
// poor one with a short limit and a collar, one with a quantity, notional,
// working-order and instrument limit, and a client with no account (trading
// unchecked, or refused kNoAccount when accounts are required).
//
// Every other request goes through process_staged (the exchange's path
// with telemetry, which times each stage), so it is held to the same
// outputs and balances as process().
//
// Size: ~1 million requests by default, 14 thousand under sanitizers (the
// reference model sums holds over the whole book at every check: 54 s of CI
// under ASan at 150 thousand, ~9 s at 32 thousand; at 14 thousand every check
// still refuses somewhere, the notional limit first at request 779 of a run);
// NANOTICK_STRESS_ITEMS=<total> runs more (the long form: millions).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "controls/controlled_engine.hpp"
#include "reference/random_requests.hpp"
#include "reference/recording_sink.hpp"
#include "reference/reference_controls.hpp"
#include "support/stress.hpp"

namespace nanotick::reference {
namespace {

using controls::Money;
using Fast = controls::ControlledEngine<RecordingSink>;
using Ref = ReferenceControlledEngine<RecordingSink>;

constexpr std::array<std::uint64_t, 2> kSeeds = {7, 0xacc0'0017};

std::string str(Money m) { return controls::to_string(m); }

// What one order of this shape may be worth: the largest |price| x qty.
Money largest_notional(const engine::EngineConfig& config) {
  Money m = 0;
  for (const auto& in : config.instruments) {
    const Money p = std::max(in.max_price < 0 ? -Money{in.max_price} : Money{in.max_price},
                             in.min_price < 0 ? -Money{in.min_price} : Money{in.min_price});
    m = std::max(m, p * in.max_order_qty);
  }
  return m;
}

std::int64_t clamp64(Money m) {
  const Money top = Money{std::numeric_limits<std::int64_t>::max() / 4};
  return static_cast<std::int64_t>(m > top ? top : m);
}

// Clients 0, 1, 2 have accounts; the generator's other clients do not.
controls::ControlsConfig accounts_for(const DifferentialShape& shape, bool required) {
  const engine::EngineConfig& cfg = shape.config;
  const Money big = largest_notional(cfg);
  const auto n = static_cast<engine::InstrumentId>(cfg.instruments.size());
  controls::ControlsConfig c;
  c.accounts_required = required;
  controls::ClientLimits rich;
  rich.client = 0;
  rich.cash = clamp64(big * 40);
  for (engine::InstrumentId i = 0; i < n; ++i) rich.positions.push_back({i, cfg.instruments[i].max_order_qty * 20});
  controls::ClientLimits poor;
  poor.client = 1;
  poor.cash = clamp64(big * 2);
  poor.short_limit = cfg.instruments[0].max_order_qty;
  poor.positions.push_back({0, -poor.short_limit / 2});
  poor.collar = cfg.instruments[0].tick_size * 4;
  controls::ClientLimits limited;
  limited.client = 2;
  limited.cash = clamp64(big * 6);
  for (engine::InstrumentId i = 0; i < n; ++i) limited.positions.push_back({i, cfg.instruments[i].max_order_qty * 3});
  limited.max_order_qty = std::max<engine::Qty>(1, cfg.instruments[0].max_order_qty / 2);
  limited.max_notional = clamp64(big / 3);
  limited.max_open_orders = 3;
  if (n > 1) {
    for (engine::InstrumentId i = 0; i + 1 < n; ++i) limited.instruments.push_back(i);  // not the last one
  }
  c.clients = {rich, poor, limited};
  return c;
}

void expect_same_outputs(const RecordingSink& f, const RecordingSink& r, std::uint64_t i, const engine::Request& rq) {
  ASSERT_EQ(f.reports.size(), r.reports.size()) << "request " << i << " " << describe(rq);
  for (std::size_t k = 0; k < f.reports.size(); ++k)
    ASSERT_TRUE(same(f.reports[k], r.reports[k])) << "request " << i << " " << describe(rq) << "\nfast "
                                                  << describe(f.reports[k]) << "\nref  " << describe(r.reports[k]);
  ASSERT_EQ(f.market_data.size(), r.market_data.size()) << "request " << i;
  for (std::size_t k = 0; k < f.market_data.size(); ++k) ASSERT_TRUE(same(f.market_data[k], r.market_data[k]));
  ASSERT_EQ(f.order, r.order) << "request " << i;
}

struct Totals {
  Money cash = 0;
  std::vector<Money> positions;
};
Totals totals(const controls::Accounts& a) {
  Totals t;
  t.positions.assign(a.instrument_count(), 0);
  for (std::size_t s = 0; s < a.size(); ++s) {
    t.cash += a.at(s).cash;
    for (std::size_t i = 0; i < a.instrument_count(); ++i) t.positions[i] += a.at(s).holdings[i].position;
  }
  return t;
}

// `outside`: what fills moved to and from clients without an account (they
// are not settled), so that accounts + outside is what the accounts opened with.
void expect_same_accounts(const Fast& fast, const Ref& ref, const Totals& opening, const Totals& outside,
                          std::uint64_t i) {
  const controls::Accounts& a = fast.accounts();
  for (std::size_t s = 0; s < a.size(); ++s) {
    const controls::Accounts::Account& acc = a.at(s);
    const engine::ClientId c = acc.limits.client;
    const auto held = ref.held(c);
    ASSERT_TRUE(acc.cash == ref.cash(c)) << "request " << i << " client " << c << " cash " << str(acc.cash) << " model "
                                         << str(ref.cash(c));
    ASSERT_TRUE(acc.reserved_cash == held.cash)
        << "request " << i << " client " << c << " held cash " << str(acc.reserved_cash) << " model " << str(held.cash);
    ASSERT_EQ(acc.working_orders, held.orders) << "request " << i << " client " << c;
    ASSERT_TRUE(acc.cash >= acc.reserved_cash && acc.reserved_cash >= 0)
        << "request " << i << " client " << c << ": cash " << str(acc.cash) << " below its holds "
        << str(acc.reserved_cash);
    for (engine::InstrumentId in = 0; in < a.instrument_count(); ++in) {
      const controls::Accounts::Holding& h = acc.holdings[in];
      ASSERT_EQ(h.position, ref.position(c, in)) << "request " << i << " client " << c << " instrument " << in;
      const auto sells = held.sells.find(in);
      ASSERT_EQ(h.reserved_sell, sells == held.sells.end() ? 0 : sells->second)
          << "request " << i << " client " << c << " instrument " << in;
      ASSERT_GE(h.position - h.reserved_sell, -acc.limits.short_limit)
          << "request " << i << " client " << c << " instrument " << in;
    }
  }
  const Totals now = totals(a);
  ASSERT_TRUE(now.cash + outside.cash == opening.cash) << "request " << i << ": the venue's cash changed";
  for (std::size_t in = 0; in < now.positions.size(); ++in)
    ASSERT_TRUE(now.positions[in] + outside.positions[in] == opening.positions[in])
        << "request " << i << ": instrument " << in << "'s total position changed";
}

using Refusals = std::map<engine::RejectReason, std::uint64_t>;

void run(const DifferentialShape& shape, std::uint64_t seed, bool required, std::uint64_t n, Refusals& refused) {
  SCOPED_TRACE(shape.name + " seed " + std::to_string(seed) + (required ? " accounts required" : ""));
  const controls::ControlsConfig accounts = accounts_for(shape, required);
  RecordingSink fs, rs;
  Fast fast(shape.config, accounts, fs);
  Ref ref(shape.config, accounts, rs);
  const Totals opening = totals(fast.accounts());
  Totals outside;
  outside.positions.assign(shape.config.instruments.size(), 0);
  const auto move_outside = [&](const RecordingSink& sink) {
    for (const auto& r : sink.reports) {
      if (r.type != engine::ReportType::kFill || fast.accounts().find(r.client) != nullptr) continue;
      const Money value = Money{r.last_price} * r.last_qty;
      const bool buy = r.side == engine::Side::kBuy;
      outside.cash += buy ? -value : value;
      outside.positions[r.instrument] += buy ? r.last_qty : -r.last_qty;
    }
  };
  RandomRequests gen(shape.config, seed, shape.clients, shape.new_percent);
  controls::StageTicks stages;
  for (std::uint64_t i = 0; i < n; ++i) {
    const engine::Request rq = gen.next();
    fs.clear();
    rs.clear();
    // Every other request through the telemetry's path: the same outputs and state.
    if (i % 2 == 0) {
      fast.process(rq);
    } else {
      fast.process_staged(rq, core::TscClock::global(), stages);
    }
    ref.process(rq);
    expect_same_outputs(fs, rs, i, rq);
    move_outside(fs);
    for (const auto& r : fs.reports)
      if (static_cast<unsigned>(r.reason) >= 400) ++refused[r.reason];
    expect_same_accounts(fast, ref, opening, outside, i);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Every client's orders cancelled: nothing held, nothing working.
  for (engine::ClientId c = 0; c <= shape.clients; ++c) {
    fs.clear();
    rs.clear();
    const engine::Request rq = engine::make_mass_cancel(engine::kAllInstruments, c);
    fast.process(rq);
    ref.process(rq);
    expect_same_outputs(fs, rs, n + c, rq);
  }
  expect_same_accounts(fast, ref, opening, outside, n + shape.clients + 1);
  for (std::size_t s = 0; s < fast.accounts().size(); ++s) {
    const auto& acc = fast.accounts().at(s);
    EXPECT_TRUE(acc.reserved_cash == 0) << "client " << acc.limits.client;
    EXPECT_EQ(acc.working_orders, 0u) << "client " << acc.limits.client;
    for (const auto& h : acc.holdings) EXPECT_EQ(h.reserved_sell, 0);
  }
}

TEST(ControlsDifferential, MatchesTheReferenceModelAndKeepsEveryBalanceCovered) {
  const auto shapes = differential_shapes();
  // 14,000 under sanitizers (32,000 took ~9 s there): 876 per run, every check still refuses (not asserted there).
  const std::uint64_t total = test::stress_items(1'000'000, 14'000);
  const std::uint64_t per_run = total / (shapes.size() * kSeeds.size() * 2) + 1;
  Refusals refused;
  for (const auto& shape : shapes)
    for (const std::uint64_t seed : kSeeds)
      for (const bool required : {false, true}) {
        run(shape, seed, required, per_run, refused);
        if (HasFatalFailure()) return;
      }
  // Every check bound somewhere in the default run (a check that never
  // refuses is a check this test does not test).
  if (per_run >= 10'000) {  // not under sanitizers: too few requests per run for the rarest checks
    for (const auto reason : {engine::RejectReason::kNoAccount, engine::RejectReason::kInstrumentNotPermitted,
                              engine::RejectReason::kClientQuantityLimit, engine::RejectReason::kClientNotionalLimit,
                              engine::RejectReason::kClientCollar, engine::RejectReason::kTooManyOpenOrders,
                              engine::RejectReason::kInsufficientCash, engine::RejectReason::kInsufficientPosition})
      EXPECT_GT(refused[reason], 0u) << "never refused: " << engine::to_string(reason);
  }
  for (const auto& [reason, count] : refused)
    std::printf("refused %-70s %llu\n", std::string(engine::to_string(reason)).c_str(),
                static_cast<unsigned long long>(count));
}

}  // namespace
}  // namespace nanotick::reference
