// The trade engine's vocabulary (trade_engine.hpp): what it did with a
// strategy's request (ActionResult), its counters, the tick stamps that time
// tick-to-trade, and the calls it makes on a strategy (StrategyFor). Plain
// values and a concept: the engine's thread only, like the engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/counter.hpp"
#include "trading/order_manager.hpp"
#include "trading/risk_manager.hpp"
#include "trading/trading_types.hpp"

namespace nanotick::trading {

// What the engine did with a strategy's request.
enum class ActionStatus : std::uint8_t {
  kSent,
  kBlockedByRisk,     // ActionResult::risk says why
  kRefused,           // the order manager refused (not logged on, output full, ...): ActionResult::submit says why
  kInstrumentStale,   // the instrument's book is being recovered: no new orders or modifies on it
  kStopping,          // stop_trading() was called: only cancels go out
  kInstrumentHalted,  // the venue halted the instrument (its feed says so): no new orders or modifies on it
};
inline constexpr std::size_t kActionStatusCount = static_cast<std::size_t>(ActionStatus::kInstrumentHalted) + 1;

// The answer to place / modify / cancel: what happened, and why not.
struct [[nodiscard]] ActionResult {
  ActionStatus status = ActionStatus::kSent;
  RiskResult risk = RiskResult::kAllowed;  // the check's result (kAllowed when not checked: cancels, stale, stopping)
  SubmitStatus submit = SubmitStatus::kSent;  // the order manager's (kSent when it was not asked)
  ClientOrderId id = 0;  // the order's: place's new one once sent, modify's and cancel's always
  bool sent() const noexcept { return status == ActionStatus::kSent; }
};

struct TradeEngineCounters {
  core::Counter book_updates;
  core::Counter trades_seen;
  core::Counter order_events;
  core::Counter orders_placed;
  core::Counter modifies_sent;
  core::Counter cancels_sent;
  core::Counter risk_blocks;
  core::Counter refused;
  core::Counter stale_blocks;
  core::Counter halted_blocks;  // new orders and modifies kept back: the venue halted the instrument
  core::Counter fills;
  core::Counter position_refusals;  // a fill the position keeper could not book (counted by it too)
  core::Counter ticks_untimed;  // orders written whose cause was not a market data packet
  core::Counter logons;
  core::Counter disconnects;
};

// Order requests the strategy makes while handling something, remembered by
// session seq until the gateway says when the message was written.
class TickStamps {
 public:
  static constexpr std::size_t kSlots = 4096;  // power of two; far more than orders in flight to the socket
  void remember(std::uint32_t seq, std::uint64_t rx_tsc) noexcept { slots_[seq & (kSlots - 1)] = {seq, rx_tsc}; }
  // The receive TSC of the packet that caused `seq`, 0 if none (or overwritten).
  std::uint64_t take(std::uint32_t seq) noexcept {
    Slot& s = slots_[seq & (kSlots - 1)];
    if (s.seq != seq) return 0;
    const std::uint64_t rx = s.rx_tsc;
    s = Slot{};
    return rx;
  }

 private:
  struct Slot {
    std::uint32_t seq = 0;
    std::uint64_t rx_tsc = 0;
  };
  std::array<Slot, kSlots> slots_{};
};

// Strategy: the calls the engine makes. `Engine` is the engine itself (the
// strategy's context: features, positions, orders, and the order API).
template <typename S, typename Engine>
concept StrategyFor =
    requires(S& s, Engine& e, InstrumentId i, const TradeEvent& t, const OrderEvent& ev, TimeNs now, bool live) {
      s.on_book(e, i);  // the instrument's book changed (one call per packet); features are updated
      s.on_trade(e, t);  // a trade on the feed, before the book change it caused
      s.on_order_event(e, ev);  // one of our orders changed
      s.on_instrument_state(e, i, live);  // stale (recovering: no orders accepted) or live again
      s.on_timer(e, now);  // every pass of the trader's loop: keep it cheap
      s.on_session(e, live);  // logged on (true) or the session ended (false)
    };

}  // namespace nanotick::trading
