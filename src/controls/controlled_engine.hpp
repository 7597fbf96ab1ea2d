// The matching engine with the venue's controls around it (docs/CONTROLS.md):
// each request goes through the pre-trade checks (pre_trade_check.hpp) and
// either is refused by the engine with the check's reason (MatchingEngine::
// refuse: one gap-free report stream) or goes on to match; every report
// settles into the accounts (SettlingSink) as it reaches `sink`. The order
// of the Rust engine's pipeline this follows: pre-trade -> matching ->
// settlement, in one deterministic step per request.
//
// Deterministic: the accounts are a pure function of the config and the
// request stream, like the books.
//
// Not thread-safe: one thread owns it. process() is noexcept and never
// allocates.
#pragma once

#include "controls/accounts.hpp"
#include "controls/pre_trade_check.hpp"
#include "controls/settling_sink.hpp"
#include "engine/matching_engine.hpp"

namespace nanotick::controls {

template <typename Sink>
class ControlledEngine {
 public:
  using Engine = engine::MatchingEngine<SettlingSink<Sink>>;

  // Throws std::invalid_argument (the engine's or the accounts' config).
  ControlledEngine(const engine::EngineConfig& engine_config, const ControlsConfig& controls, Sink& sink)
      : accounts_(engine_config, controls), settling_(sink, accounts_), engine_(engine_config, settling_) {}
  ControlledEngine(const ControlledEngine&) = delete;
  ControlledEngine& operator=(const ControlledEngine&) = delete;

  void process(const engine::Request& rq) noexcept {
    const engine::RejectReason why = pre_trade_check(accounts_, engine_, rq);
    if (why != engine::RejectReason::kNone) [[unlikely]] {
      ++refused_;
      engine_.refuse(rq, why);
      return;
    }
    engine_.process(rq);
  }

  // Snapshots (start-up / snapshotter code: allocates, throws): the books and
  // the balances; importing needs a fresh engine and rebuilds the holds.
  engine::EngineState export_state() const { return engine_.export_state(); }
  AccountsState export_balances() const { return accounts_.export_balances(); }
  void import_state(const engine::EngineState& books, const AccountsState& balances) {
    engine_.import_state(books);
    accounts_.import_balances(balances, engine_);
  }

  const Engine& engine() const noexcept { return engine_; }
  Engine& engine() noexcept { return engine_; }
  const Accounts& accounts() const noexcept { return accounts_; }
  // Requests the pre-trade checks refused.
  std::uint64_t refused() const noexcept { return refused_; }

 private:
  Accounts accounts_;
  SettlingSink<Sink> settling_;
  Engine engine_;
  std::uint64_t refused_ = 0;
};

}  // namespace nanotick::controls
