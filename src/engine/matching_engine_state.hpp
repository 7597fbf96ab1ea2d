// The matching engine's cold half: the whole state exported as plain values
// for engine snapshots, imported into a fresh engine on recovery (every value
// checked), and the invariant check tests and import run. Start-up and
// snapshot code: allocates and throws; never on the request path. Included at
// the end of engine/matching_engine.hpp: include that header, not this one.
#pragma once

#include <stdexcept>
#include <string>

#include "engine/matching_engine.hpp"

namespace nanotick::engine {

template <EngineSink Sink>
EngineState MatchingEngine<Sink>::export_state() const {
  EngineState st;
  st.requests = requests_;
  st.report_seq = report_seq_;
  st.md_seq = md_seq_;
  st.next_order_id = next_order_id_;
  for (const auto& bp : books_) {
    EngineState::Book book;
    book.has_last_trade = bp->has_last_trade;
    book.last_trade = bp->last_trade;
    book.md_seq = bp->md_seq;
    for (const BookSide* side : {&bp->bids, &bp->asks})
      side->walk([&book](const PriceLevel& lvl) {
        for (const Order* o = lvl.head; o != nullptr; o = o->next)
          book.orders.push_back(
              {o->order_id, o->client(), o->client_order_id(), o->side, o->stp, o->price, o->order_qty, o->cum_qty});
        return true;
      });
    book.finished_previous = bp->finished.previous_keys();
    book.finished_current = bp->finished.current_keys();
    book.finished_current_adds = bp->finished.current_adds();
    st.books.push_back(std::move(book));
  }
  return st;
}

template <EngineSink Sink>
void MatchingEngine<Sink>::import_state(const EngineState& st) {
  if (requests_ != 0 || live_.size() != 0) throw std::invalid_argument("import_state: the engine is not fresh");
  if (st.books.size() != books_.size())
    throw std::invalid_argument("import_state: " + std::to_string(st.books.size()) + " books for " +
                                std::to_string(books_.size()) + " instruments");
  // Every event has one instrument, so the per-instrument counters add up to
  // the engine's; anything else would renumber a feed consumers already saw.
  Seq md_total = 0;
  for (const EngineState::Book& sb : st.books) {
    if (sb.md_seq > st.md_seq - md_total)
      throw std::invalid_argument(
          "import_state: the instruments' market data sequence numbers add up to more "
          "than the engine's " +
          std::to_string(st.md_seq));
    md_total += sb.md_seq;
  }
  if (md_total != st.md_seq)
    throw std::invalid_argument("import_state: the instruments' market data sequence numbers add up to " +
                                std::to_string(md_total) + ", the engine's is " + std::to_string(st.md_seq));
  requests_ = st.requests;
  report_seq_ = st.report_seq;
  md_seq_ = st.md_seq;
  next_order_id_ = st.next_order_id;
  for (std::size_t i = 0; i < books_.size(); ++i) {
    OrderBook& b = *books_[i];
    const EngineState::Book& sb = st.books[i];
    const std::string where = "import_state: instrument " + std::to_string(i) + ": ";
    b.has_last_trade = sb.has_last_trade;
    b.last_trade = sb.last_trade;
    b.md_seq = sb.md_seq;
    for (const EngineState::Order& so : sb.orders) {
      if ((so.side != Side::kBuy && so.side != Side::kSell) || static_cast<std::uint8_t>(so.stp) > 3 ||
          so.client > kMaxClientId || so.client_order_id > kMaxClientOrderId || so.cum_qty < 0 ||
          so.order_qty <= so.cum_qty || so.order_qty > b.max_order_qty || so.price % b.tick_size != 0 ||
          so.price < b.min_price || so.price > b.max_price || so.order_id == 0 || so.order_id > st.next_order_id)
        throw std::invalid_argument(where + "order " + std::to_string(so.order_id) + " is not a valid resting order");
      const std::uint64_t key = order_key(so.client, so.client_order_id);
      if (live_.find(key) != nullptr) throw std::invalid_argument(where + "duplicate client order id");
      BookSide& side = b.side(so.side);
      if (b.orders.available() == 0 || (!side.has_free_level() && side.find(so.price) == nullptr))
        throw std::invalid_argument(where + "more orders or levels than the configured capacity");
      Order in;
      in.key = key;
      in.order_id = so.order_id;
      in.price = so.price;
      in.order_qty = so.order_qty;
      in.cum_qty = so.cum_qty;
      in.side = so.side;
      in.stp = so.stp;
      Order* o = b.orders.allocate(in);
      o->level = side.find_or_insert(o->price);
      side.level(o->level).push_back(o);
      live_.insert(key, o);
    }
    try {
      b.finished.restore(sb.finished_previous, sb.finished_current, sb.finished_current_adds);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
  }
  try {
    validate_invariants();  // sorted levels, uncrossed book, consistent index
  } catch (const std::logic_error& e) {
    throw std::invalid_argument(std::string("import_state: ") + e.what());
  }
}

template <EngineSink Sink>
void MatchingEngine<Sink>::validate_invariants() const {
  std::size_t total = 0;
  Seq md_total = 0;
  for (const auto& b : books_) {
    total += b->validate();
    md_total += b->md_seq;
  }
  if (total != live_.size()) throw std::logic_error("live-order index size differs from the books");
  if (md_total != md_seq_)
    throw std::logic_error("the instruments' market data sequence numbers do not add up to the engine's");
  live_.for_each([this](std::uint64_t key, const Order* o) {
    if (o->key != key) throw std::logic_error("live-order index key differs from its order's");
    bool owned = false;
    for (const auto& b : books_) owned = owned || b->orders.owns(o);
    if (!owned) throw std::logic_error("live-order index points outside every order pool");
    if (o->order_id == 0 || o->order_id > next_order_id_) throw std::logic_error("order id never assigned");
  });
}

}  // namespace nanotick::engine
