// The fast MatchingEngine against the reference model (tests/reference) on
// seeded random request streams: identical report and market data streams
// (field by field, and their interleaving) after every request, identical
// books (every order of both sides of every instrument, best levels, counts,
// last trades, sequence numbers) every kBookCheckEvery requests and at the
// end, and validate_invariants() on both.
//
// Size: ~2 million requests in total by default (a few seconds in release),
// 300 thousand under sanitizers; NANOTICK_STRESS_ITEMS=<total> runs more (the
// "larger run"), split evenly over the shapes and seeds.
//
// The same comparison runs on the regime family (src/workload/regimes.hpp):
// each generated regime workload replayed through both engines.
#include "engine/matching_engine.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "reference/random_requests.hpp"
#include "reference/recording_sink.hpp"
#include "reference/reference_engine.hpp"
#include "support/stress.hpp"
#include "workload/generators.hpp"
#include "workload/regimes.hpp"

namespace nanotick::reference {
namespace {

using Fast = engine::MatchingEngine<RecordingSink>;
using Ref = ReferenceEngine<RecordingSink>;

constexpr std::array<std::uint64_t, 3> kSeeds = {1, 0x5eed'cafe, 20'261'122};
constexpr std::uint64_t kBookCheckEvery = 256;
constexpr std::size_t kContext = 12;  // requests shown before a mismatch

std::uint64_t requests_per_run() {
  const std::uint64_t total = test::stress_items(2'000'000, 300'000);
  const std::uint64_t runs = differential_shapes().size() * kSeeds.size();
  return total / runs + 1;
}

// One resting order as both engines show it through for_each_order.
using OrderRow = std::tuple<engine::OrderId, engine::ClientId, engine::ClientOrderId, unsigned, engine::Price,
                            engine::Qty, engine::Qty, engine::Qty, unsigned>;

template <typename Engine>
std::vector<OrderRow> orders_of(const Engine& e, engine::InstrumentId in, engine::Side side) {
  std::vector<OrderRow> rows;
  e.for_each_order(in, side, [&rows](const auto& o) {
    rows.emplace_back(o.order_id, o.client, o.client_order_id, static_cast<unsigned>(o.side), o.price, o.order_qty,
                      o.cum_qty, o.open_qty, static_cast<unsigned>(o.stp));
  });
  return rows;
}

std::string describe_row(const OrderRow& o) {
  std::ostringstream s;
  s << "{order_id=" << std::get<0>(o) << " client=" << std::get<1>(o) << " client_order_id=" << std::get<2>(o)
    << " side=" << std::get<3>(o) << " price=" << std::get<4>(o) << " order_qty=" << std::get<5>(o)
    << " cum=" << std::get<6>(o) << " open=" << std::get<7>(o) << " stp=" << std::get<8>(o) << "}";
  return s.str();
}

template <typename Engine>
std::string invariant_failure(const Engine& e) {
  try {
    e.validate_invariants();
  } catch (const std::exception& ex) {
    return ex.what();
  }
  return "";
}

// "" when both engines show the same state, else what differs first.
std::string book_difference(const Ref& expected, const Fast& actual) {
  std::ostringstream s;
  if (const std::string bad = invariant_failure(expected); !bad.empty()) return "reference: " + bad;
  if (const std::string bad = invariant_failure(actual); !bad.empty()) return "engine: " + bad;
  if (expected.requests_processed() != actual.requests_processed() ||
      expected.last_report_seq() != actual.last_report_seq() || expected.last_md_seq() != actual.last_md_seq()) {
    s << "sequence numbers differ: expected requests/reports/md " << expected.requests_processed() << "/"
      << expected.last_report_seq() << "/" << expected.last_md_seq() << ", actual " << actual.requests_processed()
      << "/" << actual.last_report_seq() << "/" << actual.last_md_seq();
    return s.str();
  }
  if (expected.instrument_count() != actual.instrument_count()) return "instrument counts differ";
  for (engine::InstrumentId in = 0; in < expected.instrument_count(); ++in) {
    if (expected.live_orders(in) != actual.live_orders(in)) {
      s << "instrument " << in << ": live orders " << expected.live_orders(in) << " vs " << actual.live_orders(in);
      return s.str();
    }
    if (expected.last_instrument_md_seq(in) != actual.last_instrument_md_seq(in)) {
      s << "instrument " << in << ": market data instrument_seq " << expected.last_instrument_md_seq(in) << " vs "
        << actual.last_instrument_md_seq(in);
      return s.str();
    }
    if (expected.last_trade(in) != actual.last_trade(in)) {
      s << "instrument " << in << ": last trade " << expected.last_trade(in).value_or(-1) << " vs "
        << actual.last_trade(in).value_or(-1) << " (-1 = none)";
      return s.str();
    }
    for (auto side : {engine::Side::kBuy, engine::Side::kSell}) {
      const char* side_name = side == engine::Side::kBuy ? "bid" : "ask";
      const auto eb = expected.best(in, side);
      const auto ab = actual.best(in, side);
      if (eb.has_value() != ab.has_value() ||
          (eb && (eb->price != ab->price || eb->qty != ab->qty || eb->orders != ab->orders))) {
        s << "instrument " << in << " best " << side_name << ": expected ";
        if (eb) s << eb->qty << "@" << eb->price << " in " << eb->orders;
        else s << "none";
        s << ", actual ";
        if (ab) s << ab->qty << "@" << ab->price << " in " << ab->orders;
        else s << "none";
        return s.str();
      }
      const auto eo = orders_of(expected, in, side);
      const auto ao = orders_of(actual, in, side);
      for (std::size_t i = 0; i < std::max(eo.size(), ao.size()); ++i) {
        if (i >= eo.size() || i >= ao.size() || eo[i] != ao[i]) {
          s << "instrument " << in << " " << side_name << " order #" << i << " (priority order): expected "
            << (i < eo.size() ? describe_row(eo[i]) : "none") << ", actual "
            << (i < ao.size() ? describe_row(ao[i]) : "none");
          return s.str();
        }
      }
    }
  }
  return "";
}

struct Case {
  std::size_t shape;
  std::uint64_t seed;
};
void PrintTo(const Case& c, std::ostream* os) { *os << differential_shapes()[c.shape].name << " seed " << c.seed; }

class Differential : public ::testing::TestWithParam<Case> {};

// Feeds `count` requests from `next()` to both engines in lockstep: the same
// outputs after every request, the same books every `book_check_every`
// requests and at the end. Fails at the first difference, naming `what`.
template <typename Next>
void expect_reference_behaviour(const std::string& what, const engine::EngineConfig& config, std::uint64_t count,
                                std::uint64_t book_check_every, Next next) {
  RecordingSink ref_sink;
  RecordingSink fast_sink;
  auto ref = std::make_unique<Ref>(config, ref_sink);
  auto fast = std::make_unique<Fast>(config, fast_sink);
  std::deque<engine::Request> recent;
  const auto context = [&recent] {
    std::string s = "  preceding requests (oldest first):\n";
    for (const auto& r : recent) s += "    " + describe(r) + "\n";
    return s;
  };
  for (std::uint64_t i = 1; i <= count; ++i) {
    const engine::Request r = next();
    ref_sink.clear();
    fast_sink.clear();
    ref->process(r);
    fast->process(r);
    if (const std::string diff = first_difference(ref_sink, fast_sink); !diff.empty()) {
      FAIL() << what << ": outputs differ at request " << i << " " << describe(r) << "\n"
             << diff << context() << "(expected = reference model, actual = engine)";
    }
    if (i % book_check_every == 0 || i == count) {
      if (const std::string diff = book_difference(*ref, *fast); !diff.empty()) {
        FAIL() << what << ": books differ after request " << i << ": " << diff << "\n" << context();
      }
    }
    recent.push_back(r);
    if (recent.size() > kContext) recent.pop_front();
  }
  EXPECT_EQ(fast->requests_processed(), count);
}

TEST_P(Differential, ShouldProduceTheReferenceStreamsAndBooks) {
  const DifferentialShape shape = differential_shapes()[GetParam().shape];
  const std::uint64_t seed = GetParam().seed;
  RandomRequests gen(shape.config, seed, shape.clients, shape.new_percent);
  expect_reference_behaviour(shape.name + " seed " + std::to_string(seed), shape.config, requests_per_run(),
                             kBookCheckEvery, [&gen] { return gen.next(); });
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (std::size_t shape = 0; shape < differential_shapes().size(); ++shape) {
    for (const std::uint64_t seed : kSeeds) cases.push_back({shape, seed});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Differential, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return differential_shapes()[param_info.param.shape].name + "_seed" +
                                  std::to_string(param_info.param.seed);
                         });

// ---- the regime family (docs/WORKLOADS.md, "The regimes") ----------------------
// Each regime at two seeds whose moving mids give the family's two shapes (a
// seed's mid path has the same shape at every scale): with seed 1 the sells,
// priced along the second half of the path, sit below the buys, so nearly
// every order crosses (a book of a few orders, most cancels too late); with
// seed 10 they sit above, so the books stay deep (hundreds of orders and
// levels at the CI scale, ~20,000 at full size).

constexpr std::array<std::uint64_t, 2> kRegimeSeeds = {1, 10};

// The generator's scale: the total (NANOTICK_STRESS_ITEMS, else ~1,000,000
// messages, 100,000 under sanitizers) split over the runs; a regime has ~2
// messages per new order, so 20,000,000 runs each at full size.
double regime_scale() {
  const std::uint64_t total = test::stress_items(1'000'000, 100'000);
  const std::uint64_t runs = std::size(workload::kRegimeKinds) * kRegimeSeeds.size();
  const double messages = static_cast<double>(total / runs);
  return std::min(100.0, messages / (2.0 * static_cast<double>(workload::regime::kNewOrders)));
}

struct RegimeCase {
  workload::WorkloadKind kind;
  std::uint64_t seed;
};
void PrintTo(const RegimeCase& c, std::ostream* os) { *os << workload::to_string(c.kind) << " seed " << c.seed; }

class RegimeDifferential : public ::testing::TestWithParam<RegimeCase> {};

TEST_P(RegimeDifferential, ShouldProduceTheReferenceStreamsAndBooks) {
  const auto [kind, seed] = GetParam();
  const workload::Workload wl = workload::generate({kind, seed, regime_scale()});
  const std::uint64_t count = wl.requests.size();
  ASSERT_GT(count, 0u);
  // A full-size static book holds ~42,000 orders: compare books at most ~512 times a run.
  const std::uint64_t book_check_every = std::max<std::uint64_t>(kBookCheckEvery, count / 512);
  std::size_t next = 0;
  expect_reference_behaviour(std::string(workload::to_string(kind)) + " seed " + std::to_string(seed), wl.config, count,
                             book_check_every, [&] { return wl.requests[next++]; });
}

std::vector<RegimeCase> regime_cases() {
  std::vector<RegimeCase> cases;
  for (const workload::WorkloadKind kind : workload::kRegimeKinds) {
    for (const std::uint64_t seed : kRegimeSeeds) cases.push_back({kind, seed});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Regimes, RegimeDifferential, ::testing::ValuesIn(regime_cases()),
                         [](const ::testing::TestParamInfo<RegimeCase>& param_info) {
                           std::string name(workload::to_string(param_info.param.kind));
                           std::erase(name, '-');
                           return name + "_seed" + std::to_string(param_info.param.seed);
                         });

}  // namespace
}  // namespace nanotick::reference
