// The fast engine: the shared scenario suite, plus what only it promises --
// no allocation in steady state, memory per instrument, hostile input.
#include "engine/matching_engine.hpp"

#include "engine/book_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/allocation_counter.hpp"
#include "support/stress.hpp"
#include "unit/engine/engine_scenarios.hpp"

namespace {

struct FastEngineFactory {
  template <typename Sink>
  using Engine = nanotick::engine::MatchingEngine<Sink>;
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(FastEngine, EngineScenarios, FastEngineFactory);

namespace nanotick::engine {
namespace {

// Counts outputs without storing them (no allocation in the sink).
struct CountingSink {
  std::uint64_t reports = 0;
  std::uint64_t md = 0;
  std::uint64_t fills = 0;
  void on_report(const ExecReport& r) noexcept {
    ++reports;
    fills += r.type == ReportType::kFill;
  }
  void on_market_data(const MdEvent&) noexcept { ++md; }
};

// A mixed random flow: limits, IOC, FOK, market, cancels, modifies, all STP
// modes, a few invalid requests, over two instruments.
class RandomFlow {
 public:
  explicit RandomFlow(std::uint64_t seed) : rng_(seed) {}
  Request next() {
    const auto inst = static_cast<InstrumentId>(pick(2));
    const auto client = static_cast<ClientId>(1 + pick(4));
    const std::uint64_t id = 1 + pick(400);
    const Price tick = inst == 0 ? 1 : 5;
    const Price mid = inst == 0 ? 1000 : 1000;
    const Price price = mid + tick * (static_cast<Price>(pick(41)) - 20);
    const Qty qty = 1 + static_cast<Qty>(pick(20));
    const unsigned kind = static_cast<unsigned>(pick(100));
    if (kind < 20) return make_cancel(inst, client, id);
    if (kind < 35) return make_modify(inst, client, id, price, qty);
    const Side side = pick(2) ? Side::kBuy : Side::kSell;
    const auto stp = static_cast<StpMode>(pick(4));
    OrderType type = OrderType::kLimit;
    if (kind < 45) type = OrderType::kIoc;
    else if (kind < 50) type = OrderType::kFok;
    else if (kind < 53) type = OrderType::kMarket;
    Request r = make_new(inst, client, id, side, type, price, qty, stp);
    if (kind == 99) r.qty = 0;
    return r;
  }

