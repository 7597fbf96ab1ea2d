// The matching engine: a pure, deterministic, single-threaded state machine
// implementing docs/MATCHING.md. Requests in through process(); execution
// reports and market data events out, synchronously, through the Sink (a
// template parameter: static dispatch). Not thread-safe: one thread owns the
// engine and calls everything on it.
//
// process() does no I/O, reads no clock, logs nothing, never allocates and
// never throws: every table is sized from the EngineConfig and pre-faulted in
// the constructor, capacity exhaustion is a reject. Layout:
//   - per instrument an OrderBook (order_book.hpp): two BookSides (sorted
//     blocks of levels, best last: book_side.hpp), a fixed ObjectPool of resting
//     Orders linked intrusively into their level's FIFO, a FinishedOrders memory;
//   - engine-wide, the live-order index (client, client_order_id) -> Order*
//     (live_orders.hpp; duplicate ids are rejected on any instrument).
// The incoming order lives on the stack while it matches and gets a pool slot
// only if it rests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/compiler.hpp"
#include "engine/book_views.hpp"
#include "engine/engine_state.hpp"
#include "engine/events.hpp"
#include "engine/live_orders.hpp"
#include "engine/order.hpp"
#include "engine/order_book.hpp"
#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

template <EngineSink Sink>
class MatchingEngine {
 public:
  using LevelView = engine::LevelView;  // engine/book_views.hpp
  using OrderView = engine::OrderView;
  using TopOfBookView = engine::TopOfBookView;

  // Validates `config` (throws std::invalid_argument naming the instrument and
  // field), then allocates and pre-faults every table. `sink` must outlive the engine.
  MatchingEngine(const EngineConfig& config, Sink& sink) : sink_(sink), live_(total_orders(config)) {
    books_.reserve(config.instruments.size());
    std::size_t largest = 0;
    for (std::size_t i = 0; i < config.instruments.size(); ++i) {
      books_.push_back(std::make_unique<OrderBook>(config.instruments[i], static_cast<InstrumentId>(i)));
      largest = std::max<std::size_t>(largest, config.instruments[i].max_orders);
    }
    mass_cancel_scratch_.reserve(largest);  // a mass cancel never allocates
  }

  MatchingEngine(const MatchingEngine&) = delete;
  MatchingEngine& operator=(const MatchingEngine&) = delete;

  // One request -> all its reports and events, in order, into the sink.
  void process(const Request& rq) noexcept {
    ++requests_;
    event_id_ = rq.event_id;
    instrument_ = rq.instrument;  // every output of a request is on its instrument
    switch (rq.type) {
      case RequestType::kNew: on_new(rq); break;
      case RequestType::kCancel: on_cancel(rq); break;
      case RequestType::kModify: on_modify(rq); break;
      case RequestType::kMassCancel: on_mass_cancel(rq); break;
      default: reject(rq, ReportType::kRejected, RejectReason::kInvalidRequestType); break;
    }
  }

  // One request refused before it reaches a book, by a check outside the
  // engine (the venue's pre-trade controls, src/controls): counted as a
  // request and answered like one of the engine's own rejects -- kRejected
  // for a new order, kModifyRejected, kCancelRejected -- with the next report
  // sequence number, so the outputs stay one gap-free stream.
  void refuse(const Request& rq, RejectReason why) noexcept {
    ++requests_;
    event_id_ = rq.event_id;
    instrument_ = rq.instrument;
    const ReportType type = rq.type == RequestType::kModify   ? ReportType::kModifyRejected
                            : rq.type == RequestType::kCancel ? ReportType::kCancelRejected
                                                              : ReportType::kRejected;
    reject(rq, type, why);
  }

