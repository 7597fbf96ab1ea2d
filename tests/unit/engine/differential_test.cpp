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
#include "engine/matching_engine.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
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
using OrderRow = std::tuple<engine::OrderId, engine::ClientId, engine::ClientOrderId, unsigned,
                            engine::Price, engine::Qty, engine::Qty, engine::Qty, unsigned>;

template <typename Engine>
std::vector<OrderRow> orders_of(const Engine& e, engine::InstrumentId in, engine::Side side) {
  std::vector<OrderRow> rows;
  e.for_each_order(in, side, [&rows](const auto& o) {
    rows.emplace_back(o.order_id, o.client, o.client_order_id, static_cast<unsigned>(o.side),
                      o.price, o.order_qty, o.cum_qty, o.open_qty, static_cast<unsigned>(o.stp));
  });
  return rows;
}

std::string describe_row(const OrderRow& o) {
  std::ostringstream s;
  s << "{order_id=" << std::get<0>(o) << " client=" << std::get<1>(o)
    << " client_order_id=" << std::get<2>(o) << " side=" << std::get<3>(o)
    << " price=" << std::get<4>(o) << " order_qty=" << std::get<5>(o) << " cum=" << std::get<6>(o)
    << " open=" << std::get<7>(o) << " stp=" << std::get<8>(o) << "}";
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
      expected.last_report_seq() != actual.last_report_seq() ||
      expected.last_md_seq() != actual.last_md_seq()) {
    s << "sequence numbers differ: expected requests/reports/md " << expected.requests_processed()
      << "/" << expected.last_report_seq() << "/" << expected.last_md_seq() << ", actual "
      << actual.requests_processed() << "/" << actual.last_report_seq() << "/"
      << actual.last_md_seq();
    return s.str();
  }
  if (expected.instrument_count() != actual.instrument_count()) return "instrument counts differ";
  for (engine::InstrumentId in = 0; in < expected.instrument_count(); ++in) {
    if (expected.live_orders(in) != actual.live_orders(in)) {
      s << "instrument " << in << ": live orders " << expected.live_orders(in) << " vs "
        << actual.live_orders(in);
      return s.str();
    }
    if (expected.last_instrument_md_seq(in) != actual.last_instrument_md_seq(in)) {
      s << "instrument " << in << ": market data instrument_seq " << expected.last_instrument_md_seq(in)
        << " vs " << actual.last_instrument_md_seq(in);
      return s.str();
    }
    if (expected.last_trade(in) != actual.last_trade(in)) {
      s << "instrument " << in << ": last trade " << expected.last_trade(in).value_or(-1)
        << " vs " << actual.last_trade(in).value_or(-1) << " (-1 = none)";
      return s.str();
    }
    for (auto side : {engine::Side::kBuy, engine::Side::kSell}) {
      const char* side_name = side == engine::Side::kBuy ? "bid" : "ask";
      const auto eb = expected.best(in, side);
      const auto ab = actual.best(in, side);
      if (eb.has_value() != ab.has_value() ||
          (eb && (eb->price != ab->price || eb->qty != ab->qty || eb->orders != ab->orders))) {
        s << "instrument " << in << " best " << side_name << ": expected ";
        if (eb) s << eb->qty << "@" << eb->price << " in " << eb->orders; else s << "none";
        s << ", actual ";
        if (ab) s << ab->qty << "@" << ab->price << " in " << ab->orders; else s << "none";
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
void PrintTo(const Case& c, std::ostream* os) {
  *os << differential_shapes()[c.shape].name << " seed " << c.seed;
}

class Differential : public ::testing::TestWithParam<Case> {};

TEST_P(Differential, ShouldProduceTheReferenceStreamsAndBooks) {
  const DifferentialShape shape = differential_shapes()[GetParam().shape];
  const std::uint64_t seed = GetParam().seed;
  const std::uint64_t count = requests_per_run();
  RecordingSink ref_sink;
  RecordingSink fast_sink;
  Ref ref(shape.config, ref_sink);
  Fast fast(shape.config, fast_sink);
  RandomRequests gen(shape.config, seed, shape.clients, shape.new_percent);
  std::deque<engine::Request> recent;
  const auto context = [&recent] {
    std::string s = "  preceding requests (oldest first):\n";
    for (const auto& r : recent) s += "    " + describe(r) + "\n";
    return s;
  };
  for (std::uint64_t i = 1; i <= count; ++i) {
    const engine::Request r = gen.next();
    ref_sink.clear();
    fast_sink.clear();
    ref.process(r);
    fast.process(r);
    if (const std::string diff = first_difference(ref_sink, fast_sink); !diff.empty()) {
      FAIL() << shape.name << " seed " << seed << ": outputs differ at request " << i << " "
             << describe(r) << "\n"
             << diff << context() << "(expected = reference model, actual = engine)";
    }
    if (i % kBookCheckEvery == 0 || i == count) {
      if (const std::string diff = book_difference(ref, fast); !diff.empty()) {
        FAIL() << shape.name << " seed " << seed << ": books differ after request " << i << ": "
               << diff << "\n"
               << context();
      }
    }
    recent.push_back(r);
    if (recent.size() > kContext) recent.pop_front();
  }
  EXPECT_EQ(fast.requests_processed(), count);
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

}  // namespace
}  // namespace nanotick::reference
