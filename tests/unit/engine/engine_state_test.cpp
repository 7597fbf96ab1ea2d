// export_state / import_state: an engine loaded from another's exported state
// continues with exactly the same outputs and books, on random streams of
// every request type (the shapes of the differential test), at many cut
// points (each instrument's market data sequence number included);
// inconsistent states are refused.
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/book_state.hpp"
#include "engine/matching_engine.hpp"
#include "reference/random_requests.hpp"
#include "reference/recording_sink.hpp"

namespace nanotick::engine {
namespace {

using nanotick::reference::differential_shapes;
using nanotick::reference::first_difference;
using nanotick::reference::RandomRequests;
using nanotick::reference::RecordingSink;

using Engine = MatchingEngine<RecordingSink>;

TEST(EngineState, ImportedEngineContinuesIdentically) {
  for (const auto& shape : differential_shapes()) {
    for (const std::uint64_t cut : {0ull, 1ull, 37ull, 500ull, 4000ull}) {
      RecordingSink sink_a;
      Engine a(shape.config, sink_a);
      RandomRequests gen(shape.config, 1000 + cut, shape.clients, shape.new_percent);
      for (std::uint64_t i = 0; i < cut; ++i) a.process(gen.next());
      const EngineState exported = a.export_state();

      RecordingSink sink_b;
      Engine b(shape.config, sink_b);
      b.import_state(exported);
      ASSERT_EQ(compare_books(a, b), "") << shape.name << " cut " << cut;
      for (InstrumentId inst = 0; inst < a.instrument_count(); ++inst)
        ASSERT_EQ(b.last_instrument_md_seq(inst), a.last_instrument_md_seq(inst)) << shape.name << " cut " << cut;
      EXPECT_TRUE(b.export_state() == exported) << shape.name << " cut " << cut;
      for (std::uint64_t i = 0; i < 3000; ++i) {
        const Request r = gen.next();
        sink_a.clear();
        sink_b.clear();
        a.process(r);
        b.process(r);
        ASSERT_EQ(first_difference(sink_a, sink_b), "") << shape.name << " cut " << cut << " request " << i;
      }
      EXPECT_EQ(compare_books(a, b), "");
      EXPECT_EQ(state_hash(a), state_hash(b));
    }
  }
}

TEST(EngineState, InconsistentStatesAreRefused) {
  const auto shape = differential_shapes()[0];  // a copy: the function returns by value
  RecordingSink sink;
  Engine a(shape.config, sink);
  RandomRequests gen(shape.config, 7, shape.clients, 80);
  for (int i = 0; i < 200; ++i) a.process(gen.next());
  const EngineState good = a.export_state();
  auto refused = [&](EngineState st, const char* words) {
    RecordingSink s;
    Engine b(shape.config, s);
    try {
      b.import_state(st);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  EngineState st = good;
  st.books.pop_back();
  refused(st, "books for");
  std::size_t with_orders = 0;
  while (with_orders < good.books.size() && good.books[with_orders].orders.empty()) ++with_orders;
  ASSERT_LT(with_orders, good.books.size()) << "the stream left no resting order";
  st = good;
  st.books[with_orders].orders[0].cum_qty = st.books[with_orders].orders[0].order_qty;  // nothing open
  refused(st, "not a valid resting order");
  st = good;
  st.books[with_orders].orders.push_back(st.books[with_orders].orders[0]);  // same client order id twice
  refused(st, "duplicate client order id");
  st = good;
  st.books[with_orders].orders[0].price = shape.config.instruments[with_orders].max_price + 1;  // outside the band
  refused(st, "not a valid resting order");
  st = good;
  st.books[with_orders].orders[0].side = static_cast<Side>(9);
  refused(st, "not a valid resting order");
  ASSERT_GT(good.md_seq, 0u) << "the stream produced no market data";
  st = good;
  st.books[with_orders].md_seq += 1;  // one instrument claims an event the engine never numbered
  refused(st, "add up to");
  st = good;
  st.books[with_orders].md_seq = ~Seq{0};  // would wrap the sum
  refused(st, "add up to more");
  std::size_t with_finished = 0;
  while (with_finished < good.books.size() && good.books[with_finished].finished_current.empty()) ++with_finished;
  ASSERT_LT(with_finished, good.books.size()) << "the stream finished no order";
  st = good;
  st.books[with_finished].finished_current.push_back(st.books[with_finished].finished_current[0]);
  st.books[with_finished].finished_current_adds += 1;
  refused(st, "listed twice");
  st = good;
  st.books[with_finished].finished_current_adds =
      static_cast<std::uint32_t>(st.books[with_finished].finished_current.size() - 1);  // fewer adds than keys
  refused(st, "count out of range");
  st = good;
  st.books[with_finished].finished_current_adds = shape.config.instruments[with_finished].max_orders + 1;
  refused(st, "count out of range");
  RecordingSink s;
  Engine used(shape.config, s);
  used.process(gen.next());
  EXPECT_THROW(used.import_state(good), std::invalid_argument);  // not fresh
}

}  // namespace
}  // namespace nanotick::engine