  // An admin request (is_admin_request) answered by the controls around the
  // engine (src/controls): one kAdminDone report to the admin (rq.client),
  // with the next report sequence number. `count_request`: false when
  // process() has already counted the request (the mass cancel a cancel-all
  // ran). `cancelled`: the orders it cancelled; `why` != kNone: refused.
  NT_COLD void answer_admin(const Request& rq, RejectReason why, Qty cancelled, bool count_request) noexcept {
    if (count_request) ++requests_;
    event_id_ = rq.event_id;
    instrument_ = rq.instrument;
    emit_report(ReportType::kAdminDone, [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT {
      r.client = rq.client;
      r.instrument = rq.instrument;
      r.client_order_id = rq.client_order_id;
      r.order_qty = rq.qty;
      r.last_qty = cancelled;
      r.reason = why;
      r.request_type = static_cast<std::uint8_t>(rq.type);
    });
  }

  // An admin's cancel-all (src/controls; already validated: `target` <=
  // kMaxClientId, rq.instrument known or kAllInstruments): every live order
  // of `target` there, cancelled as by a mass cancel, each with
  // kAdminCancel. Counted as one request; answer_admin follows.
  NT_COLD void cancel_all_by_admin(const Request& rq, ClientId target) noexcept {
    ++requests_;
    event_id_ = rq.event_id;
    instrument_ = rq.instrument;
    cancel_all_of(rq.instrument, target, CancelReason::kAdminCancel);
  }

  // An admin halted (or resumed) instrument rq.instrument: one kTradingState
  // market data event, numbered in the feed like any other. The caller
  // checks the instrument exists.
  NT_COLD void publish_trading_state(const Request& rq, bool halted) noexcept {
    event_id_ = rq.event_id;
    instrument_ = rq.instrument;
    md(*books_[rq.instrument], [&](MdEvent& m) NT_LAMBDA_INLINE_NOEXCEPT {
      m.type = MdType::kTradingState;
      m.qty = halted ? 1 : 0;
    });
  }

  // Optional hint for replay loops: starts the cache misses `next` will take
  // (its live-index slot, its instrument's finished-order slots) so they
  // overlap the current request's work. Reads nothing but the request's
  // fields; any input is harmless; never changes the outputs.
  NT_ALWAYS_INLINE void prefetch(const Request& next) const noexcept {
    const std::uint64_t key = order_key(next.client & kMaxClientId, next.client_order_id);
    live_.prefetch(key);
    if (next.instrument < books_.size()) books_[next.instrument]->finished.prefetch_add(key);
  }

  std::size_t instrument_count() const noexcept { return books_.size(); }

  // ---- queries for an integrator (docs/MATCHING.md "Embedding the engine") --------
  // Cheap enough to call after every request: none allocates, none changes
  // anything, any argument is safe (an unknown instrument, side or id is nullopt).

  // The best level of one side, O(1).
  std::optional<LevelView> best(InstrumentId inst, Side side) const noexcept {
    if (inst >= books_.size() || (side != Side::kBuy && side != Side::kSell)) return std::nullopt;
    const PriceLevel* lvl = books_[inst]->side(side).best();
    if (lvl == nullptr) return std::nullopt;
    return LevelView{lvl->price, lvl->qty, lvl->orders};
  }

  // Both best levels, O(1).
  TopOfBookView top_of_book(InstrumentId inst) const noexcept {
    return TopOfBookView{best(inst, Side::kBuy), best(inst, Side::kSell)};
  }

  // The depth at `price` on `side`: open quantity and number of orders there
  // (nullopt: no order at that price). A scan of at most 8 levels from the
  // touch, then a binary search over the side's levels.
  std::optional<LevelView> level_at(InstrumentId inst, Side side, Price price) const noexcept {
    if (inst >= books_.size() || (side != Side::kBuy && side != Side::kSell)) return std::nullopt;
    const PriceLevel* lvl = books_[inst]->side(side).find(price);
    if (lvl == nullptr) return std::nullopt;
    return LevelView{lvl->price, lvl->qty, lvl->orders};
  }

  // A resting order's state by its client's id, O(1) (one probe of the
  // live-order index). nullopt: not resting on `inst` -- never entered,
  // filled, cancelled, or resting on another instrument.
  std::optional<OrderView> resting_order(InstrumentId inst, ClientId client, ClientOrderId id) const noexcept {
    if (inst >= books_.size() || client > kMaxClientId || id > kMaxClientOrderId) return std::nullopt;
    const Order* o = live_.find(order_key(client, id));
    if (o == nullptr || !books_[inst]->orders.owns(o)) return std::nullopt;
    return view_of(*o);
  }

  // Calls fn(OrderView) for each resting order: best price first, FIFO within a level.
  template <typename F>
  void for_each_order(InstrumentId inst, Side side, F&& fn) const {
    if (inst >= books_.size() || (side != Side::kBuy && side != Side::kSell)) return;
    books_[inst]->side(side).walk([&fn](const PriceLevel& lvl) {
      for (const Order* o = lvl.head; o != nullptr; o = o->next) fn(view_of(*o));
      return true;
    });
  }

  std::size_t live_orders(InstrumentId inst) const noexcept {
    return inst < books_.size() ? books_[inst]->orders.in_use() : 0;
  }
  Seq requests_processed() const noexcept { return requests_; }
  Seq last_report_seq() const noexcept { return report_seq_; }
  Seq last_md_seq() const noexcept { return md_seq_; }
  // The instrument's last MdEvent::instrument_seq (0: no event yet, or no such instrument).
  Seq last_instrument_md_seq(InstrumentId inst) const noexcept {
    return inst < books_.size() ? books_[inst]->md_seq : 0;
  }
  std::optional<Price> last_trade(InstrumentId inst) const noexcept {
    if (inst >= books_.size() || !books_[inst]->has_last_trade) return std::nullopt;
    return books_[inst]->last_trade;
  }

  // Bytes allocated for instrument `inst`, its share of the live-order index included.
  std::size_t memory_bytes(InstrumentId inst) const noexcept {
    if (inst >= books_.size()) return 0;
    const OrderBook& b = *books_[inst];
    const double share = static_cast<double>(b.orders.capacity()) / static_cast<double>(live_.capacity());
    const auto index = static_cast<std::size_t>(share * static_cast<double>(live_.table_size()) *
                                                static_cast<double>(LiveOrders::slot_size()));
    InstrumentConfig cfg;
    cfg.max_orders = static_cast<std::uint32_t>(b.orders.capacity());
    cfg.max_levels = b.bids.capacity();
    return OrderBook::bytes_for(cfg) + index;
  }

  // ---- cold state I/O (engine/matching_engine_state.hpp) ---------------------
  // The whole state as plain values (engine/engine_state.hpp), for engine
  // snapshots. Cold: allocates.
  EngineState export_state() const;
  // Loads `st` into this engine, which must be fresh (nothing processed) and
  // configured as the exporter was. From then on it produces exactly the
  // outputs the exporter would have. Throws std::invalid_argument on any
  // inconsistency (wrong instrument count, an order outside the band or the
  // capacity, a duplicate id, a crossed book, instrument market data sequence
  // numbers that do not add up to the engine's), leaving the engine unusable.
  void import_state(const EngineState& st);
  // Tests and import: throws std::logic_error describing the first broken invariant.
  void validate_invariants() const;

 private:
  static OrderView view_of(const Order& o) noexcept {
    return OrderView{o.order_id,  o.client(), o.client_order_id(), o.side, o.price,
                     o.order_qty, o.cum_qty,  o.open_qty(),        o.stp};
  }

  static constexpr bool kMarketData = TakesMarketData<Sink>;  // events.hpp: decided by the sink's type
  struct Top {
    Price bid_price, bid_qty, ask_price, ask_qty;
    bool operator==(const Top&) const = default;
  };
  enum class MatchEnd : std::uint8_t { kNoMore, kSelfTradeStop };

  // Validates the config (which also bounds prices, the collar and
  // max_orders * max_order_qty so every sum stays in int64) and counts orders.
  static std::size_t total_orders(const EngineConfig& config) {
    config.validate();
    std::size_t n = 0;
    for (const InstrumentConfig& in : config.instruments) n += in.max_orders;
    return n;
  }

  // ---- validation -------------------------------------------------------
  // Step 2, shared by every request type (the others are per type below).
  NT_ALWAYS_INLINE RejectReason check_common(const Request& rq) const noexcept {
    if (rq.instrument >= books_.size()) return RejectReason::kUnknownInstrument;
    return RejectReason::kNone;
  }
  NT_ALWAYS_INLINE static RejectReason check_ids(const Request& rq) noexcept {
    if (rq.client > kMaxClientId) return RejectReason::kInvalidClientId;
    if (rq.client_order_id > kMaxClientOrderId) return RejectReason::kInvalidClientOrderId;
    return RejectReason::kNone;
  }
  NT_ALWAYS_INLINE static RejectReason check_qty(const OrderBook& b, Qty qty) noexcept {
    if (qty <= 0) return RejectReason::kZeroQuantity;
    if (qty > b.max_order_qty) return RejectReason::kQuantityTooLarge;
    return RejectReason::kNone;
  }
  NT_ALWAYS_INLINE static RejectReason check_price(const OrderBook& b, Price p) noexcept {
    if (p % b.tick_size != 0) return RejectReason::kPriceOffTick;
    if (p < b.min_price || p > b.max_price) return RejectReason::kPriceOutOfBand;
    if (b.collar > 0 && b.has_last_trade) {
      const Price d = p > b.last_trade ? p - b.last_trade : b.last_trade - p;  // both in +-2^61
      if (d > b.collar) return RejectReason::kPriceOutsideCollar;
    }
    return RejectReason::kNone;
  }
  // The kTooLateToCancel / kUnknownOrder decision for a key not live here.
  NT_ALWAYS_INLINE static RejectReason not_live(const OrderBook& b, std::uint64_t key) noexcept {
    return b.finished.contains(key) ? RejectReason::kTooLateToCancel : RejectReason::kUnknownOrder;
  }

  // ---- requests (engine/matching_engine_requests.hpp) -----------------------
  void on_new(const Request& rq) noexcept;
  NT_ALWAYS_INLINE Order* find_live_or_reject(const Request& rq, ReportType reject_type) noexcept;
  void on_cancel(const Request& rq) noexcept;
  NT_COLD void on_mass_cancel(const Request& rq) noexcept;
  void cancel_all_of(InstrumentId inst, ClientId client, CancelReason reason) noexcept;
  void cancel_all_in(InstrumentId inst, ClientId client, CancelReason reason) noexcept;
  void on_modify(const Request& rq) noexcept;

  // ---- matching and book maintenance (engine/matching_engine_matching.hpp) --
  static Price market_limit(const OrderBook& b, Side side) noexcept;
  NT_ALWAYS_INLINE static bool crosses(Side taker, Price maker_price, Price limit) noexcept;
  static Qty fok_available(const OrderBook& b, const Order& in, Price limit) noexcept;
  MatchEnd match(OrderBook& b, Order& in, OrderType type, Price limit) noexcept;
  void rest(OrderBook& b, Order* o) noexcept;
  NT_ALWAYS_INLINE void unlink(OrderBook& b, Order* o) noexcept;
  NT_ALWAYS_INLINE void retire(OrderBook& b, Order* o) noexcept;
  void remove_resting(OrderBook& b, Order* o, CancelReason why) noexcept;

  // ---- outputs ------------------------------------------------------------------
  // Each output is built on zeros by `build`, in the sink's own storage when it
  // offers it (InPlaceSink: no copy) and on the stack otherwise.
  template <typename Build>
  NT_ALWAYS_INLINE void emit_report(ReportType type, Build&& build) noexcept {
    const auto fill_in = [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT {
      clear(r);
      set_base(r, type);
      build(r);
    };
    if constexpr (InPlaceReportSink<Sink>) {
      fill_in(sink_.claim_report());
      sink_.commit_report();
    } else {
      ExecReport r;
      fill_in(r);
      sink_.on_report(r);
    }
  }
  NT_ALWAYS_INLINE void set_base(ExecReport& r, ReportType type) noexcept {
    r.seq = ++report_seq_;
    r.request_seq = requests_;
    r.event_id = event_id_;
    r.type = type;
  }
  NT_ALWAYS_INLINE void set_order(ExecReport& r, const Order& o, OrderType ot) const noexcept {
    r.client = o.client();
    r.instrument = instrument_;
    r.client_order_id = o.client_order_id();
    r.order_id = o.order_id;
    r.price = o.price;
    r.order_qty = o.order_qty;
    r.cum_qty = o.cum_qty;
    r.leaves_qty = o.open_qty();
    r.side = o.side;
    r.order_type = ot;
  }
  NT_ALWAYS_INLINE void report(ReportType type, const Order& o, OrderType ot) noexcept {
    emit_report(type, [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT { set_order(r, o, ot); });
  }
  NT_ALWAYS_INLINE void cancelled(const Order& o, OrderType ot, CancelReason why) noexcept {
    emit_report(ReportType::kCancelled, [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT {
      set_order(r, o, ot);
      r.leaves_qty = 0;
      r.cancel_reason = why;
    });
  }
  NT_ALWAYS_INLINE void fill(const Order& o, OrderType ot, Price px, Qty q, OrderId contra, bool maker) noexcept {
    emit_report(ReportType::kFill, [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT {
      set_order(r, o, ot);
      r.last_price = px;
      r.last_qty = q;
      r.contra_order_id = contra;
      r.is_maker = maker;
    });
  }
  // Not cold: cancels of orders that have just filled are routine (a third of
  // the cancels of a crossing book, the regimes' normal case).
  void reject(const Request& rq, ReportType type, RejectReason why) noexcept {
    emit_report(type, [&](ExecReport& r) NT_LAMBDA_INLINE_NOEXCEPT {
      r.client = rq.client;
      r.instrument = rq.instrument;
      r.client_order_id = rq.client_order_id;
      r.price = rq.price;
      r.order_qty = rq.qty;
      r.side = rq.side;
      r.order_type = rq.order_type;
      r.reason = why;
    });
  }
  // `b` is the request's instrument's book (every output of a request is on it).
  template <typename Build>
  NT_ALWAYS_INLINE void md(OrderBook& b, Build&& build) noexcept {
    if constexpr (!kMarketData) return;
    const auto fill_in = [&](MdEvent& m) NT_LAMBDA_INLINE_NOEXCEPT {
      clear(m);
      set_md_base(b, m);
      build(m);
    };
    if constexpr (InPlaceMarketDataSink<Sink>) {
      fill_in(sink_.claim_market_data());
      sink_.commit_market_data();
    } else if constexpr (kMarketData) {
      MdEvent m;
      fill_in(m);
      sink_.on_market_data(m);
    }
  }
  NT_ALWAYS_INLINE void set_md_base(OrderBook& b, MdEvent& m) noexcept {
    m.seq = ++md_seq_;
    m.instrument_seq = ++b.md_seq;
    m.event_id = event_id_;
    m.instrument = instrument_;
  }
  NT_ALWAYS_INLINE void md_order(OrderBook& b, MdType type, const Order& o) noexcept {
    md(b, [&](MdEvent& m) NT_LAMBDA_INLINE_NOEXCEPT {
      m.type = type;
      m.side = o.side;
      m.order_id = o.order_id;
      m.price = o.price;
      m.qty = o.open_qty();
    });
  }
  NT_ALWAYS_INLINE static Top top(const OrderBook& b) noexcept {
    Top t{0, 0, 0, 0};
    if constexpr (!kMarketData) return t;  // no feed: nothing compares it
    if (const PriceLevel* l = b.bids.best()) t.bid_price = l->price, t.bid_qty = l->qty;
    if (const PriceLevel* l = b.asks.best()) t.ask_price = l->price, t.ask_qty = l->qty;
    return t;
  }
  NT_ALWAYS_INLINE void emit_top_if_changed(OrderBook& b, const Top& before) noexcept {
    if constexpr (!kMarketData) return;
    const Top now = top(b);
    if (now == before) return;
    md(b, [&](MdEvent& m) NT_LAMBDA_INLINE_NOEXCEPT {
      m.type = MdType::kTopOfBook;
      m.bid_price = now.bid_price;
      m.bid_qty = now.bid_qty;
      m.ask_price = now.ask_price;
      m.ask_qty = now.ask_qty;
    });
  }

  Sink& sink_;
  std::vector<std::unique_ptr<OrderBook>> books_;
  LiveOrders live_;  // (client, client_order_id) -> resting order, all instruments
  std::vector<Order*> mass_cancel_scratch_;  // one instrument's orders of a client, reserved at start
  Seq requests_ = 0;
  Seq report_seq_ = 0;
  Seq md_seq_ = 0;
  OrderId next_order_id_ = 0;  // last assigned
  std::uint64_t event_id_ = 0;  // of the request being processed
  InstrumentId instrument_ = 0; // of the request being processed
};

}  // namespace nanotick::engine

// The class's member functions defined out of line, one subject a file (each
// `inline`, as a definition inside the class is, so the compiler treats them
// alike): the requests, the matching, and the cold half (state export/import
// and the invariant check).
#include "engine/matching_engine_matching.hpp"
#include "engine/matching_engine_requests.hpp"
#include "engine/matching_engine_state.hpp"
