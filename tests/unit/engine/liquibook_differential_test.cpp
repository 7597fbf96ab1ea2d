// Differential test against Liquibook (an independent open-source order book,
// driven through bench/engine/liquibook_adapter.hpp): on random streams of
// limit, IOC, cancel and modify requests -- the subset both implement -- the
// fast MatchingEngine must produce the same trades, in the same order, as
// Liquibook: same (instrument, maker, taker, price, qty), and hold the same
// books (same orders, same priority order, same open quantities).
//
// Modify: Liquibook re-queues every replaced order, so the streams only send
// modifies that lose priority in our engine too (a new price, or a larger total)
// and the adapter plays them as cancel + new with the remaining quantity.
// No FOK/market (Liquibook's AON semantics differ), no self-trade prevention
// (every order uses StpMode::kNone: same-client orders trade, as in Liquibook).
//
// The same streams also check the benchmark's std::map / std::unordered_map
// peer books against Liquibook, so every book in engine_bench is a correct one.
//
// Size: NANOTICK_STRESS_ITEMS messages per seed when set (larger runs), else a
// CI-sized default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/liquibook_adapter.hpp"
#include "engine/matching_engine.hpp"
#include "engine/peer_books.hpp"
#include "support/stress.hpp"

namespace nanotick::engine {
namespace {

using bench::CollectingFillSink;
using bench::LiquibookAdapter;
using bench::PeerFill;
using bench::PeerResult;

// Turns the engine's fill reports (taker's kFill, then maker's kFill) into PeerFills.
struct EngineFillSink {
  std::vector<PeerFill> fills;
  std::uint64_t taker_key = 0;
  Price taker_price = 0;
  Qty taker_qty = 0;
  int pairing_errors = 0;
  bool expect_maker = false;

  void on_report(const ExecReport& r) {
    if (r.type != ReportType::kFill) return;
    const std::uint64_t key = bench::order_key(r.client, r.client_order_id);
    if (!r.is_maker) {
      if (expect_maker) ++pairing_errors;
      taker_key = key;
      taker_price = r.last_price;
      taker_qty = r.last_qty;
      expect_maker = true;
      return;
    }
    if (!expect_maker || r.last_price != taker_price || r.last_qty != taker_qty) ++pairing_errors;
    expect_maker = false;
    fills.push_back(PeerFill{r.instrument, key, taker_key, r.last_price, r.last_qty});
  }
  void on_market_data(const MdEvent&) {}
};

struct Resting {
  std::uint64_t key;
  Price price;
  Qty open;
  friend bool operator==(const Resting&, const Resting&) = default;
};

template <typename Book>
std::vector<Resting> side_of(const Book& book, InstrumentId i, Side s) {
  std::vector<Resting> out;
  book.for_each_order(i, s, [&](std::uint64_t key, Price price, Qty open) {
    out.push_back(Resting{key, price, open});
  });
  return out;
}
template <typename S>
std::vector<Resting> side_of(const MatchingEngine<S>& engine, InstrumentId i, Side s) {
  std::vector<Resting> out;
  engine.for_each_order(i, s, [&](const auto& o) {
    out.push_back(Resting{bench::order_key(o.client, o.client_order_id), o.price, o.open_qty});
  });
  return out;
}

// Two instruments: one with positive prices on tick 1, one straddling zero on
// tick 5 (checks the adapter's price shift and our signed prices).
EngineConfig diff_config() {
  EngineConfig config;
  InstrumentConfig a;
  a.symbol = "AAA";
  a.tick_size = 1;
  a.min_price = 1000;
  a.max_price = 1200;
  a.max_order_qty = 1000;
  InstrumentConfig b;
  b.symbol = "BBB";
  b.tick_size = 5;
  b.min_price = -500;
  b.max_price = 500;
  b.max_order_qty = 1000;
  config.instruments = {a, b};
  return config;
}

// Random limit/IOC/cancel/modify streams around a random-walk mid, a few
// clients (so self-matches happen), reused ids (duplicates and reuse after done)
// and cancels/modifies of orders that are long gone.
class StreamGen {
 public:
  StreamGen(const EngineConfig& config, std::uint64_t seed) : config_(config), state_(seed) {
    for (const InstrumentConfig& ic : config.instruments) mids_.push_back((ic.min_price + ic.max_price) / 2);
  }

  // `live` is the oracle's live-order count: cancels get likelier as it grows.
  Request next(std::size_t live) {
    const auto i = static_cast<InstrumentId>(below(config_.instruments.size()));
    const InstrumentConfig& ic = config_.instruments[i];
    walk_mid(i);
    const std::uint64_t roll = below(100);
    const std::uint64_t cancel_pct = live > 2000 ? 45 : 20;
    if (roll < cancel_pct && !issued_.empty()) return cancel_of();
    if (roll < cancel_pct + 15 && !issued_.empty()) return modify_of();
    const auto client = static_cast<ClientId>(1 + below(4));
    ClientOrderId id = ++next_id_;
    if (below(100) < 3 && !issued_.empty()) id = issued_[below(issued_.size())].id;  // reuse
    const Side side = below(2) == 0 ? Side::kBuy : Side::kSell;
    const OrderType type = below(100) < 25 ? OrderType::kIoc : OrderType::kLimit;
    const Request r = make_new(i, client, id, side, type, price_near(i, ic, side), 1 + static_cast<Qty>(below(60)));
    issued_.push_back(Issued{i, client, id});
    return r;
  }

