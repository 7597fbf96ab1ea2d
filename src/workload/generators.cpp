#include "workload/generators.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "workload/emitter.hpp"
#include "workload/regimes.hpp"

namespace nanotick::workload {

using engine::InstrumentConfig;
using engine::InstrumentId;
using engine::OrderType;
using engine::Qty;
using engine::Side;

namespace {

constexpr std::uint32_t kClients = 64;

std::uint64_t scaled(std::uint64_t count, double scale) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(count) * scale));
}

InstrumentConfig instrument(const char* symbol, engine::Price tick) {
  InstrumentConfig in;
  in.symbol = symbol;
  in.tick_size = tick;
  in.min_price = tick;
  in.max_price = 1'000'000 * tick;
  return in;
}

Side random_side(Rng& rng) { return rng.chance(0.5) ? Side::kBuy : Side::kSell; }
// +1 for a buy, -1 for a sell: the direction "more aggressive" goes in ticks.
std::int64_t dir(Side side) { return side == Side::kBuy ? 1 : -1; }

// A passive price `depth` ticks behind the touch on `side`, never crossing the
// opposite best (mid in ticks when a side is empty).
std::int64_t passive_tick(Emitter& e, InstrumentId i, Side side, std::int64_t mid, std::int64_t depth) {
  std::int64_t tick = mid - dir(side) * (1 + depth);
  if (const auto opposite = e.best_tick(i, engine::opposite(side))) {
    tick = side == Side::kBuy ? std::min(tick, *opposite - 1 - depth) : std::max(tick, *opposite + 1 + depth);
  }
  return tick;
}

// The opposite touch plus `through` ticks (an aggressive price); mid when empty.
std::int64_t aggressive_tick(Emitter& e, InstrumentId i, Side side, std::int64_t mid, std::int64_t through) {
  const auto opposite = e.best_tick(i, engine::opposite(side));
  return (opposite ? *opposite : mid) + dir(side) * through;
}

// A cancel as the mixed flows make them: mostly of a live order, a few late
// (the order is already done: duplicate cancels, cancels racing a fill) and a
// few of ids never used.
void flow_cancel(Emitter& e, InstrumentId i, double late, double unknown) {
  const double r = e.rng().unit();
  if (r < unknown) {
    e.unknown_cancel(i);
  } else if (r < unknown + late && e.late_cancel(i)) {
  } else if (e.model().live_count(i) > 0) {
    e.cancel(e.model().random_live(i, e.rng()));
  } else {
    e.unknown_cancel(i);
  }
}

// A modify of a random live order: smaller quantity in place (keeps priority)
// or a move of a few ticks, possibly with more quantity (loses priority).
void flow_modify(Emitter& e, InstrumentId i) {
  const auto key = e.model().random_live(i, e.rng());
  const auto& o = e.model().order(key);
  const std::int64_t tick = e.tick_of(i, o.price);
  const Qty open = o.order_qty - o.filled;
  if (open > 1 && e.rng().chance(0.4)) {
    e.modify(key, tick, o.filled + open / 2);
    return;
  }
  std::int64_t move = e.rng().between(1, 3) * (e.rng().chance(0.5) ? 1 : -1);
  if (e.price_at(i, tick + move) == o.price) move = -move;
  const Qty total = o.order_qty + (e.rng().chance(0.3) ? 10 * e.rng().between(1, 5) : 0);
  e.modify(key, tick + move, total);
}

Qty resting_qty(Rng& rng) { return 10 * (2 + rng.power_law(1.5, 100)); }

