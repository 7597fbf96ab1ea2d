// The trade engine (docs/TRADER.md "TradeEngine"): the single writer of the
// trading client's features, positions, risk state and orders. It takes
// book events from the market data consumer (MdHandler) and session events
// from the order gateway (OrderEntryHandler), keeps every part up to date, and
// calls the strategy -- a template parameter, so every call is static
// dispatch -- which acts through the engine's order API (place, cancel,
// modify). Every new order and modify passes the risk manager first, in the
// order the risk manager's contract asks: check, send, then take a throttle
// token. Each piece of order state has one owner: the order manager is the
// only ledger of working orders (the risk manager checks against its const
// WorkingExposure), the position keeper books fills; execution reports go to
// the order manager, then fills to the positions, then the strategy.
//
// place / modify / cancel return one ActionResult saying what was done and
// why not: the risk result, the order manager's submit status, the order id.
//
// Tick-to-trade: while the engine handles a market data packet it knows the
// packet's receive TSC; an order sent during that handling is remembered by
// its session seq, and when the gateway reports the TSC at which the order's
// last byte was written (on_order_written) the difference goes into the
// tick_to_trade histogram. Orders sent from timers or execution reports are
// not ticks: they are counted, not timed.
//
// Telemetry (docs/TELEMETRY.md), when a recorder is bound to the engine's
// thread: tr_decision for each order message the strategy sends, keyed by the
// md key of the packet being handled (told by the trader with set_md_key(),
// 0 when no packet caused it) with the message's order key as aux; function
// timers fn_feature_update (features after a book change or a trade),
// fn_risk_check (pre-trade check of a new order or modify), fn_order_manager
// (one call into the order manager: a submission -- inside a decision the
// gateway is corked, so no write is in it -- or an exchange answer) and
// fn_position_update (a fill booked).
//
// Not thread-safe: one thread (the trader's engine thread) calls everything.
// Nothing allocates after construction.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "book/book_replica.hpp"
#include "client/order_entry_client.hpp"
#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/histogram.hpp"
#include "core/tsc_clock.hpp"
#include "market/instrument_table.hpp"
#include "market/types.hpp"
#include "proto/order_entry.hpp"
#include "telemetry/instrument.hpp"
#include "trading/features.hpp"
#include "trading/order_manager.hpp"
#include "trading/position_keeper.hpp"
#include "trading/risk_manager.hpp"
#include "trading/trade_engine_types.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

template <typename Strategy, typename Sender>
class TradeEngine {
 public:
  struct Config {
    market::InstrumentTable instruments;  // the venue's table (from the exchange config)
    std::vector<FeatureConfig> features;  // per instrument
    std::vector<InstrumentRiskLimits> risk;  // per instrument
    GlobalRiskLimits global_risk;
    OrderManagerConfig orders;  // instruments is set from the table
    market::StpMode stp = market::StpMode::kCancelResting;  // our own quotes must not trade with each other
    // Per instrument (or empty): the price the risk manager's band centres on
    // while the book has no fair price and nothing traded yet; 0 = none.
    std::vector<Price> reference_prices;
    // Our session's client id: the high half of the telemetry order keys.
    std::uint32_t client_id = 0;
  };

  // Start-up: validates and allocates. Throws std::invalid_argument.
  TradeEngine(const Config& config, Strategy& strategy, Sender& sender, const book::BookReplica& books,
              const core::TscClock& clock = core::TscClock::global())
      : instruments_(config.instruments),
        strategy_(strategy),
        books_(books),
        clock_(clock),
        positions_(static_cast<std::uint32_t>(config.instruments.instruments.size())),
        risk_(config.risk, config.global_risk, now_ns()),
        sender_(sender),
        orders_(orders_config(config), sender),
        state_(config.instruments.instruments.size(), 0),
        reference_prices_(config.reference_prices),
        stp_(config.stp),
        order_key_base_(std::uint64_t{config.client_id} << 32) {
    const std::size_t n = config.instruments.instruments.size();
    if (config.features.size() != n || config.risk.size() != n)
      throw std::invalid_argument("trade engine: features and risk need one entry per instrument");
    if (!reference_prices_.empty() && reference_prices_.size() != n)
      throw std::invalid_argument("trade engine: reference_prices needs one entry per instrument (or none)");
    if (books.instrument_count() != n)
      throw std::invalid_argument("trade engine: the book has another instrument count");
    features_.reserve(n);
    for (const FeatureConfig& f : config.features) features_.push_back(std::make_unique<FeatureEngine>(f));
  }
  TradeEngine(const TradeEngine&) = delete;
  TradeEngine& operator=(const TradeEngine&) = delete;

