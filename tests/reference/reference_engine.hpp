// The reference model of docs/MATCHING.md: the same public API as
// engine::MatchingEngine, written for clarity, not speed (std::map of price
// levels, std::deque FIFO queues, std::map indexes, plain loops; it allocates).
// The differential test checks the fast engine against it, and the shared
// scenario suite runs against both. Not thread-safe: one thread drives it.
//
// Choices on points docs/MATCHING.md leaves open (the fast engine must agree):
// - Every reject (kRejected / kCancelRejected / kModifyRejected) echoes the
//   request: client, instrument, client_order_id, side, order_type, price,
//   order_qty = qty; order_id 0; cum/leaves 0.
// - A market order's `price` (its reports, the book never holds one) is 0.
// - kCancelled carries the order's price and total quantity as they stand,
//   cum_qty as filled, leaves_qty 0 (for kModifyBelowFilled: the values before
//   the modify).
// - MdEvent kDelete carries the order's side, price and open quantity when it
//   left; kTopOfBook has side/order_id/price/qty 0.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/book_views.hpp"
#include "engine/events.hpp"
#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::reference {

template <engine::EngineSink Sink>
class ReferenceEngine {
  using Price = engine::Price;
  using Qty = engine::Qty;
  using OrderId = engine::OrderId;
  using ClientId = engine::ClientId;
  using ClientOrderId = engine::ClientOrderId;
  using InstrumentId = engine::InstrumentId;
  using Seq = engine::Seq;
  using Side = engine::Side;
  using OrderType = engine::OrderType;
  using StpMode = engine::StpMode;
  using Request = engine::Request;
  using RequestType = engine::RequestType;
  using ReportType = engine::ReportType;
  using RejectReason = engine::RejectReason;
  using CancelReason = engine::CancelReason;
  using MdType = engine::MdType;

 public:
  using LevelView = engine::LevelView;  // engine/book_views.hpp
  using OrderView = engine::OrderView;

  ReferenceEngine(const engine::EngineConfig& config, Sink& sink) : sink_(sink) {
    config.validate();
    for (const auto& instrument : config.instruments) books_.push_back(Book{instrument, {}, {}, {}, {}, {}, 0, 0});
  }

  void process(const Request& request) noexcept {
    ++requests_;
    request_ = request;
    const bool known_type = request.type == RequestType::kNew || request.type == RequestType::kCancel ||
                            request.type == RequestType::kModify || request.type == RequestType::kMassCancel;
    if (!known_type) {
      reject(ReportType::kRejected, RejectReason::kInvalidRequestType);
      return;
    }
    if (request.type == RequestType::kMassCancel) return on_mass_cancel();
    if (request.instrument >= books_.size()) {
      reject(reject_type(), RejectReason::kUnknownInstrument);
      return;
    }
    Book& book = books_[request.instrument];
    const Top before = top(book);
    if (request.type == RequestType::kNew) on_new(book);
    if (request.type == RequestType::kCancel) on_cancel(book);
    if (request.type == RequestType::kModify) on_modify(book);
    publish_top_if_changed(book, before);
  }

  // A request refused by a check outside the engine (the venue's controls):
  // counted, and answered with the reject its type gets.
  void refuse(const Request& request, RejectReason reason) noexcept {
    ++requests_;
    request_ = request;
    reject(reject_type(), reason);
  }

  std::size_t instrument_count() const noexcept { return books_.size(); }

  std::optional<LevelView> best(InstrumentId instrument, Side side) const noexcept {
    if (instrument >= books_.size()) return std::nullopt;
    const Level* level = best_level(books_[instrument], side);
    if (level == nullptr) return std::nullopt;
    Qty qty = 0;
    for (const Order& o : level->orders) qty += o.open();
    return LevelView{level->price, qty, static_cast<std::uint32_t>(level->orders.size())};
  }

  // Priority order: best price first, FIFO within a level.
  template <typename F>
  void for_each_order(InstrumentId instrument, Side side, F&& fn) const {
    if (instrument >= books_.size()) return;
    for (const Level* level : levels_in_priority(books_[instrument], side)) {
      for (const Order& o : level->orders) {
        fn(OrderView{o.id, o.client, o.client_order_id, o.side, o.price, o.order_qty, o.cum_qty, o.open(), o.stp});
      }
    }
  }

  std::size_t live_orders(InstrumentId instrument) const noexcept {
    return instrument < books_.size() ? books_[instrument].live : 0;
  }
  Seq requests_processed() const noexcept { return requests_; }
  Seq last_report_seq() const noexcept { return report_seq_; }
  Seq last_md_seq() const noexcept { return md_seq_; }
  Seq last_instrument_md_seq(InstrumentId instrument) const noexcept {
    return instrument < books_.size() ? books_[instrument].md_seq : 0;
  }
  std::optional<Price> last_trade(InstrumentId instrument) const noexcept {
    return instrument < books_.size() ? books_[instrument].last_trade : std::nullopt;
  }

