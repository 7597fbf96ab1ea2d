// The engine thread's end of the trade ledger (docs/CONTROLS.md "Trade
// ledger"): every fill report passes through on_report(); the engine
// reports a trade as the taker's fill followed at once by the maker's, so
// the taker's is kept and, at the maker's, one TradeRecord with both sides
// goes into the LedgerRing for the auxiliary thread's writer. All the
// engine's thread pays per trade is this copy and one TSC read: the file,
// its CRCs and its fdatasync are the writer's (trade_ledger.hpp).
//
// Recovery: the tap also sees the journal replay's muted outputs, and keeps
// only fills numbered after `after` (the last execution report seq the
// ledger file already holds), so the trades a crash kept out of the file go
// in now, in order, and none twice. During the replay they are collected in
// a vector (collect_replay_into), not the ring: nobody drains the ring
// before the exchange has decided to start, and the file is written only
// after that decision (TradeLedger::write_recovered), however many trades
// the replay puts back. By report seq, not by request: one
// request may make many trades, and a crash may leave only some of them in
// the file.
//
// A full ring is waited out (_mm_pause, counted in ring_full_waits): a
// trade left out of the ledger would make it unauditable.
//
// Stage timing (telemetry: EngineAgent, controls/stage_ticks.hpp): while
// time_into() has set a StageTicks, each fill's handling here is timed into
// its `ledger`; otherwise fills pay one branch on a null pointer for it.
//
// Not thread-safe: the engine's thread. noexcept; no allocation once the replay is over.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "controls/stage_ticks.hpp"
#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/tsc_clock.hpp"
#include "engine/events.hpp"
#include "exchange/ledger/trade_record.hpp"

namespace nanotick::exchange {

class TradeTap {
 public:
  // `next_trade_seq`: the ledger's next number; `after`: the last execution
  // report seq the ledger holds (TradeLedger::last_exec_seq).
  TradeTap(LedgerRing& ring, std::uint64_t next_trade_seq, std::uint64_t after) noexcept
      : ring_(&ring), next_trade_seq_(next_trade_seq), after_(after) {}

  NT_ALWAYS_INLINE void on_report(const engine::ExecReport& r) noexcept {
    if (r.type != engine::ReportType::kFill || r.seq <= after_) return;
    if (timing_ == nullptr) [[likely]] {
      take_fill(r);
      return;
    }
    const std::uint64_t start = clock_->now();
    take_fill(r);
    timing_->ledger += clock_->now() - start;
  }

  // While `ticks` is set, each fill's handling adds its time, read from
  // `clock`, to ticks->ledger; nullptr stops the timing.
  void time_into(controls::StageTicks* ticks, const core::TscClock* clock) noexcept {
    timing_ = ticks;
    clock_ = clock;
  }

  // The replay is over: from now on every trade goes in. A ledger that held
  // reports the recovered engine never reached again (the journal lost its
  // unsynced tail, or was repaired) must not make live trades vanish; the
  // server says so in its log (exchange_server.cpp).
  void end_replay() noexcept {
    after_ = 0;
    replay_out_ = nullptr;
  }
  // Until end_replay(), trades go into `out` instead of the ring.
  void collect_replay_into(std::vector<TradeRecord>* out) noexcept { replay_out_ = out; }

  std::uint64_t trades() const noexcept { return next_trade_seq_ - 1; }
  std::uint64_t ring_full_waits() const noexcept { return ring_full_waits_.get(); }
  core::Counter& ring_full_waits_counter() noexcept { return ring_full_waits_; }

 private:
  // A fill numbered after the ledger's last: the taker's is kept, the
  // maker's makes the trade record.
  void take_fill(const engine::ExecReport& r) noexcept {
    if (!r.is_maker) {
      taker_ = r;
      return;
    }
    TradeRecord t{};
    t.trade_seq = next_trade_seq_++;
    t.request_seq = r.request_seq;
    t.time_ns = core::TscClock::global().now();  // ticks here; the writer converts them to wall-clock ns
    t.instrument = r.instrument;
    t.aggressor = static_cast<std::uint8_t>(taker_.side);
    t.price = r.last_price;
    t.qty = r.last_qty;
    const bool maker_buys = r.side == engine::Side::kBuy;
    const engine::ExecReport& buy = maker_buys ? r : taker_;
    const engine::ExecReport& sell = maker_buys ? taker_ : r;
    t.buy_client = buy.client;
    t.sell_client = sell.client;
    t.buy_order_id = buy.order_id;
    t.sell_order_id = sell.order_id;
    t.buy_client_order_id = buy.client_order_id;
    t.sell_client_order_id = sell.client_order_id;
    t.buy_exec_seq = buy.seq;
    t.sell_exec_seq = sell.seq;
    if (replay_out_ != nullptr) [[unlikely]] {
      replay_out_->push_back(t);  // start-up only: allocates
      return;
    }
    while (!ring_->try_push(t)) {
      ring_full_waits_.add();
      _mm_pause();
    }
  }

  LedgerRing* ring_;
  std::uint64_t next_trade_seq_;
  std::uint64_t after_;
  std::vector<TradeRecord>* replay_out_ = nullptr;
  engine::ExecReport taker_{};
  core::Counter ring_full_waits_;
  controls::StageTicks* timing_ = nullptr;
  const core::TscClock* clock_ = nullptr;
};

}  // namespace nanotick::exchange
