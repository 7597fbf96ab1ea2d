// The trader's readings that no single counter holds -- session state, books
// live, PnL and positions per instrument, open orders, the market data
// sequence, the latency histograms' summaries -- as gauges in the counters
// file, so `./nanotick stat` and the demo see them while the trader runs.
// The counts (orders, fills, risk blocks, rejects...) are their owners'
// counters, placed directly; these are values the engine's thread computes
// and publishes at a low rate (Trader: every kPublishPeriodNs and once more
// when it stops), because recomputing percentiles per event would cost the
// hot path.
//
// Thread-safety: place() at start-up, publish() on the trader's engine
// thread (which owns everything it reads); the values may be read from
// anywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/histogram_counters.hpp"
#include "market/instrument_table.hpp"
#include "trading/position_keeper.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

class TraderGauges {
 public:
  static constexpr TimeNs kPublishPeriodNs = 250'000'000;

  // Labels: "session.logged_on", "md.books_live", "md.instruments",
  // "md.next_seq", "pnl.*", "volume", "fills", "orders.open",
  // "position.<symbol>.*", "tick_to_trade_ns.*", "tick_to_decision_ns.*",
  // "md.recovery_ns.*" -- the names Trader::summary() has always used.
  void place(core::CountersFile& file, const market::InstrumentTable& instruments) {
    file.begin_group();
    file.place(logged_on_, "session.logged_on", core::CounterKind::kGauge);
    file.place(books_live_, "md.books_live", core::CounterKind::kGauge);
    file.place(instruments_, "md.instruments", core::CounterKind::kGauge);
    file.place(next_seq_, "md.next_seq", core::CounterKind::kGauge);
    file.place(realised_, "pnl.realised", core::CounterKind::kGauge);
    file.place(unrealised_, "pnl.unrealised", core::CounterKind::kReal);
    file.place(total_, "pnl.total", core::CounterKind::kReal);
    file.place(volume_, "volume", core::CounterKind::kGauge);
    file.place(fills_, "fills");
    file.place(open_orders_, "orders.open", core::CounterKind::kGauge);
    positions_ = std::make_unique<Position[]>(instruments.instruments.size());
    for (std::size_t i = 0; i < instruments.instruments.size(); ++i) {
      Position& p = positions_[i];
      const std::string k = "position." + instruments.instruments[i].symbol + ".";
      file.place(p.qty, k + "qty", core::CounterKind::kGauge);
      file.place(p.open_cost, k + "open_cost", core::CounterKind::kGauge);
      file.place(p.realised, k + "realised", core::CounterKind::kGauge);
      file.place(p.unrealised, k + "unrealised", core::CounterKind::kReal);
      file.place(p.volume, k + "volume", core::CounterKind::kGauge);
      file.place(p.fills, k + "fills");
    }
    count_ = instruments.instruments.size();
    tick_to_trade_.place(file, "tick_to_trade_ns");
    tick_to_decision_.place(file, "tick_to_decision_ns");
    recovery_.place(file, "md.recovery_ns");
  }

  // Everything as of now. `Engine` is the TradeEngine, `Consumer` the MdConsumer.
  template <typename Engine, typename Consumer>
  void publish(const Engine& engine, const Consumer& consumer) noexcept {
    logged_on_.set(engine.logged_on() ? 1 : 0);
    std::uint64_t live = 0;
    for (InstrumentId i = 0; i < engine.instrument_count(); ++i) live += engine.is_live(i) ? 1 : 0;
    books_live_.set(live);
    instruments_.set(engine.instrument_count());
    next_seq_.set(consumer.next_seq());
    const PositionKeeper& pk = engine.positions();
    realised_.set(static_cast<std::uint64_t>(pk.total_realised()));
    unrealised_.set_real(pk.total_unrealised());
    total_.set_real(pk.total_pnl());
    volume_.set(static_cast<std::uint64_t>(pk.total_volume()));
    fills_.set(pk.total_fills());
    open_orders_.set(engine.orders().open_orders());
    for (std::size_t i = 0; i < count_; ++i) {
      const InstrumentPosition* p = pk.position(static_cast<InstrumentId>(i));
      if (p == nullptr) continue;
      Position& g = positions_[i];
      g.qty.set(static_cast<std::uint64_t>(p->position));
      g.open_cost.set(static_cast<std::uint64_t>(p->open_cost));
      g.realised.set(static_cast<std::uint64_t>(p->realised));
      g.unrealised.set_real(p->unrealised);
      g.volume.set(static_cast<std::uint64_t>(p->volume));
      g.fills.set(p->fills);
    }
    tick_to_trade_.publish(engine.tick_to_trade());
    tick_to_decision_.publish(engine.tick_to_decision());
    recovery_.publish(consumer.recovery_ns());
  }

 private:
  struct Position {
    core::Counter qty, open_cost, realised, unrealised, volume, fills;
  };
  core::Counter logged_on_, books_live_, instruments_, next_seq_, realised_, unrealised_, total_, volume_, fills_,
      open_orders_;
  std::unique_ptr<Position[]> positions_;
  std::size_t count_ = 0;
  core::HistogramCounters tick_to_trade_, tick_to_decision_, recovery_;
};

}  // namespace nanotick::trading
