// Drives Liquibook (liquibook::book::OrderBook, the open-source C++ order book
// from Object Computing, included as a peer and test oracle, never copied)
// with our engine::Requests, one Liquibook book per instrument, and reports its
// trades as PeerFills (maker key, taker key, maker's price, qty).
//
// Mapping:
//   limit  -> Liquibook limit order            IOC    -> oc_immediate_or_cancel
//   FOK    -> oc_fill_or_kill (AON + IOC)      market -> price 0 (Liquibook's market order) + IOC
//   cancel -> OrderBook::cancel
//   modify -> cancel + add of a new order with the remaining quantity (new total - filled) at
//             the new price: always loses priority (Liquibook's own replace() also re-queues)
// Liquibook prices are unsigned and 0 means "market", so a price p is passed as
// p - min_price + 1 (>= 1 inside the band) and mapped back in the fills.
//
// Glue kept as cheap as our own structures allow, so the comparison measures
// Liquibook's book and not the adapter: orders live in a core::ObjectPool and
// the (client, client order id) index is a core::IntHashMap. Validation as in
// peer_books.hpp (no STP, no collar). OrderPtr is a raw pointer to a plain
// struct (no virtual Order interface: Liquibook only needs the member calls).
//
// Not thread-safe: one thread owns an adapter. Liquibook allocates (std::multimap
// nodes, callback vectors) on its hot path.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <liquibook/book/order_book.h>

#include "core/int_hash_map.hpp"
#include "core/object_pool.hpp"
#include "engine/request.hpp"
#include "engine/types.hpp"
#include "peer_books.hpp"

namespace nanotick::bench {

struct LiquibookOrder {
  // The interface liquibook::book::OrderBook calls on an OrderPtr.
  bool is_buy() const noexcept { return buy; }
  liquibook::book::Price price() const noexcept { return lb_price; }
  liquibook::book::Price stop_price() const noexcept { return 0; }
  liquibook::book::Quantity order_qty() const noexcept { return qty; }

  std::uint64_t key;
  engine::InstrumentId instrument;
  bool buy;
  liquibook::book::Price lb_price;  // shifted price (0 = market)
  liquibook::book::Quantity qty;    // this incarnation's quantity (Liquibook's order_qty)
  engine::Qty filled;               // over all incarnations (a modify is cancel + new)
  engine::Qty incarnation_filled;   // of `qty`
};

template <PeerFillSink Sink>
class LiquibookAdapter {
  // Liquibook's OrderBook has virtual callbacks but a non-virtual destructor;
  // Book is final and only ever destroyed as a Book (unique_ptr<Book>).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
  class Book final : public liquibook::book::OrderBook<LiquibookOrder*> {
   public:
    Book(LiquibookAdapter& owner, engine::Price shift) : owner_(owner), shift_(shift) {}

   protected:
    void on_fill(LiquibookOrder* const& taker, LiquibookOrder* const& maker, liquibook::book::Quantity qty,
                 liquibook::book::Price price, bool, bool maker_filled) override {
      const auto q = static_cast<engine::Qty>(qty);
      taker->filled += q;
      taker->incarnation_filled += q;
      maker->filled += q;
      maker->incarnation_filled += q;
      owner_.sink_.on_fill(
          PeerFill{maker->instrument, maker->key, taker->key, static_cast<engine::Price>(price) + shift_, q});
      if (maker_filled) owner_.retire(maker);
    }

   private:
    LiquibookAdapter& owner_;
    engine::Price shift_;  // engine price = Liquibook price + shift_
  };
#pragma GCC diagnostic pop

 public:
  // Pool and index sized for every instrument's max_orders, as the engine sizes its own.
  LiquibookAdapter(const engine::EngineConfig& config, Sink& sink)
      : LiquibookAdapter(config, sink, max_orders_of(config)) {}

  // `max_live_orders`: pool and index size over all instruments (start-up allocation).
  LiquibookAdapter(const engine::EngineConfig& config, Sink& sink, std::size_t max_live_orders)
      : instruments_(config.instruments), sink_(sink), pool_(max_live_orders + 1), index_(max_live_orders + 1) {
    books_.reserve(config.instruments.size());
    for (const engine::InstrumentConfig& ic : config.instruments) {
      books_.push_back(std::make_unique<Book>(*this, ic.min_price - 1));
    }
  }

  PeerResult process(const engine::Request& r) { return dispatch_to_peer(*this, r); }

  std::size_t live_orders() const noexcept { return index_.size(); }

  // Visits (key, price, open qty) of one side's orders as Liquibook holds them
  // (its bids()/asks() multimaps iterate in priority order).
  template <typename F>
  void for_each_order(engine::InstrumentId instrument, engine::Side side, F&& fn) const {
    const Book& b = *books_[instrument];
    const engine::Price shift = instruments_[instrument].min_price - 1;
    for (const auto& [price, tracker] : side == engine::Side::kBuy ? b.bids() : b.asks()) {
      fn(tracker.ptr()->key, static_cast<engine::Price>(price.price()) + shift,
         static_cast<engine::Qty>(tracker.open_qty()));
    }
  }

