#include "workload/regimes.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "workload/emitter.hpp"

namespace nanotick::workload {

using engine::OrderType;
using engine::Qty;
using engine::Side;
using namespace regime;

RegimeParams regime_params(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kRegimeStatic: return {"STATIC", 0.0, 0.0};
    case WorkloadKind::kRegimeNormal: return {"NORMAL", 0.15, 0.02};
    case WorkloadKind::kRegimeSwing25: return {"SWING25", 0.5, 0.25};
    case WorkloadKind::kRegimeSwing40: return {"SWING40", 0.5, 0.40};
    case WorkloadKind::kRegimeFlashCrash: return {"FLASHCRASH", 0.5, 0.60};
    default: break;
  }
  throw std::invalid_argument("regime_params(): '" + std::string(to_string(kind)) + "' is not a regime");
}

namespace {

constexpr std::uint32_t kClients = 64;

// Standard normal (Box-Muller, the cosine branch only: one per two uniforms).
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.unit();  // (0, 1]
  const double u2 = rng.unit();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Exponential with mean 1.
double exponential(Rng& rng) { return -std::log(1.0 - rng.unit()); }

// Ticks from the mid: the power law (P(d >= k) = k^-2.23 for 1 <= k <= kMaxDepth,
// Rng::power_law's convention), or, for kHumpShare of the orders, the hump
// around kHumpTicks (triangular, +-2).
std::int64_t distance(Rng& rng) {
  if (rng.chance(kHumpShare)) return kHumpTicks + rng.between(-1, 1) + rng.between(-1, 1);
  return 1 + rng.power_law(kDepthExponent, kMaxDepth);
}

// The standard Brownian motion W on [0, 1] that drives the mid, at k / n for
// k = 0 .. n - 1: a coarse walk of kPathGrid steps from a stream of its own
// (the same at every scale, so a seed's market has the same shape at any
// size: the CI-scale runs see the market of the full-size run), filled in with
// Brownian bridges drawn from `rng` (exact in distribution: each point is drawn
// given the nearest known points on either side).
std::vector<double> brownian_path(std::uint64_t seed, std::size_t n, Rng& rng) {
  Rng coarse_rng(seed ^ 0x6A09E667F3BCC909ull);
  std::vector<double> coarse(kPathGrid + 1, 0.0);
  const double coarse_sd = 1.0 / std::sqrt(static_cast<double>(kPathGrid));
  for (std::size_t j = 1; j <= kPathGrid; ++j) coarse[j] = coarse[j - 1] + coarse_sd * normal(coarse_rng);
  std::vector<double> w(n, 0.0);
  double known_t = 0;  // the latest point known so far (fine or coarse) and its value
  double known_w = 0;
  for (std::size_t k = 1; k < n; ++k) {
    const std::size_t j = k * kPathGrid / n;  // t = k / n lies in [j, j + 1) / kPathGrid
    const double t = static_cast<double>(k) / static_cast<double>(n);
    const double t_j = static_cast<double>(j) / static_cast<double>(kPathGrid);
    if (t_j >= known_t) {
      known_t = t_j;
      known_w = coarse[j];
    }
    if (k * kPathGrid % n == 0) {  // on a coarse point
      w[k] = known_w;
      continue;
    }
    const double t_next = static_cast<double>(j + 1) / static_cast<double>(kPathGrid);
    const double mean = known_w + (coarse[j + 1] - known_w) * (t - known_t) / (t_next - known_t);
    const double var = (t - known_t) * (t_next - t) / (t_next - known_t);
    w[k] = mean + std::sqrt(var) * normal(rng);
    known_t = t;
    known_w = w[k];
  }
  return w;
}

// One new order as planned, before its messages are emitted.
struct Planned {
  std::int64_t tick;  // limit price in ticks
  std::int64_t depth;  // its distance from the mid it was priced at
  std::int64_t arrival_ns = 0;
  Qty qty;
  Qty increase = 0;      // the modify's added quantity
  std::int8_t reprice = 0;  // the modify's price move in ticks (-1, 0, +1)
  Side side;
  bool ioc;
  BookModel::Key key = 0;  // known once emitted
};

// The order of steps decides ties in time (an order's own steps never reorder).
enum class Step : std::uint8_t { kNew, kModify, kCancel, kDuplicateCancel, kStaleModify };

struct Event {
  std::int64_t ns;
  std::uint32_t order;
  Step step;
  bool operator<(const Event& o) const noexcept {
    if (ns != o.ns) return ns < o.ns;
    if (step != o.step) return step < o.step;
    return order < o.order;
  }
};

std::int64_t to_ns(double ns) { return static_cast<std::int64_t>(std::llround(ns)); }

}  // namespace