  // Tests only: throws std::logic_error naming the first broken invariant.
  void validate_invariants() const {
    std::size_t live_total = 0;
    std::map<OrderId, int> ids;
    for (InstrumentId i = 0; i < books_.size(); ++i) {
      const Book& book = books_[i];
      std::size_t count = 0;
      for (Side side : {Side::kBuy, Side::kSell}) {
        const auto& levels = side == Side::kBuy ? book.bids : book.asks;
        if (levels.size() > book.config.max_levels) fail(i, "more levels than max_levels");
        for (const auto& [price, level] : levels) {
          if (level.price != price) fail(i, "level keyed by another price");
          if (level.orders.empty()) fail(i, "empty level left in the book");
          if (price < book.config.min_price || price > book.config.max_price || price % book.config.tick_size != 0) {
            fail(i, "level price off tick or outside the band");
          }
          for (const Order& o : level.orders) {
            ++count;
            if (o.price != price || o.side != side || o.instrument != i) fail(i, "order in the wrong level");
            if (o.type != OrderType::kLimit) fail(i, "a non-limit order rests");
            if (o.cum_qty < 0 || o.open() <= 0) fail(i, "resting order with no open quantity");
            if (++ids[o.id] != 1) fail(i, "order id rests twice");
            const auto it = live_.find(key(o.client, o.client_order_id));
            if (it == live_.end() || it->second.instrument != i || it->second.side != side ||
                it->second.price != price || it->second.order_id != o.id) {
              fail(i, "resting order missing from the live index");
            }
          }
        }
      }
      if (count != book.live) fail(i, "live count differs from the resting orders");
      if (count > book.config.max_orders) fail(i, "more live orders than max_orders");
      const Level* bid = best_level(book, Side::kBuy);
      const Level* ask = best_level(book, Side::kSell);
      if (bid != nullptr && ask != nullptr && bid->price >= ask->price) fail(i, "crossed book");
      if (book.finished_adds > book.config.max_orders) fail(i, "a finished generation took too many orders");
      if (book.finished_current.size() > book.finished_adds) fail(i, "more current finished keys than finishes");
      if (book.finished_previous.size() > book.config.max_orders) fail(i, "previous finished generation too big");
      live_total += count;
    }
    if (live_total != live_.size()) fail(0, "live index holds orders that do not rest");
    Seq md_total = 0;
    for (const Book& book : books_) md_total += book.md_seq;
    if (md_total != md_seq_) fail(0, "instrument market data counts do not add up to the engine's");
  }

 private:
  using Key = std::pair<ClientId, ClientOrderId>;

  struct Order {
    OrderId id;
    InstrumentId instrument;
    ClientId client;
    ClientOrderId client_order_id;
    Side side;
    OrderType type;
    StpMode stp;
    Price price;  // 0 for a market order
    Qty order_qty;
    Qty cum_qty;
    Qty open() const { return order_qty - cum_qty; }
  };
  struct Level {
    Price price;
    std::deque<Order> orders;  // front trades first
  };
  struct Location {
    InstrumentId instrument;
    Side side;
    Price price;
    OrderId order_id;
  };
  struct Book {
    engine::InstrumentConfig config;
    std::map<Price, Level> bids;  // best = highest = last
    std::map<Price, Level> asks;  // best = lowest = first
    std::optional<Price> last_trade;
    // Finished orders in two generations of max_orders finishes each (docs/MATCHING.md).
    std::set<Key> finished_previous;
    std::set<Key> finished_current;
    std::size_t finished_adds = 0;  // finishes in the current generation
    std::size_t live = 0;
    Seq md_seq = 0;  // this instrument's market data events so far
  };
  struct Top {
    Price bid_price = 0;
    Qty bid_qty = 0;
    Price ask_price = 0;
    Qty ask_qty = 0;
    bool operator==(const Top&) const = default;
  };

  static Key key(ClientId client, ClientOrderId id) { return {client, id}; }

  [[noreturn]] static void fail(InstrumentId i, const std::string& what) {
    throw std::logic_error("reference engine, instrument " + std::to_string(i) + ": " + what);
  }

  // ---- book helpers --------------------------------------------------------

  static std::map<Price, Level>& levels(Book& b, Side s) { return s == Side::kBuy ? b.bids : b.asks; }
  static const std::map<Price, Level>& levels(const Book& b, Side s) { return s == Side::kBuy ? b.bids : b.asks; }

