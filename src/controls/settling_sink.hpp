// The engine's sink seen through the accounts (docs/CONTROLS.md
// "Settlement"): every execution report settles into Accounts as it passes,
// then goes on to the real sink unchanged; market data passes straight
// through. Works for both kinds of sink: a report handed over (on_report)
// is settled before it is passed on; one the engine builds in the real
// sink's own slot (claim_report / commit_report, an engine::InPlaceSink) is
// settled from that slot at commit, before it is published.
//
// Stage timing (ControlledEngine::process_staged, only while the exchange
// records telemetry): each settle is then timed into StageTicks::settlement;
// otherwise it costs one predictable branch on a null pointer.
//
// Not thread-safe: the engine's thread. Hot path: no allocation, no
// virtual call.
#pragma once

#include "controls/accounts.hpp"
#include "controls/stage_ticks.hpp"
#include "core/compiler.hpp"
#include "core/tsc_clock.hpp"
#include "engine/events.hpp"

namespace nanotick::controls {

template <typename Sink>
class SettlingSink {
 public:
  SettlingSink(Sink& inner, Accounts& accounts) noexcept : inner_(&inner), accounts_(&accounts) {}

  Sink& inner() noexcept { return *inner_; }

  // While `ticks` is set, each settle adds its time, read from `clock`, to
  // ticks->settlement; nullptr stops the timing.
  void time_into(StageTicks* ticks, const core::TscClock* clock) noexcept {
    timing_ = ticks;
    clock_ = clock;
  }

  NT_ALWAYS_INLINE void on_report(const engine::ExecReport& r) noexcept
    requires engine::ReportSink<Sink>
  {
    settle(r);
    inner_->on_report(r);
  }
  engine::ExecReport& claim_report() noexcept
    requires engine::InPlaceReportSink<Sink>
  {
    claimed_ = &inner_->claim_report();
    return *claimed_;
  }
  NT_ALWAYS_INLINE void commit_report() noexcept
    requires engine::InPlaceReportSink<Sink>
  {
    settle(*claimed_);
    inner_->commit_report();
  }

  void on_market_data(const engine::MdEvent& m) noexcept
    requires requires(Sink& s, const engine::MdEvent& e) { s.on_market_data(e); }
  {
    inner_->on_market_data(m);
  }
  engine::MdEvent& claim_market_data() noexcept
    requires engine::InPlaceMarketDataSink<Sink>
  {
    return inner_->claim_market_data();
  }
  void commit_market_data() noexcept
    requires engine::InPlaceMarketDataSink<Sink>
  {
    inner_->commit_market_data();
  }

 private:
  NT_ALWAYS_INLINE void settle(const engine::ExecReport& r) noexcept {
    if (timing_ == nullptr) [[likely]] {
      accounts_->settle(r);
      return;
    }
    settle_timed(r);
  }
  NT_NOINLINE void settle_timed(const engine::ExecReport& r) noexcept {
    const std::uint64_t start = clock_->now();
    accounts_->settle(r);
    timing_->settlement += clock_->now() - start;
  }

  Sink* inner_;
  Accounts* accounts_;
  StageTicks* timing_ = nullptr;
  const core::TscClock* clock_ = nullptr;
  engine::ExecReport* claimed_ = nullptr;
};

}  // namespace nanotick::controls