  // The oracle accepted a new order or a modify: remember its price and total,
  // and whether it rests (a candidate for cancels and modifies).
  void note(const Request& r, bool rested) {
    last_[bench::order_key(r.client, r.client_order_id)] = {r.price, r.qty};
    if (rested && r.type == RequestType::kNew) resting_.push_back(Issued{r.instrument, r.client, r.client_order_id});
  }

 private:
  struct Issued {
    InstrumentId instrument;
    ClientId client;
    ClientOrderId id;
  };

  std::uint64_t next_u64() { return state_ = test::mix(state_); }
  std::uint64_t below(std::uint64_t n) { return next_u64() % n; }

  void walk_mid(InstrumentId i) {
    const InstrumentConfig& ic = config_.instruments[i];
    Price& mid = mids_[i];
    const std::uint64_t step = below(16);
    if (step == 0 && mid - ic.tick_size > ic.min_price + 20 * ic.tick_size) mid -= ic.tick_size;
    if (step == 1 && mid + ic.tick_size < ic.max_price - 20 * ic.tick_size) mid += ic.tick_size;
    mid -= mid % ic.tick_size;
  }

  // Mostly near the touch, sometimes through it (crossing), inside the band.
  Price price_near(InstrumentId i, const InstrumentConfig& ic, Side side) {
    const auto offset = static_cast<Price>(below(12)) - 3;  // -3 .. 8 ticks away from mid
    const Price p = side == Side::kBuy ? mids_[i] - offset * ic.tick_size : mids_[i] + offset * ic.tick_size;
    return std::clamp(p, ic.min_price, ic.max_price);
  }

  // Mostly an order the oracle saw rest (likely still live; removed from the
  // candidates when `consume`), sometimes any id ever issued (likely done).
  Issued pick(bool consume) {
    if (!resting_.empty() && below(100) < 85) {
      const std::size_t at = below(resting_.size());
      const Issued chosen = resting_[at];
      if (consume) {
        resting_[at] = resting_.back();
        resting_.pop_back();
      }
      return chosen;
    }
    return issued_[below(issued_.size())];
  }

  Request cancel_of() {
    const Issued o = pick(true);
    return make_cancel(o.instrument, o.client, o.id);
  }

  // A modify that loses priority in our engine: a new price, or a larger total.
  Request modify_of() {
    const Issued o = pick(false);
    const InstrumentConfig& oc = config_.instruments[o.instrument];
    const auto found = last_.find(bench::order_key(o.client, o.id));
    const Price old_price = found == last_.end() ? mids_[o.instrument] : found->second.first;
    const Qty old_total = found == last_.end() ? 1 : found->second.second;
    if (below(2) == 0 && old_total < oc.max_order_qty) {
      const Qty total = std::min(oc.max_order_qty, old_total + 1 + static_cast<Qty>(below(40)));
      return make_modify(o.instrument, o.client, o.id, old_price, total);
    }
    Price p = old_price + (static_cast<Price>(below(9)) - 4) * oc.tick_size;
    if (p == old_price) p += oc.tick_size;
    p = std::clamp(p, oc.min_price, oc.max_price);
    if (p == old_price) p -= oc.tick_size;
    // New total: sometimes at or below what may be filled (the order is then cancelled).
    const Qty total = 1 + static_cast<Qty>(below(80));
    return make_modify(o.instrument, o.client, o.id, p, total);
  }