  static const Level* best_level(const Book& b, Side s) {
    const auto& side = levels(b, s);
    if (side.empty()) return nullptr;
    return s == Side::kBuy ? &side.rbegin()->second : &side.begin()->second;
  }
  static Level* best_level(Book& b, Side s) {
    auto& side = levels(b, s);
    if (side.empty()) return nullptr;
    return s == Side::kBuy ? &side.rbegin()->second : &side.begin()->second;
  }

  static std::vector<const Level*> levels_in_priority(const Book& b, Side s) {
    std::vector<const Level*> out;
    if (s == Side::kBuy) {
      for (auto it = b.bids.rbegin(); it != b.bids.rend(); ++it) out.push_back(&it->second);
    } else {
      for (auto it = b.asks.begin(); it != b.asks.end(); ++it) out.push_back(&it->second);
    }
    return out;
  }

  // A TopOfBook event when the request changed the book's best levels.
  void publish_top_if_changed(const Book& book, const Top& before) {
    const Top after = top(book);
    if (before == after) return;
    engine::MdEvent e = md(MdType::kTopOfBook);
    e.bid_price = after.bid_price;
    e.bid_qty = after.bid_qty;
    e.ask_price = after.ask_price;
    e.ask_qty = after.ask_qty;
    sink_.on_market_data(e);
  }

  static Top top(const Book& b) {
    Top t;
    if (const Level* bid = best_level(b, Side::kBuy)) {
      t.bid_price = bid->price;
      for (const Order& o : bid->orders) t.bid_qty += o.open();
    }
    if (const Level* ask = best_level(b, Side::kSell)) {
      t.ask_price = ask->price;
      for (const Order& o : ask->orders) t.ask_qty += o.open();
    }
    return t;
  }

  Order* find_live(Book& b, const Location& loc) {
    Level& level = levels(b, loc.side).at(loc.price);
    for (Order& o : level.orders) {
      if (o.id == loc.order_id) return &o;
    }
    return nullptr;
  }

  // Takes a resting order out of its level, the live index and the count.
  Order remove_resting(Book& b, OrderId id, Side side, Price price) {
    auto& side_levels = levels(b, side);
    Level& level = side_levels.at(price);
    Order out{};
    for (auto it = level.orders.begin(); it != level.orders.end(); ++it) {
      if (it->id == id) {
        out = *it;
        level.orders.erase(it);
        break;
      }
    }
    if (level.orders.empty()) side_levels.erase(price);
    live_.erase(key(out.client, out.client_order_id));
    --b.live;
    return out;
  }

  void rest(Book& b, const Order& o) {
    auto& side_levels = levels(b, o.side);
    auto [it, inserted] = side_levels.try_emplace(o.price, Level{o.price, {}});
    it->second.orders.push_back(o);
    live_[key(o.client, o.client_order_id)] = Location{o.instrument, o.side, o.price, o.id};
    ++b.live;
    md_order(MdType::kAdd, o, o.open());
  }

  void remember_finished(Book& b, const Order& o) {
    const Key k = key(o.client, o.client_order_id);
    if (b.finished_adds == b.config.max_orders) {  // the current generation is full: a new one
      b.finished_previous = std::move(b.finished_current);
      b.finished_current.clear();
      b.finished_adds = 0;
    }
    b.finished_current.insert(k);
    ++b.finished_adds;
  }

  // ---- outputs -------------------------------------------------------------

  ReportType reject_type() const {
    if (request_.type == RequestType::kCancel || request_.type == RequestType::kMassCancel)
      return ReportType::kCancelRejected;
    if (request_.type == RequestType::kModify) return ReportType::kModifyRejected;
    return ReportType::kRejected;
  }

  engine::ExecReport report(ReportType type) {
    engine::ExecReport r{};
    r.seq = ++report_seq_;
    r.request_seq = requests_;
    r.event_id = request_.event_id;
    r.type = type;
    return r;
  }

  void reject(ReportType type, RejectReason reason) {
    engine::ExecReport r = report(type);
    r.client = request_.client;
    r.instrument = request_.instrument;
    r.client_order_id = request_.client_order_id;
    r.price = request_.price;
    r.order_qty = request_.qty;
    r.side = request_.side;
    r.order_type = request_.order_type;
    r.reason = reason;
    sink_.on_report(r);
  }

  engine::ExecReport order_report(ReportType type, const Order& o) {
    engine::ExecReport r = report(type);
    r.client = o.client;
    r.instrument = o.instrument;
    r.client_order_id = o.client_order_id;
    r.order_id = o.id;
    r.price = o.price;
    r.order_qty = o.order_qty;
    r.cum_qty = o.cum_qty;
    r.leaves_qty = o.open();
    r.side = o.side;
    r.order_type = o.type;
    return r;
  }

  void report_order(ReportType type, const Order& o) { sink_.on_report(order_report(type, o)); }