  // ---- the strategy's context ---------------------------------------------------------------

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(state_.size()); }
  const market::InstrumentConfig& instrument(InstrumentId i) const noexcept { return instruments_.instruments[i]; }
  const FeatureValues& features(InstrumentId i) const noexcept { return features_[i]->values(); }
  const PositionKeeper& positions() const noexcept { return positions_; }
  const RiskManager& risk() const noexcept { return risk_; }
  const OrderManager<Sender>& orders() const noexcept { return orders_; }
  const book::BookReplica& books() const noexcept { return books_; }
  bool is_live(InstrumentId i) const noexcept { return i < state_.size() && (state_[i] & kLive) != 0; }
  bool logged_on() const noexcept { return logged_on_; }
  TimeNs now_ns() const noexcept { return clock_.now_ns(); }

  // The price the risk band centres on: the fair price; with none (a side of
  // the book empty), the last trade's price, then the reference price; NaN
  // when all are missing (the risk manager then blocks).
  double risk_fair_price(InstrumentId i) const noexcept {
    const FeatureValues& f = features_[i]->values();
    if (std::isfinite(f.fair_price)) return f.fair_price;
    if (f.trades > 0) return static_cast<double>(f.last_trade_price);
    if (!reference_prices_.empty() && reference_prices_[i] > 0) return static_cast<double>(reference_prices_[i]);
    return FeatureValues::kNaN;
  }

  // A new order (client_order_id 0: the order manager assigns it); `tag` is
  // the strategy's own (e.g. a quote level) and comes back in OrderEvents.
  ActionResult place(const OrderRequest& rq, std::uint64_t tag = 0) noexcept {
    if (stopping_) return {ActionStatus::kStopping};
    if (!tradable(rq.instrument)) [[unlikely]]
      return is_live(rq.instrument) ? halted_block(0) : stale_block(0);
    const TimeNs now = now_ns();
    RiskResult risk = RiskResult::kAllowed;
    {
      NT_TIMED(fn_risk_check);
      risk = risk_.check_new(rq, orders_.exposure(), positions_, risk_fair_price(rq.instrument), now);
    }
    if (risk != RiskResult::kAllowed) return risk_block(risk, 0);
    const std::uint64_t decided = decision_tsc();
    const Submitted s = order_manager_step([&] { return orders_.submit(rq, stp_, tag); });
    if (!s.ok()) return refused(s.status, 0);
    risk_.on_sent(now);
    remember(s.seq, decided);
    counters_.orders_placed.add();
    return {ActionStatus::kSent, risk, s.status, s.id};
  }

  // New price and/or total quantity for a live limit order (ModifyOrder).
  ActionResult modify(ClientOrderId id, Price price, Qty qty) noexcept {
    if (stopping_) return {ActionStatus::kStopping, RiskResult::kAllowed, SubmitStatus::kSent, id};
    const Order* o = orders_.find(id);
    if (o != nullptr && !tradable(o->instrument)) [[unlikely]]
      return is_live(o->instrument) ? halted_block(id) : stale_block(id);
    const TimeNs now = now_ns();
    const double fair = o != nullptr ? risk_fair_price(o->instrument) : FeatureValues::kNaN;
    RiskResult risk = RiskResult::kAllowed;
    {
      NT_TIMED(fn_risk_check);
      risk = risk_.check_modify(id, price, qty, orders_.exposure(), positions_, fair, now);
    }
    if (risk != RiskResult::kAllowed) return risk_block(risk, id);
    const std::uint64_t decided = decision_tsc();
    const Submitted s = order_manager_step([&] { return orders_.modify(id, price, qty); });
    if (!s.ok()) return refused(s.status, id);
    risk_.on_sent(now);
    remember(s.seq, decided);
    counters_.modifies_sent.add();
    return {ActionStatus::kSent, risk, s.status, id};
  }

  // Cancels are never risk-checked (they only reduce risk) and are allowed on stale instruments.
  ActionResult cancel(ClientOrderId id) noexcept {
    const std::uint64_t decided = decision_tsc();
    const Submitted s = order_manager_step([&] { return orders_.cancel(id); });
    if (!s.ok()) return refused(s.status, id);
    remember(s.seq, decided);
    counters_.cancels_sent.add();
    return {ActionStatus::kSent, RiskResult::kAllowed, s.status, id};
  }

  // Cancels every open order of the instrument (all instruments for kAll).
  static constexpr InstrumentId kAll = ~InstrumentId{0};
  void cancel_all(InstrumentId which = kAll) noexcept {
    for (InstrumentId i = 0; i < instrument_count(); ++i) {
      if (which != kAll && which != i) continue;
      for (const Side side : {Side::kBuy, Side::kSell}) {
        // In chunks, collected first: cancel() does not change the list, but
        // a callback may. Orders with a cancel in flight are skipped, so a
        // chunk that could not be sent (output full) ends the loop.
        for (;;) {
          std::array<ClientOrderId, 64> ids{};
          std::size_t n = 0;
          orders_.for_each_order(i, side, [&](const Order& o) {
            if (!o.done && o.cancel_seq == 0 && o.state != OrderState::kUnknown && n < ids.size()) ids[n++] = o.id;
          });
          std::size_t sent = 0;
          for (std::size_t k = 0; k < n; ++k) sent += cancel(ids[k]).sent() ? 1 : 0;
          if (n < ids.size() || sent == 0) break;
        }
      }
    }
  }

  // Winding down: from now on place() and modify() refuse (kStopping), so a
  // strategy that replaces a cancelled quote cannot undo cancel_all().
  void stop_trading() noexcept { stopping_ = true; }
  bool stopping() const noexcept { return stopping_; }

  // The last session end the gateway reported, and how many there were.
  const client::Disconnect& last_disconnect() const noexcept { return last_disconnect_; }
  std::uint64_t disconnect_events() const noexcept { return disconnect_events_; }

  // ---- market data consumer (MdHandler) --------------------------------------------------------

  // Telemetry: the md key (first_seq) of the incremental packet received at
  // `rx_tsc` that the consumer is about to apply (0, 0: none). Events the
  // consumer hands over with another receive TSC (a packet it had held back
  // for reordering) are not that packet's: their decisions get md key 0.
  void set_md_key(std::uint64_t md_key, std::uint64_t rx_tsc) noexcept {
    md_key_ = md_key;
    md_key_rx_tsc_ = rx_tsc;
  }

  void on_trade(const TradeEvent& t, std::uint64_t rx_tsc) noexcept {
    if (t.instrument >= state_.size()) return;
    counters_.trades_seen.add();
    current_rx_tsc_ = rx_tsc;
    {
      NT_TIMED(fn_feature_update);
      (void)features_[t.instrument]->on_trade(t);
    }
    decide([&] { strategy_.on_trade(*this, t); });
    current_rx_tsc_ = 0;
  }

  void on_book_update(InstrumentId i, std::uint64_t rx_tsc) noexcept {
    if (i >= state_.size()) return;
    counters_.book_updates.add();
    const book::InstrumentBook* b = books_.instrument(i);
    {
      NT_TIMED(fn_feature_update);
      features_[i]->on_book_update(*b);
    }
    const double fair = features_[i]->values().fair_price;
    if (std::isfinite(fair)) (void)positions_.mark(i, fair);
    if (!is_live(i)) return;
    current_rx_tsc_ = rx_tsc;
    decide([&] { strategy_.on_book(*this, i); });
    current_rx_tsc_ = 0;
  }

  void on_instrument_stale(InstrumentId i) noexcept {
    if (i >= state_.size()) return;
    state_[i] &= static_cast<std::uint8_t>(~kLive);
    features_[i]->reset();
    strategy_.on_instrument_state(*this, i, false);
  }

  // The venue halted (or resumed) the instrument: orders wait for the resume
  // (the venue would refuse them, kInstrumentHalted); cancels still go out.
  void on_trading_state(InstrumentId i, bool halted) noexcept {
    if (i < state_.size()) state_[i] = static_cast<std::uint8_t>(halted ? state_[i] | kHalted : state_[i] & ~kHalted);
  }
  bool halted(InstrumentId i) const noexcept { return i < state_.size() && (state_[i] & kHalted) != 0; }

  void on_instrument_live(InstrumentId i, TimeNs /*recovery_ns*/) noexcept {
    if (i >= state_.size()) return;
    state_[i] |= kLive;
    features_[i]->on_book_update(*books_.instrument(i));
    strategy_.on_instrument_state(*this, i, true);
  }

  // ---- order gateway (OrderEntryHandler) ---------------------------------------------------------

  void on_logon(const proto::LogonAck&) noexcept {
    logged_on_ = true;
    counters_.logons.add();
    (void)orders_.reconcile(256);  // settle what a lost session left unknown
    strategy_.on_session(*this, true);
  }
  void on_execution_report(const proto::ExecutionReport& r) noexcept {
    handle(order_manager_step([&] { return orders_.on_execution_report(r); }));
  }
  void on_cancel_reject(const proto::OrderReject& r) noexcept {
    handle(order_manager_step([&] { return orders_.on_cancel_reject(r); }));
  }
  void on_modify_reject(const proto::OrderReject& r) noexcept {
    handle(order_manager_step([&] { return orders_.on_modify_reject(r); }));
  }
  void on_session_reject(const proto::SessionReject& r) noexcept {
    handle(order_manager_step([&] { return orders_.on_session_reject(r); }));
  }
  void on_disconnected(const client::Disconnect& d) noexcept {
    last_disconnect_ = d;
    ++disconnect_events_;
    if (!d.was_logged_on && !logged_on_) return;  // a failed connect attempt: nothing was open
    logged_on_ = false;
    counters_.disconnects.add();
    orders_.on_disconnected();
    strategy_.on_session(*this, false);
  }
  void on_order_written(std::uint32_t seq, std::uint64_t tsc) noexcept {
    const std::uint64_t rx = ticks_.take(seq);
    if (rx == 0 || tsc < rx) {
      counters_.ticks_untimed.add();
      return;
    }
    tick_to_trade_.record(static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(tsc - rx))));
  }

  // ---- the loop -----------------------------------------------------------------------------

  // Timers: the strategy's, and reconcile retries. Returns work done (agent style).
  int on_timer(TimeNs now) noexcept {
    if (logged_on_ && orders_.needs_reconcile()) (void)orders_.reconcile(64);
    strategy_.on_timer(*this, now);
    return 0;
  }

  const TradeEngineCounters& counters() const noexcept { return counters_; }
  // Start-up, before the engine's thread runs: its counters, the risk
  // manager's, the order manager's and the position keeper's into `file`.
  void place_counters(core::CountersFile& file) {
    TradeEngineCounters& c = counters_;
    file.begin_group();
    file.place(c.book_updates, "engine.book_updates");
    file.place(c.trades_seen, "engine.trades_seen");
    file.place(c.order_events, "engine.order_events");
    file.place(c.orders_placed, "orders.placed");
    file.place(c.modifies_sent, "orders.modifies");
    file.place(c.cancels_sent, "orders.cancels");
    file.place(c.risk_blocks, "engine.risk_blocks");
    file.place(c.refused, "orders.refused");
    file.place(c.stale_blocks, "orders.stale_blocks");
    file.place(c.halted_blocks, "orders.halted_blocks");
    file.place(c.fills, "engine.fills");
    file.place(c.position_refusals, "engine.position_refusals");
    file.place(c.ticks_untimed, "tick_to_trade.untimed_orders");
    file.place(c.logons, "engine.logons");
    file.place(c.disconnects, "engine.disconnects");
    risk_.place_counters(file);
    orders_.place_counters(file);
    positions_.place_counters(file);
  }
  const core::LatencyHistogram& tick_to_trade() const noexcept { return tick_to_trade_; }
  // Packet read -> the orders it caused queued for the socket (our code
  // only: tick_to_trade minus the write system call).
  const core::LatencyHistogram& tick_to_decision() const noexcept { return tick_to_decision_; }

 private:
  static OrderManagerConfig orders_config(const Config& c) {
    OrderManagerConfig o = c.orders;
    o.instruments = static_cast<std::uint32_t>(c.instruments.instruments.size());
    return o;
  }
  ActionResult stale_block(ClientOrderId id) noexcept {
    counters_.stale_blocks.add();
    return {ActionStatus::kInstrumentStale, RiskResult::kAllowed, SubmitStatus::kSent, id};
  }
  ActionResult halted_block(ClientOrderId id) noexcept {
    counters_.halted_blocks.add();
    return {ActionStatus::kInstrumentHalted, RiskResult::kAllowed, SubmitStatus::kSent, id};
  }
  ActionResult risk_block(RiskResult why, ClientOrderId id) noexcept {
    counters_.risk_blocks.add();
    return {ActionStatus::kBlockedByRisk, why, SubmitStatus::kSent, id};
  }
  ActionResult refused(SubmitStatus why, ClientOrderId id) noexcept {
    counters_.refused.add();
    return {ActionStatus::kRefused, RiskResult::kAllowed, why, id};
  }
  // One strategy decision on a market data event. Its orders leave in one
  // write when the sender can hold them (the order gateway can; a test double
  // need not); when it sent any, the time from the packet's receipt to the
  // orders queued (before that write) goes into tick_to_decision.
  template <typename Fn>
  NT_ALWAYS_INLINE void decide(Fn&& fn) noexcept {
    const std::uint64_t before = sent_requests_;
    cork();
    fn();
    if (sent_requests_ != before && current_rx_tsc_ != 0) {
      const std::uint64_t t = clock_.now();
      if (t >= current_rx_tsc_)
        tick_to_decision_.record(
            static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(t - current_rx_tsc_))));
    }
    uncork();
  }
  void cork() noexcept {
    if constexpr (requires(Sender& x) { x.cork(); }) sender_.cork();
  }
  void uncork() noexcept {
    if constexpr (requires(Sender& x) { x.uncork(); }) sender_.uncork();
  }
  // One call into the order manager, timed (fn_order_manager) when telemetry records.
  template <typename Fn>
  NT_ALWAYS_INLINE auto order_manager_step(Fn&& fn) noexcept {
    NT_TIMED(fn_order_manager);
    return fn();
  }
  // The md key of the packet whose handling is deciding now, 0 when none is (see set_md_key).
  std::uint64_t current_md_key() const noexcept {
    return current_rx_tsc_ != 0 && current_rx_tsc_ == md_key_rx_tsc_ ? md_key_ : 0;
  }
  // When a decision was made (tr_decision), 0 when telemetry does not record:
  // read before the order manager, which writes the order at once when the
  // gateway is not corked (orders from timers and answers).
  static std::uint64_t decision_tsc() noexcept {
    if constexpr (NANOTICK_TELEMETRY != 0) {  // compiled out with the switch: no null path to warn about
      if (telemetry::Recorder* const recorder = NT_RECORDER(); recorder != nullptr) return recorder->now();
    }
    return 0;
  }
  void remember(std::uint32_t seq, std::uint64_t decided_tsc) noexcept {
    NT_HOP_AT(tr_decision, decided_tsc, current_md_key(), order_key_base_ | seq);
    ++sent_requests_;
    // Every order overwrites its slot (0 = not caused by a packet), so an
    // entry left by a session that ended cannot match a later order's seq.
    ticks_.remember(seq, current_rx_tsc_);
  }

  // One order event: the order manager has applied it (and with it the
  // working exposure); fills go to the positions, then the strategy hears it.
  void handle(const OrderEvent& ev) noexcept {
    if (ev.type == OrderEventType::kNone || ev.type == OrderEventType::kUnmatched) return;
    counters_.order_events.add();
    if (ev.type == OrderEventType::kFill) {
      counters_.fills.add();
      FillResult booked = FillResult::kOk;
      {
        NT_TIMED(fn_position_update);
        booked = positions_.on_fill(ev.fill());
      }
      if (booked != FillResult::kOk) counters_.position_refusals.add();
    }
    strategy_.on_order_event(*this, ev);
  }

  const market::InstrumentTable instruments_;
  Strategy& strategy_;
  const book::BookReplica& books_;
  const core::TscClock& clock_;
  std::vector<std::unique_ptr<FeatureEngine>> features_;
  PositionKeeper positions_;
  RiskManager risk_;
  Sender& sender_;
  OrderManager<Sender> orders_;
  // Per instrument, one byte the order path reads once: kLive (the book is
  // live: recovered, no gap) and kHalted (the feed says the venue halted it).
  static constexpr std::uint8_t kLive = 1;
  static constexpr std::uint8_t kHalted = 2;
  std::vector<std::uint8_t> state_;
  // Orders may go out: live and not halted (false out of range).
  bool tradable(InstrumentId i) const noexcept { return i < state_.size() && state_[i] == kLive; }
  std::vector<Price> reference_prices_;
  market::StpMode stp_;
  const std::uint64_t order_key_base_;  // client_id << 32 (telemetry order keys)
  std::uint64_t md_key_ = 0;  // set_md_key()
  std::uint64_t md_key_rx_tsc_ = 0;
  bool logged_on_ = false;
  bool stopping_ = false;
  client::Disconnect last_disconnect_{};
  std::uint64_t disconnect_events_ = 0;
  std::uint64_t current_rx_tsc_ = 0;
  TickStamps ticks_;
  core::LatencyHistogram tick_to_trade_;
  core::LatencyHistogram tick_to_decision_;
  std::uint64_t sent_requests_ = 0;
  TradeEngineCounters counters_;
};

}  // namespace nanotick::trading