void generate_regime(Workload& wl, GenStats& stats, const GenOptions& opt) {
  const RegimeParams params = regime_params(opt.kind);
  wl.config.instruments.assign(1, engine::InstrumentConfig{});
  auto& instrument = wl.config.instruments[0];
  instrument.symbol = params.symbol;
  Emitter e(wl, stats, opt.seed, kClients);
  Rng& rng = e.rng();
  const auto n =
      static_cast<std::size_t>(std::max<long long>(2, std::llround(static_cast<double>(kNewOrders) * opt.scale)));

  // 1. Prices: the mid is a GBM with zero drift sampled once per new order,
  // S = S0 exp(-vol^2 t / 2 + vol B_t) over T = (swing / vol)^2 years, so
  // vol sqrt(T), the typical excursion of log S, is the swing. Buys are
  // priced on the first half of the path, sells on the second, each passive
  // on its own side.
  std::vector<double> w;  // B_t / sqrt(T) at t = k T / n
  if (params.vol > 0) w = brownian_path(opt.seed, n, rng);
  const double years = params.vol > 0 ? (params.swing / params.vol) * (params.swing / params.vol) : 0;
  std::vector<Planned> orders;
  orders.reserve(n);
  stats.min_mid = stats.max_mid = kStartMid;
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t mid_tick = kStartMid;
    if (params.vol > 0) {
      const double t = years * static_cast<double>(k) / static_cast<double>(n);
      const double log_move = -0.5 * params.vol * params.vol * t + params.vol * std::sqrt(years) * w[k];
      mid_tick = std::max<std::int64_t>(1, std::llround(static_cast<double>(kStartMid) * std::exp(log_move)));
    }
    stats.min_mid = std::min(stats.min_mid, mid_tick);
    stats.max_mid = std::max(stats.max_mid, mid_tick);
    const Side side = k < n / 2 ? Side::kBuy : Side::kSell;
    const std::int64_t d = distance(rng);
    const std::int64_t tick = side == Side::kBuy ? std::max<std::int64_t>(1, mid_tick - d) : mid_tick + d;
    orders.push_back(Planned{tick, d, 0, rng.between(1, kMaxQty), 0, 0, side, rng.chance(kIocShare)});
  }

  // 2. Arrival order: shuffled (Fisher-Yates), so buys and sells interleave.
  for (std::size_t i = n - 1; i > 0; --i) std::swap(orders[i], orders[rng.below(i + 1)]);

  // 3. Lifecycles in synthetic time: Poisson arrivals; IOCs only arrive; the
  // others may get one modify (somewhere in their life) and a cancel at the
  // end of an exponential lifetime whose median grows with the distance.
  std::vector<Event> events;
  events.reserve(n * 2 + n / 16);
  std::vector<std::int64_t> lifetimes;
  lifetimes.reserve(n);
  const double gap_ns = 1e6 / kArrivalsPerMs;
  double now = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Planned& o = orders[i];
    const auto id = static_cast<std::uint32_t>(i);
    now += gap_ns * exponential(rng);
    o.arrival_ns = to_ns(now);
    events.push_back({o.arrival_ns, id, Step::kNew});
    if (o.ioc) continue;
    const double life = kLifetimeMedianNs * std::pow(static_cast<double>(o.depth), kLifetimeDepthPower) *
                        exponential(rng) / std::numbers::ln2;
    const bool modified = rng.chance(kModifyShare);
    if (modified) {
      o.increase = rng.between(1, kMaxIncrease);
      if (rng.chance(kRepriceShare)) o.reprice = rng.chance(0.5) ? 1 : -1;
      events.push_back({o.arrival_ns + to_ns(rng.unit() * life), id, Step::kModify});
    }
    if (!rng.chance(kCancelShare)) continue;
    const std::int64_t cancel_ns = o.arrival_ns + to_ns(life);
    lifetimes.push_back(cancel_ns - o.arrival_ns);
    events.push_back({cancel_ns, id, Step::kCancel});
    if (rng.chance(kDuplicateCancelShare))
      events.push_back({cancel_ns + to_ns(kLateDelayMeanNs * exponential(rng)), id, Step::kDuplicateCancel});
    if (modified && rng.chance(kStaleModifyShare))
      events.push_back({cancel_ns + to_ns(kLateDelayMeanNs * exponential(rng)), id, Step::kStaleModify});
  }
  std::sort(events.begin(), events.end());

  // 4. The instrument: tick 1, a band holding every price (a modify moves one tick).
  std::int64_t lo = orders[0].tick;
  std::int64_t hi = orders[0].tick;
  for (const Planned& o : orders) {
    lo = std::min(lo, o.tick);
    hi = std::max(hi, o.tick);
  }
  instrument.tick_size = 1;
  instrument.min_price = std::max<std::int64_t>(1, lo - 1);
  instrument.max_price = hi + 1;
  instrument.max_order_qty = 1'000'000;

  // 5. The messages in time order. Cancels and modifies go out as planned
  // whether or not the order is still live: one already filled or cancelled
  // is rejected by the engine, as a real client's would be.
  wl.requests.reserve(events.size());
  for (const Event& ev : events) {
    Planned& o = orders[ev.order];
    switch (ev.step) {
      case Step::kNew:
        o.key = e.new_order(0, o.side, o.ioc ? OrderType::kIoc : OrderType::kLimit, o.tick, o.qty);
        break;
      case Step::kModify:
        if (e.model().is_live(o.key)) {
          const auto& live = e.model().order(o.key);
          e.modify(o.key, e.tick_of(0, live.price) + o.reprice, live.order_qty + o.increase);
        } else {
          e.modify_gone(0, o.key, o.tick + o.reprice, o.qty + o.increase);
        }
        break;
      case Step::kCancel:
        if (e.model().is_live(o.key)) {
          e.cancel(o.key);
        } else {
          e.cancel_gone(0, o.key);
        }
        break;
      case Step::kDuplicateCancel:
        e.cancel_gone(0, o.key);
        ++stats.duplicate_cancels;
        break;
      case Step::kStaleModify:
        e.modify_gone(0, o.key, o.tick + o.reprice, o.qty + 2 * o.increase);
        ++stats.stale_modifies;
        break;
    }
  }
  e.finish();

  if (!lifetimes.empty()) {
    auto middle = lifetimes.begin() + static_cast<std::ptrdiff_t>(lifetimes.size() / 2);
    std::nth_element(lifetimes.begin(), middle, lifetimes.end());
    stats.median_lifetime_ns = static_cast<std::uint64_t>(*middle);
  }
  stats.synthetic_ns = static_cast<std::uint64_t>(events.back().ns);
}

}  // namespace nanotick::workload