  void report_cancelled(const Order& o, CancelReason why) {
    engine::ExecReport r = order_report(ReportType::kCancelled, o);
    r.leaves_qty = 0;
    r.cancel_reason = why;
    sink_.on_report(r);
  }

  void report_fill(const Order& o, Price price, Qty qty, OrderId contra, bool is_maker) {
    engine::ExecReport r = order_report(ReportType::kFill, o);
    r.last_price = price;
    r.last_qty = qty;
    r.contra_order_id = contra;
    r.is_maker = is_maker;
    sink_.on_report(r);
  }

  engine::MdEvent md(MdType type) {
    engine::MdEvent e{};
    e.seq = ++md_seq_;
    e.instrument_seq = ++books_[request_.instrument].md_seq;  // market data only follows a known instrument
    e.event_id = request_.event_id;
    e.instrument = request_.instrument;
    e.type = type;
    return e;
  }

  void md_order(MdType type, const Order& o, Qty qty) {
    engine::MdEvent e = md(type);
    e.side = o.side;
    e.order_id = o.id;
    e.price = o.price;
    e.qty = qty;
    sink_.on_market_data(e);
  }

  // ---- validation ----------------------------------------------------------

  static bool valid_side(Side s) { return s == Side::kBuy || s == Side::kSell; }

  // Step 4 of the validation.
  std::optional<RejectReason> check_ids() const {
    if (request_.client > engine::kMaxClientId) return RejectReason::kInvalidClientId;
    if (request_.client_order_id > engine::kMaxClientOrderId) return RejectReason::kInvalidClientOrderId;
    return std::nullopt;
  }

  // Step 5.
  static std::optional<RejectReason> check_qty(const Book& b, Qty qty) {
    if (qty <= 0) return RejectReason::kZeroQuantity;
    if (qty > b.config.max_order_qty) return RejectReason::kQuantityTooLarge;
    return std::nullopt;
  }

  // Step 6 (limit prices only).
  static std::optional<RejectReason> check_price(const Book& b, Price price) {
    if (price % b.config.tick_size != 0) return RejectReason::kPriceOffTick;
    if (price < b.config.min_price || price > b.config.max_price) return RejectReason::kPriceOutOfBand;
    if (b.config.collar > 0 && b.last_trade.has_value()) {
      const Price distance = price > *b.last_trade ? price - *b.last_trade : *b.last_trade - price;
      if (distance > b.config.collar) return RejectReason::kPriceOutsideCollar;
    }
    return std::nullopt;
  }

  std::optional<RejectReason> validate_new(const Book& b) const {
    const Request& r = request_;
    if (!valid_side(r.side)) return RejectReason::kInvalidSide;
    const auto type = static_cast<std::uint8_t>(r.order_type);
    if (type < 1 || type > 4) return RejectReason::kInvalidOrderType;
    if (static_cast<std::uint8_t>(r.stp) > 3) return RejectReason::kInvalidStpMode;
    if (r.reserved != 0) return RejectReason::kReservedNotZero;
    if (auto bad = check_ids()) return bad;
    if (auto bad = check_qty(b, r.qty)) return bad;
    if (r.order_type != OrderType::kMarket) {
      if (auto bad = check_price(b, r.price)) return bad;
    }
    if (live_.contains(key(r.client, r.client_order_id))) return RejectReason::kDuplicateClientOrderId;
    if (r.order_type == OrderType::kLimit) {
      if (b.live >= b.config.max_orders) return RejectReason::kOrderCapacity;
      const auto& own = levels(b, r.side);
      if (!own.contains(r.price) && own.size() >= b.config.max_levels) return RejectReason::kLevelCapacity;
    }
    return std::nullopt;
  }

  // ---- matching and requests (reference/reference_engine_requests.hpp) ----
  static bool crosses(const Book& b, const Order& taker, Price maker_price, std::optional<Price> last_before);
  static Qty fok_available(const Book& b, const Order& taker, std::optional<Price> last_before);
  bool match(Book& b, Order& taker, std::optional<Price> last_before);
  void finish_incoming(Book& b, const Order& o, bool stp_cancelled);
  void on_new(Book& b);
  std::optional<Location> find_target(const Book& b);
  void on_cancel(Book& b);
  void on_mass_cancel();
  void on_modify(Book& b);

  Sink& sink_;
  std::vector<Book> books_;
  std::map<Key, Location> live_;  // every resting order, all instruments
  Request request_{};             // the request being processed
  Seq requests_ = 0;
  Seq report_seq_ = 0;
  Seq md_seq_ = 0;
  OrderId last_order_id_ = 0;
};

}  // namespace nanotick::reference

// The matching and the requests, defined out of the class (one subject a file).
#include "reference/reference_engine_requests.hpp"
