// The matching engine with the venue's controls around it (docs/CONTROLS.md):
// each request goes through the pre-trade checks (pre_trade_check.hpp) and
// either is refused by the engine with the check's reason (MatchingEngine::
// refuse: one gap-free report stream) or goes on to match; every report
// settles into the accounts (SettlingSink) as it reaches `sink`. The order
// of the Rust engine's pipeline this follows: pre-trade -> matching ->
// settlement, in one deterministic step per request.
//
// The admin requests (engine::is_admin_request: halt/resume an instrument,
// block/unblock a client, cancel all of a client's orders, adjust its cash
// or a position) are handled here
// too, never by the engine: each is answered by one kAdminDone report to
// the admin; a halt or resume that changes the instrument's state also
// publishes it (MdType::kTradingState). A blocked client's and a halted
// instrument's new orders and modifies are refused before the account
// checks (kClientBlocked, kInstrumentHalted); cancels always pass.
//
// Deterministic: the accounts and the switches are a pure function of the
// config and the request stream, like the books.
//
// Not thread-safe: one thread owns it. process() is noexcept and never
// allocates.
#pragma once

#include "controls/accounts.hpp"
#include "controls/pre_trade_check.hpp"
#include "controls/settling_sink.hpp"
#include "controls/stage_ticks.hpp"
#include "controls/switches.hpp"
#include "core/tsc_clock.hpp"
#include "engine/matching_engine.hpp"

namespace nanotick::controls {

template <typename Sink>
class ControlledEngine {
 public:
  using Engine = engine::MatchingEngine<SettlingSink<Sink>>;

  // Throws std::invalid_argument (the engine's or the accounts' config).
  ControlledEngine(const engine::EngineConfig& engine_config, const ControlsConfig& controls, Sink& sink)
      : accounts_(engine_config, controls),
        settling_(sink, accounts_),
        engine_(engine_config, settling_),
        switches_(engine_config.instruments.size()) {}
  ControlledEngine(const ControlledEngine&) = delete;
  ControlledEngine& operator=(const ControlledEngine&) = delete;

  void process(const engine::Request& rq) noexcept { step<false>(rq, nullptr, nullptr); }

  // process() with its time split by stage into `out` (zeroed first; see
  // stage_ticks.hpp), read from `clock`: the exchange's telemetry. Same
  // outputs and state as process(). A trade ledger tap that times into the
  // same `out` (the exchange's) has its ticks taken out of matching.
  void process_staged(const engine::Request& rq, const core::TscClock& clock, StageTicks& out) noexcept {
    out = StageTicks{};
    settling_.time_into(&out, &clock);
    step<true>(rq, &clock, &out);
    settling_.time_into(nullptr, nullptr);
  }
  // Snapshots (start-up / snapshotter code: allocates, throws): the books,
  // and the balances with the switches; importing needs a fresh engine and
  // rebuilds the holds.
  engine::EngineState export_state() const { return engine_.export_state(); }
  ControlsState export_controls() const {
    ControlsState s = accounts_.export_balances();
    switches_.export_into(s);
    return s;
  }
  void import_state(const engine::EngineState& books, const ControlsState& controls) {
    engine_.import_state(books);
    accounts_.import_balances(controls, engine_);
    switches_.import_from(controls);
  }
  const Switches& switches() const noexcept { return switches_; }

  const Engine& engine() const noexcept { return engine_; }
  Engine& engine() noexcept { return engine_; }
  const Accounts& accounts() const noexcept { return accounts_; }
  // Requests the pre-trade checks refused.
  std::uint64_t refused() const noexcept { return refused_; }

 private:
  // One request: switches and pre-trade checks, then the engine (or its
  // refusal). kTimed: stage boundaries read from `clock` into `out`.
  template <bool kTimed>
  NT_ALWAYS_INLINE void step(const engine::Request& rq, const core::TscClock* clock, StageTicks* out) noexcept {
    using engine::RequestType;
    std::uint64_t start = 0;
    if constexpr (kTimed) start = clock->now();
    engine::RejectReason why = engine::RejectReason::kNone;
    if (switches_.any() && (rq.type == RequestType::kNew || rq.type == RequestType::kModify)) [[unlikely]] {
      why = switches_.blocked(rq.client)      ? engine::RejectReason::kClientBlocked
            : switches_.halted(rq.instrument) ? engine::RejectReason::kInstrumentHalted
                                              : engine::RejectReason::kNone;
    } else if (engine::is_admin_request(rq.type)) [[unlikely]] {
      on_admin(rq);
      if constexpr (kTimed) out->matching = step_less_stages(start, clock->now(), *out);
      return;
    }
    if (why == engine::RejectReason::kNone) why = pre_trade_check(accounts_, engine_, rq);
    std::uint64_t checked = 0;
    if constexpr (kTimed) {
      checked = clock->now();
      out->pre_trade = checked - start;
    }
    if (why != engine::RejectReason::kNone) [[unlikely]] {
      ++refused_;
      engine_.refuse(rq, why);
    } else {
      engine_.process(rq);
    }
    if constexpr (kTimed) out->matching = step_less_stages(checked, clock->now(), *out);
  }

