// The whole state of a MatchingEngine as plain values: what an engine
// snapshot stores (exchange/engine_snapshot.hpp) and what
// MatchingEngine::export_state / import_state exchange. An engine that
// imports the state another exported produces, from then on, exactly the
// outputs the exporter would have: counters, books in priority order and the
// finished-order memory (its two generations) are all here. Start-up / snapshot code
// only (vectors). Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/types.hpp"

namespace nanotick::engine {

struct EngineState {
  struct Order {
    OrderId order_id;
    ClientId client;
    ClientOrderId client_order_id;
    Side side;
    StpMode stp;
    Price price;
    Qty order_qty;
    Qty cum_qty;
    bool operator==(const Order&) const = default;
  };
  struct Book {
    bool has_last_trade = false;
    Price last_trade = 0;
    Seq md_seq = 0;                      // the instrument's last market data instrument_seq
    std::vector<Order> orders;           // bids best first (FIFO within a level), then asks best first
    // Finished-order memory (engine/finished_orders.hpp): each generation's
    // keys, sorted ascending, and the add()s the current one has taken.
    std::vector<std::uint64_t> finished_previous;
    std::vector<std::uint64_t> finished_current;
    std::uint32_t finished_current_adds = 0;
    bool operator==(const Book&) const = default;
  };

  Seq requests = 0;
  Seq report_seq = 0;
  Seq md_seq = 0;             // the engine-wide one: the sum of the books' md_seq
  OrderId next_order_id = 0;  // last assigned
  std::vector<Book> books;    // one per instrument, in id order
  bool operator==(const EngineState&) const = default;
};

}  // namespace nanotick::engine
