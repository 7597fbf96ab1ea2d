// Scenario tests for every rule of docs/MATCHING.md, as a GoogleTest
// type-parameterised suite that runs against any engine with the
// MatchingEngine API (the fast engine and the reference model share it).
// Every test ends with validate_invariants().
//
// To run it against an engine class template `MyEngine<Sink>`:
//
//   #include "unit/engine/engine_scenarios.hpp"
//   struct MyEngineFactory {
//     template <typename Sink> using Engine = MyEngine<Sink>;
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(MyEngine, EngineScenarios, MyEngineFactory);
//
// (EngineScenarios is in the global namespace so the macros find it.)
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "engine/events.hpp"
#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::engine::scenario {

// Records every output; tests look at the slice a request produced.
struct RecordingSink {
  std::vector<ExecReport> reports;
  std::vector<MdEvent> md;
  void on_report(const ExecReport& r) { reports.push_back(r); }
  void on_market_data(const MdEvent& m) { md.push_back(m); }
};

struct Out {
  std::vector<ExecReport> reports;
  std::vector<MdEvent> md;
  std::vector<MdEvent> of(MdType t) const {
    std::vector<MdEvent> v;
    for (const auto& m : md)
      if (m.type == t) v.push_back(m);
    return v;
  }
  std::vector<ExecReport> of(ReportType t) const {
    std::vector<ExecReport> v;
    for (const auto& r : reports)
      if (r.type == t) v.push_back(r);
    return v;
  }
  const ExecReport& first() const { return reports.at(0); }
};

// (client_order_id, price, open qty) of a resting order, in priority order.
using Resting = std::tuple<ClientOrderId, Price, Qty>;

// Instrument 0 "AAA": tick 1, band [1, 1e6], no collar; instrument 1 "BBB":
// tick 5, band [100, 10000], collar 500, max qty 1000.
inline EngineConfig scenario_config(std::uint32_t max_orders = 64, std::uint32_t max_levels = 32) {
  EngineConfig c;
  InstrumentConfig a;
  a.symbol = "AAA";
  a.tick_size = 1;
  a.min_price = 1;
  a.max_price = 1'000'000;
  a.max_order_qty = 1'000'000;
  a.max_orders = max_orders;
  a.max_levels = max_levels;
  InstrumentConfig b = a;
  b.symbol = "BBB";
  b.tick_size = 5;
  b.min_price = 100;
  b.max_price = 10'000;
  b.collar = 500;
  b.max_order_qty = 1000;
  c.instruments = {a, b};
  return c;
}

}  // namespace nanotick::engine::scenario

template <typename Factory>
class EngineScenarios : public ::testing::Test {
 protected:
  using Sink = nanotick::engine::scenario::RecordingSink;
  using Engine = typename Factory::template Engine<Sink>;
  using Out = nanotick::engine::scenario::Out;
  using Resting = nanotick::engine::scenario::Resting;
  using Side = nanotick::engine::Side;
  using OrderType = nanotick::engine::OrderType;
  using StpMode = nanotick::engine::StpMode;
  using Request = nanotick::engine::Request;
  using Price = nanotick::engine::Price;
  using Qty = nanotick::engine::Qty;

  void SetUp() override { make(nanotick::engine::scenario::scenario_config()); }
  void TearDown() override {
    if (engine_) {
      EXPECT_NO_THROW(engine_->validate_invariants());
    }
  }
  void make(const nanotick::engine::EngineConfig& cfg) {
    engine_.reset();
    sink_ = Sink{};
    engine_ = std::make_unique<Engine>(cfg, sink_);
  }

  // Processes `rq`; returns what it produced and checks the invariants.
  Out process(Request rq) {
    rq.event_id = ++event_;
    const std::size_t r0 = sink_.reports.size();
    const std::size_t m0 = sink_.md.size();
    engine_->process(rq);
    Out out;
    out.reports.assign(sink_.reports.begin() + static_cast<std::ptrdiff_t>(r0), sink_.reports.end());
    out.md.assign(sink_.md.begin() + static_cast<std::ptrdiff_t>(m0), sink_.md.end());
    EXPECT_NO_THROW(engine_->validate_invariants());
    return out;
  }
  // A client's request: always answered.
  Out send(Request rq) {
    Out out = process(rq);
    EXPECT_FALSE(out.reports.empty()) << "every client request produces at least one report";
    return out;
  }
  Out buy(std::uint64_t id, Price px, Qty qty, OrderType t = OrderType::kLimit, StpMode stp = StpMode::kNone,
          std::uint32_t client = 1, std::uint32_t inst = 0) {
    return send(nanotick::engine::make_new(inst, client, id, Side::kBuy, t, px, qty, stp));
  }
  Out sell(std::uint64_t id, Price px, Qty qty, OrderType t = OrderType::kLimit, StpMode stp = StpMode::kNone,
           std::uint32_t client = 2, std::uint32_t inst = 0) {
    return send(nanotick::engine::make_new(inst, client, id, Side::kSell, t, px, qty, stp));
  }
  Out cancel(std::uint64_t id, std::uint32_t client, std::uint32_t inst = 0) {
    return send(nanotick::engine::make_cancel(inst, client, id));
  }
  // The venue's request: may produce nothing (the client has no order there).
  Out mass_cancel(std::uint32_t client, std::uint32_t inst = nanotick::engine::kAllInstruments) {
    return process(nanotick::engine::make_mass_cancel(inst, client));
  }
  Out modify(std::uint64_t id, std::uint32_t client, Price px, Qty qty, std::uint32_t inst = 0) {
    return send(nanotick::engine::make_modify(inst, client, id, px, qty));
  }
  std::vector<Resting> book(Side side, std::uint32_t inst = 0) const {
    std::vector<Resting> v;
    engine_->for_each_order(inst, side,
                            [&v](const auto& o) { v.emplace_back(o.client_order_id, o.price, o.open_qty); });
    return v;
  }
  Engine& engine() { return *engine_; }
  const Sink& sink() const { return sink_; }

  Sink sink_;
  std::unique_ptr<Engine> engine_;
  std::uint64_t event_ = 0;
};

TYPED_TEST_SUITE_P(EngineScenarios);

namespace nanotick::engine::scenario {
// Short names for the test bodies.
inline constexpr auto kBuy = Side::kBuy;
inline constexpr auto kSell = Side::kSell;
inline constexpr auto kLimit = OrderType::kLimit;
inline constexpr auto kIoc = OrderType::kIoc;
inline constexpr auto kFok = OrderType::kFok;
inline constexpr auto kMarket = OrderType::kMarket;
}  // namespace nanotick::engine::scenario

// The test bodies (split for file size); the second file registers them all.
// The order matters (the second file registers the bodies of both): not sorted.
// clang-format off
#include "unit/engine/engine_scenarios_matching.hpp"
#include "unit/engine/engine_scenarios_lifecycle.hpp"
// clang-format on