  // The engine's span from `from` to `to`, less the settlement and ledger
  // timed inside it (0 rather than wrapping, should the clock step back).
  static std::uint64_t step_less_stages(std::uint64_t from, std::uint64_t to, const StageTicks& t) noexcept {
    const std::uint64_t inner = t.settlement + t.ledger;
    return to > from + inner ? to - from - inner : 0;
  }

  // Cold: an admin's request. Validated here (the gateway checked that the
  // target client exists and that the sender is an admin); a malformed one
  // is answered with the reason and changes nothing.
  NT_COLD void on_admin(const engine::Request& rq) noexcept {
    using engine::RejectReason;
    using engine::RequestType;
    const RejectReason why = admin_problem(rq);
    if (why != RejectReason::kNone) return engine_.answer_admin(rq, why, 0, true);

    const engine::ClientId target = engine::admin_target(rq);
    switch (rq.type) {
      case RequestType::kHaltInstrument:
      case RequestType::kResumeInstrument: {
        const bool halt = rq.type == RequestType::kHaltInstrument;
        // Answered first, so the admin's answer is never behind the feed's news.
        engine_.answer_admin(rq, RejectReason::kNone, 0, true);
        if (switches_.set_halted(rq.instrument, halt)) engine_.publish_trading_state(rq, halt);
        return;
      }
      case RequestType::kBlockClient:
      case RequestType::kUnblockClient:
        (void)switches_.set_blocked(target, rq.type == RequestType::kBlockClient);
        return engine_.answer_admin(rq, RejectReason::kNone, 0, true);
      case RequestType::kAdminCancelAll: {
        // As the engine's mass cancel (cancel-on-disconnect's): one
        // kCancelled report per order, so the reports it adds count them.
        const engine::Seq before = engine_.last_report_seq();
        engine_.cancel_all_by_admin(rq, target);
        return engine_.answer_admin(rq, RejectReason::kNone, static_cast<Qty>(engine_.last_report_seq() - before),
                                    false);
      }
      case RequestType::kAdminAdjust:
        return engine_.answer_admin(rq, accounts_.adjust(target, rq.instrument, rq.price), 0, true);
      default: return engine_.answer_admin(rq, RejectReason::kInvalidRequestType, 0, true);  // admin_problem's
    }
  }

  // What is wrong with an admin request, kNone if nothing.
  engine::RejectReason admin_problem(const engine::Request& rq) const noexcept {
    using engine::RejectReason;
    using engine::RequestType;
    if (rq.client > engine::kMaxClientId) return RejectReason::kInvalidClientId;
    if (rq.reserved != 0 || (rq.price != 0 && rq.type != RequestType::kAdminAdjust) || rq.side != engine::Side::kBuy ||
        rq.order_type != engine::OrderType::kLimit || rq.stp != engine::StpMode::kNone)
      return RejectReason::kReservedNotZero;
    const bool known_instrument = rq.instrument < engine_.instrument_count();
    const bool known_target = rq.qty >= 0 && rq.qty <= engine::kMaxClientId;
    switch (rq.type) {
      case RequestType::kHaltInstrument:
      case RequestType::kResumeInstrument:
        if (!known_instrument) return RejectReason::kUnknownInstrument;
        return rq.qty == 0 ? RejectReason::kNone : RejectReason::kReservedNotZero;
      case RequestType::kBlockClient:
      case RequestType::kUnblockClient:
        if (rq.instrument != 0) return RejectReason::kReservedNotZero;
        return known_target ? RejectReason::kNone : RejectReason::kUnknownTargetClient;
      case RequestType::kAdminCancelAll:
      case RequestType::kAdminAdjust:
        if (!known_instrument && rq.instrument != engine::kAllInstruments) return RejectReason::kUnknownInstrument;
        return known_target ? RejectReason::kNone : RejectReason::kUnknownTargetClient;
      default: return RejectReason::kInvalidRequestType;
    }
  }

  Accounts accounts_;
  SettlingSink<Sink> settling_;
  Engine engine_;
  Switches switches_;
  std::uint64_t refused_ = 0;
};

}  // namespace nanotick::controls