// ---------------------------------------------------------------- cancel-heavy
// One instrument, near-static mid. Exactly 1,000,000 x scale new limit orders
// and 300,000 x scale cancels, interleaved uniformly; 40% of the new orders are
// marketable (they trade with the resting ones and keep the book bounded).
void cancel_heavy(Workload& wl, GenStats& stats, const GenOptions& opt) {
  wl.config.instruments = {instrument("CXL", 1)};
  Emitter e(wl, stats, opt.seed, kClients);
  Rng& rng = e.rng();
  std::uint64_t news = scaled(1'000'000, opt.scale);
  std::uint64_t cancels = scaled(300'000, opt.scale);
  std::int64_t mid = 100'000;
  wl.requests.reserve(news + cancels);
  while (news + cancels > 0) {
    if (rng.chance(0.01)) mid += rng.chance(0.5) ? 1 : -1;
    const bool cancel = rng.below(news + cancels) < cancels;
    if (cancel) {
      --cancels;
      flow_cancel(e, 0, 0.02, 0.01);
      continue;
    }
    --news;
    const Side side = random_side(rng);
    if (rng.chance(0.4)) {
      e.new_order(0, side, OrderType::kLimit, aggressive_tick(e, 0, side, mid, rng.between(0, 2)), resting_qty(rng));
    } else {
      e.new_order(0, side, OrderType::kLimit, passive_tick(e, 0, side, mid, rng.between(0, 40)), resting_qty(rng));
    }
  }
  e.finish();
}

// ---------------------------------------------------------------- mixed
// Four instruments with different ticks, each mid a random walk. New orders:
// ~15% IOC (small, at or near the opposite touch), ~1% FOK, a few marketable
// limits, the rest passive limits at a power-law depth behind the touch. About
// 20% of resting orders get modified; cancels keep each book near a target
// depth; at the end every order still resting is cancelled, so ~95% of resting
// orders end cancelled (the rest are filled). ~2% of cancels are late
// (duplicates or after a fill), ~1% name unknown ids; ~0.3% of new orders reuse
// a live client order id.
void mixed(Workload& wl, GenStats& stats, const GenOptions& opt) {
  wl.config.instruments = {instrument("MIXA", 1), instrument("MIXB", 5), instrument("MIXC", 1), instrument("MIXD", 25)};
  Emitter e(wl, stats, opt.seed, kClients);
  Rng& rng = e.rng();
  std::vector<std::int64_t> mid = {10'000, 4'000, 50'000, 2'000};
  constexpr double kTargetLive = 1500;
  const std::uint64_t steps = scaled(2'000'000, opt.scale);
  wl.requests.reserve(steps + steps / 8);
  for (std::uint64_t s = 0; s < steps; ++s) {
    const auto i = static_cast<InstrumentId>(rng.below(mid.size()));
    if (rng.chance(0.05)) mid[i] = std::max<std::int64_t>(1000, mid[i] + (rng.chance(0.5) ? 1 : -1));
    const auto live = static_cast<double>(e.model().live_count(i));
    const double p_cancel = std::min(0.6, 0.4 * live / kTargetLive);
    const double p_modify = live > 0 ? 0.11 : 0.0;
    const double r = rng.unit();
    if (r < p_cancel) {
      flow_cancel(e, i, 0.02, 0.01);
      continue;
    }
    if (r < p_cancel + p_modify) {
      flow_modify(e, i);
      continue;
    }
    const Side side = random_side(rng);
    const double kind = rng.unit();
    if (kind < 0.15) {
      e.new_order(i, side, OrderType::kIoc, aggressive_tick(e, i, side, mid[i], rng.between(-1, 1)),
                  rng.between(1, 10));
    } else if (kind < 0.16) {
      e.new_order(i, side, OrderType::kFok, aggressive_tick(e, i, side, mid[i], rng.between(0, 2)), rng.between(1, 20));
    } else if (kind < 0.163) {
      if (!e.duplicate_new(i, side, passive_tick(e, i, side, mid[i], 5), resting_qty(rng)))
        e.new_order(i, side, OrderType::kLimit, passive_tick(e, i, side, mid[i], 5), resting_qty(rng));
    } else if (kind < 0.18) {
      e.new_order(i, side, OrderType::kLimit, aggressive_tick(e, i, side, mid[i], 0), rng.between(1, 10));
    } else {
      e.new_order(i, side, OrderType::kLimit, passive_tick(e, i, side, mid[i], rng.power_law(1.2, 200)),
                  resting_qty(rng));
    }
  }
  e.cancel_all();
  e.finish();
}

// ---------------------------------------------------------------- deep
// One instrument, static mid. First 50,000 x scale resting orders spread up to
// 5,000 ticks each side, then 1,000,000 x scale requests keeping that depth:
// 45% passive limits, 45% cancels of random resting orders (anywhere in the
// book), 5% modifies, 5% small IOCs at the touch.
void deep(Workload& wl, GenStats& stats, const GenOptions& opt) {
  wl.config.instruments = {instrument("DEEP", 1)};
  Emitter e(wl, stats, opt.seed, kClients);
  Rng& rng = e.rng();
  constexpr std::int64_t kMid = 100'000;
  const std::uint64_t build = scaled(50'000, opt.scale);
  const std::uint64_t steps = scaled(1'000'000, opt.scale);
  wl.requests.reserve(build + steps);
  auto add_resting = [&] {
    const Side side = random_side(rng);
    e.new_order(0, side, OrderType::kLimit, passive_tick(e, 0, side, kMid, rng.power_law(0.6, 5000)), resting_qty(rng));
  };
  for (std::uint64_t k = 0; k < build; ++k) add_resting();
  for (std::uint64_t s = 0; s < steps; ++s) {
    const double r = rng.unit();
    const bool have = e.model().live_count(0) > 0;
    if (r < 0.45 || !have) {
      add_resting();
    } else if (r < 0.90) {
      flow_cancel(e, 0, 0.01, 0.005);
    } else if (r < 0.95) {
      flow_modify(e, 0);
    } else {
      const Side side = random_side(rng);
      e.new_order(0, side, OrderType::kIoc, aggressive_tick(e, 0, side, kMid, 0), rng.between(1, 20));
    }
  }
  e.finish();
}

// ---------------------------------------------------------------- crash
// One instrument whose mid follows four legs: down 30,000 ticks, up 20,000,
// down 15,000, up 25,000 (from 100,000), plus noise. Passive liquidity is
// posted around the moving mid, aggressive orders (half market, half IOC)
// sweep in the direction of the leg, stale orders are cancelled.
void crash(Workload& wl, GenStats& stats, const GenOptions& opt) {
  wl.config.instruments = {instrument("CRASH", 1)};
  Emitter e(wl, stats, opt.seed, kClients);
  Rng& rng = e.rng();
  const std::uint64_t steps = scaled(1'000'000, opt.scale);
  struct Leg {
    double share;
    std::int64_t move;
  };
  constexpr Leg kLegs[] = {{0.3, -30'000}, {0.2, 20'000}, {0.2, -15'000}, {0.3, 25'000}};
  wl.requests.reserve(steps);
  std::int64_t leg_start_mid = 100'000;
  std::uint64_t done = 0;
  for (const Leg& leg : kLegs) {
    const auto leg_steps = static_cast<std::uint64_t>(static_cast<double>(steps) * leg.share);
    const Side trend = leg.move < 0 ? Side::kSell : Side::kBuy;
    for (std::uint64_t s = 0; s < leg_steps; ++s, ++done) {
      const std::int64_t mid = leg_start_mid +
                               static_cast<std::int64_t>(static_cast<double>(leg.move) * static_cast<double>(s) /
                                                         static_cast<double>(leg_steps)) +
                               rng.between(-3, 3);
      const double r = rng.unit();
      if (r < 0.75 || e.model().live_count(0) == 0) {
        const Side side = random_side(rng);
        // Priced from the moving mid alone: orders left behind on the wrong
        // side of it are crossed (and traded) by the new ones.
        e.new_order(0, side, OrderType::kLimit, mid - dir(side) * (1 + rng.power_law(0.8, 500)), rng.between(1, 100));
      } else if (r < 0.88) {
        const Side side = rng.chance(0.8) ? trend : engine::opposite(trend);
        if (rng.chance(0.5)) {
          e.new_order(0, side, OrderType::kMarket, 0, rng.between(20, 200));
        } else {
          e.new_order(0, side, OrderType::kIoc, mid + dir(side) * 20, rng.between(20, 200));
        }
      } else {
        flow_cancel(e, 0, 0.01, 0.005);
      }
    }
    leg_start_mid += leg.move;
  }
  e.finish();
}

}  // namespace

Workload generate(const GenOptions& options, GenStats* stats) {
  if (!(options.scale > 0.0 && options.scale <= 100.0))
    throw std::invalid_argument("workload scale " + std::to_string(options.scale) + " is outside (0, 100]");
  Workload wl;
  wl.kind = options.kind;
  wl.seed = options.seed;
  wl.scale = options.scale;
  GenStats local;
  GenStats& s = stats != nullptr ? *stats : local;
  s = GenStats{};
  switch (options.kind) {
    case WorkloadKind::kCancelHeavy: cancel_heavy(wl, s, options); break;
    case WorkloadKind::kMixed: mixed(wl, s, options); break;
    case WorkloadKind::kDeep: deep(wl, s, options); break;
    case WorkloadKind::kCrash: crash(wl, s, options); break;
    case WorkloadKind::kRegimeStatic:
    case WorkloadKind::kRegimeNormal:
    case WorkloadKind::kRegimeSwing25:
    case WorkloadKind::kRegimeSwing40:
    case WorkloadKind::kRegimeFlashCrash: generate_regime(wl, s, options); break;
    case WorkloadKind::kCustom:
      throw std::invalid_argument("generate(): 'custom' workloads are built by hand, not generated");
  }
  wl.config.validate();
  return wl;
}

}  // namespace nanotick::workload