 private:
  std::uint64_t pick(std::uint64_t n) { return rng_() % n; }
  std::mt19937_64 rng_;
};

EngineConfig flow_config(std::uint32_t max_orders, std::uint32_t max_levels) {
  EngineConfig c = scenario::scenario_config(max_orders, max_levels);
  c.instruments[1].collar = 0;
  return c;
}

TEST(MatchingEngine, ShouldNotAllocateWhileProcessingInSteadyState) {
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(512, 64), sink);
  RandomFlow flow(7);
  const std::uint64_t n = test::stress_items(400'000, 40'000);
  std::vector<Request> requests(n);
  for (auto& r : requests) r = flow.next();
  test::AllocationScope scope;
  for (const auto& r : requests) engine.process(r);
  EXPECT_EQ(scope.count(), 0u) << "process() allocated";
  EXPECT_GT(sink.fills, 0u);
  EXPECT_EQ(engine.requests_processed(), n);
  engine.validate_invariants();
}

TEST(MatchingEngine, ShouldKeepItsInvariantsUnderARandomFlowNearCapacity) {
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(40, 12), sink);  // capacity rejects happen
  RandomFlow flow(11);
  const std::uint64_t n = test::stress_items(200'000, 20'000);
  for (std::uint64_t i = 0; i < n; ++i) {
    engine.process(flow.next());
    if (i % 97 == 0) {
      ASSERT_NO_THROW(engine.validate_invariants()) << "after request " << i + 1;
    }
  }
  EXPECT_NO_THROW(engine.validate_invariants());
  EXPECT_EQ(engine.last_report_seq(), sink.reports);
  EXPECT_EQ(engine.last_md_seq(), sink.md);
}

TEST(MatchingEngine, ShouldNeverCrashOrCorruptOnRandomBytesAsRequests) {
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(64, 16), sink);
  std::mt19937_64 rng(3);
  const std::uint64_t n = test::stress_items(300'000, 30'000);
  for (std::uint64_t i = 0; i < n; ++i) {
    unsigned char bytes[sizeof(Request)];
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    // Half the time steer fields into the valid ranges so deeper paths run.
    if (i % 2 == 0) {
      bytes[0] = static_cast<unsigned char>(1 + rng() % 3);
      bytes[1] = static_cast<unsigned char>(1 + rng() % 2);
      bytes[2] = static_cast<unsigned char>(1 + rng() % 4);
      bytes[3] = static_cast<unsigned char>(rng() % 4);
    }
    Request r;
    std::memcpy(&r, bytes, sizeof r);
    if (i % 2 == 0) {
      r.instrument %= 3;
      r.client %= 4;
      r.reserved = 0;
      r.client_order_id %= 64;
      r.price = static_cast<Price>(r.price % 2000);
      r.qty = static_cast<Qty>(r.qty % 50);
    }
    const std::uint64_t before = sink.reports;
    engine.process(r);
    ASSERT_GE(sink.reports, before + 1) << "every request gets a report";
    if (i % 101 == 0) {
      ASSERT_NO_THROW(engine.validate_invariants());
    }
  }
  EXPECT_NO_THROW(engine.validate_invariants());
}

// Folds every output field into one hash (order-sensitive).
struct HashingSink {
  std::uint64_t h = 0;
  void mixin(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  }
  void on_report(const ExecReport& r) {
    const std::uint64_t f[] = {r.seq,
                               r.request_seq,
                               r.event_id,
                               r.client,
                               r.instrument,
                               r.client_order_id,
                               r.order_id,
                               static_cast<std::uint64_t>(r.price),
                               static_cast<std::uint64_t>(r.order_qty),
                               static_cast<std::uint64_t>(r.last_price),
                               static_cast<std::uint64_t>(r.last_qty),
                               static_cast<std::uint64_t>(r.cum_qty),
                               static_cast<std::uint64_t>(r.leaves_qty),
                               r.contra_order_id,
                               static_cast<std::uint64_t>(r.type),
                               static_cast<std::uint64_t>(r.side),
                               static_cast<std::uint64_t>(r.order_type),
                               r.is_maker,
                               static_cast<std::uint64_t>(r.reason),
                               static_cast<std::uint64_t>(r.cancel_reason)};
    mixin(f, sizeof f);
  }
  void on_market_data(const MdEvent& m) {
    const std::uint64_t f[] = {m.seq,
                               m.event_id,
                               m.instrument,
                               static_cast<std::uint64_t>(m.type),
                               static_cast<std::uint64_t>(m.side),
                               m.order_id,
                               m.contra_order_id,
                               static_cast<std::uint64_t>(m.price),
                               static_cast<std::uint64_t>(m.qty),
                               static_cast<std::uint64_t>(m.bid_price),
                               static_cast<std::uint64_t>(m.bid_qty),
                               static_cast<std::uint64_t>(m.ask_price),
                               static_cast<std::uint64_t>(m.ask_qty)};
    mixin(f, sizeof f);
  }
};

TEST(MatchingEngine, ShouldProduceTheSameOutputsWithOrWithoutPrefetchHints) {
  std::vector<Request> requests;
  RandomFlow flow(21);
  for (int i = 0; i < 50'000; ++i) requests.push_back(flow.next());
  HashingSink plain_sink, hinted_sink;
  MatchingEngine<HashingSink> plain(flow_config(128, 32), plain_sink);
  MatchingEngine<HashingSink> hinted(flow_config(128, 32), hinted_sink);
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    plain.process(requests[i]);
    Request garbage;
    for (auto* p = reinterpret_cast<unsigned char*>(&garbage);
         p != reinterpret_cast<unsigned char*>(&garbage) + sizeof garbage; ++p)
      *p = static_cast<unsigned char>(rng());
    hinted.prefetch(garbage);
    if (i + 1 < requests.size()) hinted.prefetch(requests[i + 1]);
    hinted.process(requests[i]);
  }
  EXPECT_EQ(plain_sink.h, hinted_sink.h);
  EXPECT_NE(plain_sink.h, 0u);
  EXPECT_EQ(compare_books(plain, hinted), "");
  EXPECT_EQ(state_hash(plain), state_hash(hinted));
  // One more request changes the state, and both helpers notice.
  plain.process(make_new(0, 9, 999'999, Side::kBuy, OrderType::kLimit, 1, 1));
  EXPECT_NE(compare_books(plain, hinted), "");
  EXPECT_NE(state_hash(plain), state_hash(hinted));
}

// Takes the reports only (no on_market_data): the engine builds no market data.
struct ReportOnlyHashingSink {
  HashingSink reports;
  void on_report(const ExecReport& r) { reports.on_report(r); }
};
static_assert(EngineSink<ReportOnlyHashingSink> && !TakesMarketData<ReportOnlyHashingSink>);
static_assert(TakesMarketData<HashingSink>);

// Everything but the market data is the same: reports, books, the finished-order
// memory, the collar's last trade (both instruments get a collar here: the
// reports would differ if the last trade were not kept without a feed).
TEST(MatchingEngine, ShouldProduceTheSameReportsForASinkThatTakesNoMarketData) {
  RandomFlow flow(47);
  struct ReportsOfFullSink {
    HashingSink reports;
    void on_report(const ExecReport& r) { reports.on_report(r); }
    void on_market_data(const MdEvent&) { ++md; }
    std::uint64_t md = 0;
  };
  ReportsOfFullSink full_sink;
  ReportOnlyHashingSink bare_sink;
  EngineConfig config = flow_config(128, 32);
  for (InstrumentConfig& ic : config.instruments) ic.collar = 40;
  MatchingEngine<ReportsOfFullSink> full(config, full_sink);
  MatchingEngine<ReportOnlyHashingSink> bare(config, bare_sink);
  for (int i = 0; i < 50'000; ++i) {
    const Request r = flow.next();
    full.process(r);
    bare.process(r);
  }
  EXPECT_GT(full_sink.md, 20'000u);
  EXPECT_NE(full_sink.reports.h, 0u);
  EXPECT_EQ(full_sink.reports.h, bare_sink.reports.h);
  const EngineState a = full.export_state();
  const EngineState b = bare.export_state();
  ASSERT_EQ(a.books.size(), b.books.size());
  for (std::size_t i = 0; i < a.books.size(); ++i) {
    EXPECT_FALSE(a.books[i].orders.empty());
    EXPECT_EQ(a.books[i].orders, b.books[i].orders) << "instrument " << i;
    EXPECT_EQ(a.books[i].finished_current, b.books[i].finished_current) << "instrument " << i;
    EXPECT_EQ(a.books[i].last_trade, b.books[i].last_trade) << "instrument " << i;
    EXPECT_EQ(b.books[i].md_seq, 0u);
  }
  EXPECT_EQ(a.next_order_id, b.next_order_id);
  EXPECT_EQ(bare.last_md_seq(), 0u);
  EXPECT_NO_THROW(bare.validate_invariants());
}

// The integrator's queries agree with the book walked order by order, after
// every request of a random flow (and answer nothing for nonsense arguments).
TEST(MatchingEngine, ShouldAnswerTheIntegratorsQueriesAsTheBookWalkSays) {
  RandomFlow flow(61);
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(128, 32), sink);
  std::uint64_t resting_checked = 0;
  for (int i = 0; i < 20'000; ++i) {
    const Request r = flow.next();
    engine.process(r);
    if (i % 7 != 0) continue;
    for (InstrumentId inst = 0; inst < 2; ++inst) {
      for (const Side side : {Side::kBuy, Side::kSell}) {
        std::map<Price, std::pair<Qty, std::uint32_t>> levels;
        std::optional<Price> first;
        engine.for_each_order(inst, side, [&](const OrderView& o) {
          if (!first) {
            first = o.price;
          }
          auto& [qty, n] = levels[o.price];
          qty += o.open_qty;
          ++n;
          const auto found = engine.resting_order(inst, o.client, o.client_order_id);
          ASSERT_TRUE(found.has_value());
          EXPECT_EQ(found->order_id, o.order_id);
          EXPECT_EQ(found->open_qty, o.open_qty);
          EXPECT_EQ(found->cum_qty, o.cum_qty);
          EXPECT_EQ(found->price, o.price);
          EXPECT_FALSE(engine.resting_order(1 - inst, o.client, o.client_order_id).has_value());
          ++resting_checked;
        });
        for (const auto& [price, agg] : levels) {
          const auto lvl = engine.level_at(inst, side, price);
          ASSERT_TRUE(lvl.has_value());
          EXPECT_EQ(lvl->qty, agg.first);
          EXPECT_EQ(lvl->orders, agg.second);
        }
        EXPECT_FALSE(engine.level_at(inst, side, 3'000'000).has_value());
        const TopOfBookView top = engine.top_of_book(inst);
        const std::optional<LevelView>& best = side == Side::kBuy ? top.bid : top.ask;
        ASSERT_EQ(best.has_value(), first.has_value());
        if (first) {
          EXPECT_EQ(best->price, *first);
          EXPECT_EQ(best->qty, levels[*first].first);
        }
      }
    }
  }
  EXPECT_GT(resting_checked, 10'000u);
  EXPECT_FALSE(engine.top_of_book(7).bid.has_value());
  EXPECT_FALSE(engine.level_at(0, static_cast<Side>(9), 100).has_value());
  EXPECT_FALSE(engine.resting_order(0, kMaxClientId + 1, 1).has_value());
  EXPECT_FALSE(engine.resting_order(0, 1, kMaxClientOrderId + 1).has_value());
}

// Records the raw bytes of every output, in emission order.
struct ByteRecordingSink {
  std::vector<unsigned char> bytes;
  void record(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void on_report(const ExecReport& r) { record(&r, sizeof r); }
  void on_market_data(const MdEvent& m) { record(&m, sizeof m); }
};

// The same, as an InPlaceSink whose storage holds random bytes before every
// claim: whatever the engine does not overwrite shows up in the record.
struct InPlaceByteRecordingSink : ByteRecordingSink {
  std::mt19937_64 rng{99};
  ExecReport report;
  MdEvent md;
  template <typename T>
  T& scribble(T& v) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    for (std::size_t i = 0; i < sizeof v; ++i) b[i] = static_cast<unsigned char>(rng() | 1);
    return v;
  }
  ExecReport& claim_report() { return scribble(report); }
  void commit_report() { record(&report, sizeof report); }
  MdEvent& claim_market_data() { return scribble(md); }
  void commit_market_data() { record(&md, sizeof md); }
};
static_assert(InPlaceSink<InPlaceByteRecordingSink> && !InPlaceSink<ByteRecordingSink>);

TEST(MatchingEngine, ShouldBuildEveryByteOfEveryOutputInPlaceAsOnItsStack) {
  RandomFlow flow(33);
  ByteRecordingSink copied;
  InPlaceByteRecordingSink in_place;
  MatchingEngine<ByteRecordingSink> a(flow_config(128, 32), copied);
  MatchingEngine<InPlaceByteRecordingSink> b(flow_config(128, 32), in_place);
  for (int i = 0; i < 50'000; ++i) {
    const Request r = flow.next();
    a.process(r);
    b.process(r);
  }
  ASSERT_GT(copied.bytes.size(), 50'000u * sizeof(MdEvent));
  ASSERT_EQ(copied.bytes.size(), in_place.bytes.size());
  const auto diff = std::mismatch(copied.bytes.begin(), copied.bytes.end(), in_place.bytes.begin());
  EXPECT_TRUE(diff.first == copied.bytes.end())
      << "first different byte at offset " << (diff.first - copied.bytes.begin());
}

// Levels that empty deep in the book free their capacity at once: a full side
// takes a new price after one of its levels empties, and an emptied price comes back.
TEST(MatchingEngine, ShouldFreeTheCapacityOfLevelsThatEmptyDeepInTheBook) {
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(16, 3), sink);
  auto buy = [&](ClientOrderId id, Price px) {
    const std::uint64_t before = sink.reports;
    engine.process(make_new(0, 1, id, Side::kBuy, OrderType::kLimit, px, 1));
    EXPECT_EQ(sink.reports, before + 1);
  };
  buy(1, 100);
  buy(2, 99);
  buy(3, 98);
  engine.process(make_cancel(0, 1, 2));  // 99 empties deep in the book
  buy(4, 97);                             // three levels again
  buy(5, 99);
  std::vector<Price> prices;
  engine.for_each_order(0, Side::kBuy, [&](const auto& o) { prices.push_back(o.price); });
  EXPECT_EQ(prices, (std::vector<Price>{100, 98, 97}));  // 5 rejected: 3 levels live
  engine.process(make_cancel(0, 1, 3));   // 98 empties
  buy(6, 98);                             // comes back at the same price
  buy(7, 96);
  prices.clear();
  engine.for_each_order(0, Side::kBuy, [&](const auto& o) { prices.push_back(o.price); });
  EXPECT_EQ(prices, (std::vector<Price>{100, 98, 97}));
  engine.process(make_cancel(0, 1, 1));  // best empties: next best is 98
  EXPECT_EQ(engine.best(0, Side::kBuy)->price, 98);
  engine.validate_invariants();
}

TEST(MatchingEngine, ShouldRejectAConfigWhoseQuantitiesCouldOverflow) {
  CountingSink sink;
  EngineConfig c = flow_config(64, 16);
  c.instruments[0].max_orders = 1u << 26;
  c.instruments[0].max_order_qty = Qty{1} << 40;
  EXPECT_THROW(MatchingEngine<CountingSink>(c, sink), std::invalid_argument);
  c.instruments.clear();
  EXPECT_THROW(MatchingEngine<CountingSink>(c, sink), std::invalid_argument);
}

TEST(MatchingEngine, ShouldAnswerQueriesForUnknownInstrumentsWithoutCrashing) {
  CountingSink sink;
  MatchingEngine<CountingSink> engine(flow_config(8, 4), sink);
  EXPECT_FALSE(engine.best(9, Side::kBuy).has_value());
  EXPECT_FALSE(engine.best(0, static_cast<Side>(0)).has_value());
  EXPECT_EQ(engine.live_orders(9), 0u);
  EXPECT_FALSE(engine.last_trade(9).has_value());
  EXPECT_EQ(engine.memory_bytes(9), 0u);
}

TEST(MatchingEngine, ShouldUseBoundedMemoryPerInstrumentAtDefaultCapacities) {
  CountingSink sink;
  EngineConfig c;
  c.instruments.resize(1);
  c.instruments[0].symbol = "DEF";
  MatchingEngine<CountingSink> engine(c, sink);
  const std::size_t bytes = engine.memory_bytes(0);
  std::printf("memory per instrument at default capacities (%u orders, %u levels/side): %.2f MiB\n",
              c.instruments[0].max_orders, c.instruments[0].max_levels, static_cast<double>(bytes) / (1024.0 * 1024.0));
  EXPECT_GT(bytes, std::size_t{c.instruments[0].max_orders} * sizeof(Order));
  EXPECT_LT(bytes, std::size_t{16} << 20);
}

}  // namespace
}  // namespace nanotick::engine
