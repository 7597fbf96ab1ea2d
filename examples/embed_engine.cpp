// Embedding nanotick's matching engine: one instrument, a sink that prints
// the fills, three requests and the queries an integrator calls between them.
// Built and run by the tests (ctest -R example_embed_engine); docs/MATCHING.md
// shows this file as it is.
#include <cstdio>
#include <cstdlib>

#include "engine/matching_engine.hpp"

namespace ne = nanotick::engine;

// The engine calls the sink synchronously on its own thread. This one takes
// the execution reports only: with no on_market_data, the engine builds no
// market data at all (docs/MATCHING.md "Embedding the engine").
struct PrintFills {
  void on_report(const ne::ExecReport& r) {
    if (r.type == ne::ReportType::kFill && !r.is_maker)
      std::printf("client %u order %llu bought %lld at %lld\n", r.client,
                  static_cast<unsigned long long>(r.client_order_id), static_cast<long long>(r.last_qty),
                  static_cast<long long>(r.last_price));
  }
};

static void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "unexpected: %s\n", what);
    std::exit(1);
  }
}

int main() {
  ne::EngineConfig config;
  config.instruments.push_back(ne::InstrumentConfig{
      .symbol = "ACME", .tick_size = 1, .min_price = 1, .max_price = 100'000, .max_orders = 1024, .max_levels = 256});
  PrintFills sink;
  ne::MatchingEngine<PrintFills> engine(config, sink);  // allocates everything here, never again

  const ne::InstrumentId acme = 0;
  engine.process(ne::make_new(acme, /*client*/ 7, /*id*/ 1, ne::Side::kSell, ne::OrderType::kLimit, 101, 50));
  engine.process(ne::make_new(acme, 7, 2, ne::Side::kSell, ne::OrderType::kLimit, 101, 30));
  engine.process(ne::make_new(acme, 9, 1, ne::Side::kBuy, ne::OrderType::kLimit, 101, 60));

  // Best bid/ask: the buy took all of order 1 and 10 of order 2.
  const ne::TopOfBookView top = engine.top_of_book(acme);
  expect(!top.bid && top.ask && top.ask->price == 101 && top.ask->qty == 20, "top of book");
  // Depth at a price and the number of orders there.
  const auto level = engine.level_at(acme, ne::Side::kSell, 101);
  expect(level && level->qty == 20 && level->orders == 1, "depth at 101");
  // A resting order's state by the client's own id.
  const auto order = engine.resting_order(acme, 7, 2);
  expect(order && order->open_qty == 20 && order->cum_qty == 10, "client 7's order 2");
  expect(!engine.resting_order(acme, 7, 1), "order 1 is filled, so not resting");
  std::printf("ask %lld x %lld in %u order(s); client 7's order 2: %lld open, %lld filled\n",
              static_cast<long long>(top.ask->price), static_cast<long long>(top.ask->qty), level->orders,
              static_cast<long long>(order->open_qty), static_cast<long long>(order->cum_qty));
  return 0;
}