  const EngineConfig& config_;
  std::uint64_t state_;
  std::vector<Price> mids_;
  std::vector<Issued> issued_;
  std::vector<Issued> resting_;
  std::unordered_map<std::uint64_t, std::pair<Price, Qty>> last_;
  ClientOrderId next_id_ = 0;
};

std::uint64_t messages_per_seed() { return test::stress_items(150'000, 20'000); }
constexpr std::uint64_t kSeeds[] = {1, 2, 3, 0xfeedface};
constexpr std::uint64_t kBookCheckEvery = 997;

// Runs one stream through `subject` and Liquibook; compares fills as they
// happen and both books every kBookCheckEvery messages and at the end.
template <typename Subject, typename SubjectFills, typename Compare>
void run_against_liquibook(std::uint64_t seed, Subject& subject, SubjectFills& subject_fills, Compare&& compare_books,
                           const EngineConfig& config) {
  CollectingFillSink oracle_fills;
  LiquibookAdapter<CollectingFillSink> oracle(config, oracle_fills, 1u << 17);
  StreamGen gen(config, seed);
  const std::uint64_t n = messages_per_seed();
  std::size_t checked = 0;
  std::uint64_t outcomes[5] = {};  // by PeerResult
  std::uint64_t modifies_applied = 0;
  std::size_t peak_live = 0;
  for (std::uint64_t m = 0; m < n; ++m) {
    const Request r = gen.next(oracle.live_orders());
    const PeerResult result = oracle.process(r);
    ++outcomes[static_cast<int>(result)];
    if (r.type == RequestType::kModify && result != PeerResult::kUnknownOrder) ++modifies_applied;
    peak_live = std::max(peak_live, oracle.live_orders());
    if (result == PeerResult::kRested || result == PeerResult::kDone) gen.note(r, result == PeerResult::kRested);
    subject.process(r);
    auto& got = subject_fills.fills;
    ASSERT_EQ(got.size(), oracle_fills.fills.size()) << "seed " << seed << " message " << m;
    for (; checked < got.size(); ++checked) {
      const PeerFill& a = got[checked];
      const PeerFill& b = oracle_fills.fills[checked];
      ASSERT_EQ(a, b) << "seed " << seed << " message " << m << " fill " << checked << ": ours (inst " << a.instrument
                      << " maker " << a.maker_key << " taker " << a.taker_key << " px " << a.price << " qty " << a.qty
                      << ") vs Liquibook (maker " << b.maker_key << " taker " << b.taker_key << " px " << b.price
                      << " qty " << b.qty << ")";
    }
    if (m % kBookCheckEvery == 0 || m + 1 == n) {
      for (InstrumentId i = 0; i < config.instruments.size(); ++i) {
        for (const Side s : {Side::kBuy, Side::kSell}) {
          ASSERT_EQ(compare_books(i, s), side_of(oracle, i, s))
              << "seed " << seed << " message " << m << " instrument " << i << " side " << static_cast<int>(s);
        }
      }
    }
  }
  // The stream must reach every case, or the comparison proves little.
  EXPECT_GT(oracle_fills.fills.size(), n / 10) << "the stream should trade a lot";
  EXPECT_GT(outcomes[static_cast<int>(PeerResult::kDone)], n / 20) << "filled / IOC orders";
  EXPECT_GT(outcomes[static_cast<int>(PeerResult::kRested)], n / 10) << "resting orders";
  EXPECT_GT(outcomes[static_cast<int>(PeerResult::kCancelled)], n / 20) << "cancels of live orders";
  EXPECT_GT(outcomes[static_cast<int>(PeerResult::kUnknownOrder)], n / 50) << "late cancels";
  EXPECT_GT(outcomes[static_cast<int>(PeerResult::kRejected)], 0u) << "duplicate live ids";
  EXPECT_GT(modifies_applied, n / 30) << "modifies of live orders";
  EXPECT_GT(peak_live, 200u) << "books deep enough to have several orders per level";
  if (std::getenv("NANOTICK_DIFF_VERBOSE") != nullptr) {
    std::printf(
        "seed %llu: %llu msgs, %zu fills, done %llu rested %llu cancelled %llu unknown %llu "
        "rejected %llu, modifies applied %llu, peak live %zu\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(n), oracle_fills.fills.size(),
        static_cast<unsigned long long>(outcomes[0]), static_cast<unsigned long long>(outcomes[1]),
        static_cast<unsigned long long>(outcomes[2]), static_cast<unsigned long long>(outcomes[4]),
        static_cast<unsigned long long>(outcomes[3]), static_cast<unsigned long long>(modifies_applied), peak_live);
  }
}

TEST(LiquibookDifferential, ShouldProduceTheSameFillsAndBooksAsLiquibook) {
  const EngineConfig config = diff_config();
  for (const std::uint64_t seed : kSeeds) {
    EngineFillSink fills;
    MatchingEngine<EngineFillSink> engine(config, fills);
    run_against_liquibook(
        seed, engine, fills, [&](InstrumentId i, Side s) { return side_of(engine, i, s); }, config);
    EXPECT_EQ(fills.pairing_errors, 0) << "every taker fill must be followed by its maker fill";
    engine.validate_invariants();
    if (HasFatalFailure()) return;
  }
}

TEST(LiquibookDifferential, ShouldAgreeWithTheStdMapPeerBook) {
  const EngineConfig config = diff_config();
  for (const std::uint64_t seed : kSeeds) {
    CollectingFillSink fills;
    bench::MapPeerBook<CollectingFillSink> book(config, fills);
    run_against_liquibook(
        seed, book, fills, [&](InstrumentId i, Side s) { return side_of(book, i, s); }, config);
    if (HasFatalFailure()) return;
  }
}

TEST(LiquibookDifferential, ShouldAgreeWithTheUnorderedMapPeerBook) {
  const EngineConfig config = diff_config();
  for (const std::uint64_t seed : kSeeds) {
    CollectingFillSink fills;
    bench::UnorderedPeerBook<CollectingFillSink> book(config, fills);
    run_against_liquibook(
        seed, book, fills, [&](InstrumentId i, Side s) { return side_of(book, i, s); }, config);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace nanotick::engine