 private:
  template <typename Peer>
  friend PeerResult dispatch_to_peer(Peer&, const engine::Request&);
  static std::size_t max_orders_of(const engine::EngineConfig& config) noexcept {
    std::size_t n = 0;
    for (const engine::InstrumentConfig& ic : config.instruments) n += ic.max_orders;
    return n;
  }

  // Every pooled order is in the index from its entry until it is done.
  void retire(LiquibookOrder* o) noexcept {
    (void)index_.erase(o->key);
    pool_.release(o);
  }

  // Adds `o` (already in the index) to its book; frees it unless it rests.
  PeerResult submit(LiquibookOrder* o, liquibook::book::OrderConditions conditions) {
    books_[o->instrument]->add(o, conditions);
    const bool rests =
        conditions == liquibook::book::oc_no_conditions && o->incarnation_filled < static_cast<engine::Qty>(o->qty);
    if (rests) return PeerResult::kRested;
    retire(o);
    return PeerResult::kDone;
  }

  PeerResult on_new(const engine::Request& r) {
    if (!peer_new_order_valid(r, instruments_)) return PeerResult::kRejected;
    const std::uint64_t key = order_key(r.client, r.client_order_id);
    if (index_.contains(key)) return PeerResult::kRejected;
    const bool market = r.order_type == engine::OrderType::kMarket;
    LiquibookOrder* o =
        pool_.allocate(LiquibookOrder{key, r.instrument, r.side == engine::Side::kBuy,
                                      market ? liquibook::book::Price{0} : lb_price(r.instrument, r.price),
                                      static_cast<liquibook::book::Quantity>(r.qty), 0, 0});
    if (o == nullptr) return PeerResult::kRejected;
    (void)index_.insert(key, o);
    if constexpr (PeerAckSink<Sink>) sink_.on_accepted(key, market ? 0 : r.price, r.qty);
    liquibook::book::OrderConditions conditions = liquibook::book::oc_no_conditions;
    if (r.order_type == engine::OrderType::kIoc || market) {
      conditions = liquibook::book::oc_immediate_or_cancel;
    } else if (r.order_type == engine::OrderType::kFok) {
      conditions = liquibook::book::oc_fill_or_kill;
    }
    return submit(o, conditions);
  }

  LiquibookOrder* live(const engine::Request& r) {
    LiquibookOrder* const* found = index_.find(order_key(r.client, r.client_order_id));
    if (found == nullptr || (*found)->instrument != r.instrument) return nullptr;
    return *found;
  }

  PeerResult on_cancel(const engine::Request& r) {
    LiquibookOrder* o = live(r);
    if (o == nullptr) return PeerResult::kUnknownOrder;
    books_[o->instrument]->cancel(o);
    retire(o);
    return PeerResult::kCancelled;
  }

  PeerResult on_modify(const engine::Request& r) {
    LiquibookOrder* o = live(r);
    if (o == nullptr) return PeerResult::kUnknownOrder;
    const engine::InstrumentConfig& ic = instruments_[r.instrument];
    if (r.qty <= 0 || r.qty > ic.max_order_qty || r.price % ic.tick_size != 0 || r.price < ic.min_price ||
        r.price > ic.max_price) {
      return PeerResult::kRejected;
    }
    const engine::Qty open = static_cast<engine::Qty>(o->qty) - o->incarnation_filled;
    const engine::Qty total = o->filled + open;
    const liquibook::book::Price new_lb = lb_price(r.instrument, r.price);
    if (new_lb == o->lb_price && r.qty == total) return PeerResult::kRejected;
    books_[o->instrument]->cancel(o);
    if (r.qty <= o->filled) {
      retire(o);
      return PeerResult::kCancelled;
    }
    if constexpr (PeerAckSink<Sink>) sink_.on_modified(o->key, r.price, r.qty);
    // Same key, same slot: a new Liquibook order for the remaining quantity.
    o->lb_price = new_lb;
    o->qty = static_cast<liquibook::book::Quantity>(r.qty - o->filled);
    o->incarnation_filled = 0;
    return submit(o, liquibook::book::oc_no_conditions);
  }

  liquibook::book::Price lb_price(engine::InstrumentId i, engine::Price p) const noexcept {
    return static_cast<liquibook::book::Price>(p - (instruments_[i].min_price - 1));
  }

  std::vector<engine::InstrumentConfig> instruments_;
  Sink& sink_;
  core::ObjectPool<LiquibookOrder> pool_;
  core::IntHashMap<std::uint64_t, LiquibookOrder*> index_;
  std::vector<std::unique_ptr<Book>> books_;
};

}  // namespace nanotick::bench
