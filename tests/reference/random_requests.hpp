// A seeded generator of random request streams for the differential and
// model tests, and the engine configurations they run on. Every request kind,
// order type and STP mode; prices clustered around a per-instrument random-walk
// mid so books cross often; a few percent of invalid fields; duplicate client
// order ids; cancels/modifies of live, finished and never-seen ids. The stream
// is a pure function of (config, seed, clients): it never looks at the engine.
// Not thread-safe: one generator per thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/request.hpp"
#include "engine/types.hpp"

namespace nanotick::reference {

class RandomRequests {
 public:
  // `clients`: how many distinct clients send orders (few clients = many
  // self-trade cases). Client ids are 0..clients-1, plus kMaxClientId rarely.
  // `new_percent`: the share of new orders; the rest are cancels and modifies
  // (more new orders = deeper books).
  RandomRequests(const engine::EngineConfig& config, std::uint64_t seed, std::uint32_t clients,
                 std::uint32_t new_percent = 56)
      : state_(seed), clients_(clients == 0 ? 1 : clients), new_percent_(std::min(new_percent, 100u)) {
    for (const auto& in : config.instruments) {
      Instrument s;
      s.tick = in.tick_size;
      s.min_ticks = in.min_price / in.tick_size;
      s.max_ticks = in.max_price / in.tick_size;
      s.mid = s.min_ticks + (s.max_ticks - s.min_ticks) / 2;
      s.anchor = s.mid;
      // Capped at a quarter of the band (a wider collar changes nothing in
      // the generated prices), so offsets built from it cannot overflow.
      s.collar_ticks = std::min(in.collar / in.tick_size, (s.max_ticks - s.min_ticks) / 4);
      s.max_qty = in.max_order_qty;
      instruments_.push_back(s);
    }
    client_state_.resize(clients_ + 1);  // the last one is kMaxClientId
  }

  engine::Request next() {
    using engine::RequestType;
    const auto instrument = static_cast<engine::InstrumentId>(below(instruments_.size()));
    walk(instruments_[instrument]);
    const std::uint32_t slot = pick_client_slot();
    engine::Request r{};
    const std::uint64_t kind = below(100);
    if (kind < new_percent_) {
      r = new_order(instrument, slot);
    } else if (kind < new_percent_ + (100 - new_percent_) * 4 / 7) {
      r = cancel(instrument, slot);
    } else {
      r = modify(instrument, slot);
    }
    if (below(4000) == 0)  // the venue's own request (a session's end), rarely
      r = engine::make_mass_cancel(chance(500) ? engine::kAllInstruments : instrument, client_id(slot));
    r.event_id = bits();
    if (chance(30)) corrupt(r);  // 3%
    return r;
  }

 private:
  struct Instrument {
    engine::Price tick = 1;
    engine::Price min_ticks = 0;
    engine::Price max_ticks = 0;
    engine::Price mid = 0;  // in ticks
    engine::Price anchor = 0;  // with a collar, the mid stays within half a collar of it
    engine::Price collar_ticks = 0;
    engine::Qty max_qty = 1;
  };
  struct Sent {  // an order this generator sent: a target for cancels/modifies
    engine::ClientOrderId id;
    engine::InstrumentId instrument;
    engine::Price price;
    engine::Qty qty;
  };
  struct Client {
    engine::ClientOrderId next_id = 1;
    std::vector<Sent> recent;  // ring of the last kRecent orders sent
    std::size_t cursor = 0;
  };
  static constexpr std::size_t kRecent = 48;

  // splitmix64: small, fast, and the same on every platform.
  std::uint64_t bits() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : bits() % n; }
  bool chance(std::uint64_t per_mille) { return below(1000) < per_mille; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // inclusive
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }

  void walk(Instrument& in) {
    const std::uint64_t step = below(1000);
    if (step < 90) {
      in.mid += 1;
    } else if (step < 180) {
      in.mid -= 1;
    } else if (step < 182) {  // a jump across many levels (inside the collar, if any)
      const engine::Price jump = in.collar_ticks > 0 ? std::max<engine::Price>(in.collar_ticks / 2, 1) : 25;
      in.mid += chance(500) ? jump : -jump;
    }
    if (in.collar_ticks > 0) {
      // Limit prices beyond the collar are rejected, so nothing would trade to
      // move the last trade after the mid: keep the mid near where trades are.
      const engine::Price reach = std::max<engine::Price>(in.collar_ticks / 2, 1);
      in.mid = std::clamp(in.mid, in.anchor - reach, in.anchor + reach);
    }
    in.mid = std::clamp(in.mid, in.min_ticks, in.max_ticks);
  }

  std::uint32_t pick_client_slot() {
    if (chance(5)) return clients_;  // kMaxClientId: the boundary is valid
    return static_cast<std::uint32_t>(below(clients_));
  }
  engine::ClientId client_id(std::uint32_t slot) const { return slot == clients_ ? engine::kMaxClientId : slot; }

  // A price near the mid: mostly within a few ticks either way, so buys and
  // sells overlap; sometimes deeper.
  engine::Price price_near(const Instrument& in) {
    const std::int64_t span = chance(850) ? 5 : 40;
    const engine::Price ticks = std::clamp(in.mid + between(-span, span), in.min_ticks, in.max_ticks);
    return ticks * in.tick;
  }

  engine::Qty quantity(const Instrument& in) {
    const std::uint64_t roll = below(1000);
    engine::Qty q = roll < 700 ? between(1, 10) : roll < 980 ? between(1, 100) : in.max_qty;
    return std::min(q, in.max_qty);
  }

  engine::Request new_order(engine::InstrumentId instrument, std::uint32_t slot) {
    const Instrument& in = instruments_[instrument];
    Client& c = client_state_[slot];
    const std::uint64_t t = below(100);
    const auto type = t < 62   ? engine::OrderType::kLimit
                      : t < 78 ? engine::OrderType::kIoc
                      : t < 90 ? engine::OrderType::kFok
                               : engine::OrderType::kMarket;
    const std::uint64_t s = below(100);
    const auto stp = s < 55   ? engine::StpMode::kNone
                     : s < 70 ? engine::StpMode::kCancelResting
                     : s < 85 ? engine::StpMode::kCancelIncoming
                              : engine::StpMode::kCancelBoth;
    engine::ClientOrderId id = c.next_id++;
    if (chance(40) && !c.recent.empty()) id = c.recent[below(c.recent.size())].id;  // duplicate/reuse
    if (chance(3)) id = engine::kMaxClientOrderId;                                   // valid boundary
    engine::Price price = price_near(in);
    if (type == engine::OrderType::kMarket && chance(300)) price = static_cast<engine::Price>(bits());
    const engine::Qty qty = quantity(in);
    const auto side = chance(500) ? engine::Side::kBuy : engine::Side::kSell;
    remember(c, Sent{id, instrument, price, qty});
    return engine::make_new(instrument, client_id(slot), id, side, type, price, qty, stp);
  }

  void remember(Client& c, const Sent& sent) {
    if (c.recent.size() < kRecent) {
      c.recent.push_back(sent);
    } else {
      c.recent[c.cursor] = sent;
      c.cursor = (c.cursor + 1) % kRecent;
    }
  }

  // A target for a cancel/modify: mostly a recent order of the client (live
  // or finished), sometimes an old one, a never-used id, or the right id on
  // the wrong instrument.
  Sent target(engine::InstrumentId instrument, std::uint32_t slot) {
    Client& c = client_state_[slot];
    const std::uint64_t roll = below(100);
    if (roll < 80 && !c.recent.empty()) {
      // Half the time one of the client's 6 newest orders (most likely live).
      const std::size_t back = chance(500) ? below(std::min<std::size_t>(6, c.recent.size())) : below(c.recent.size());
      const std::size_t newest = c.recent.size() < kRecent ? c.recent.size() - 1 : (c.cursor + kRecent - 1) % kRecent;
      Sent s = c.recent[(newest + kRecent - back) % kRecent % c.recent.size()];
      if (chance(50)) s.instrument = static_cast<engine::InstrumentId>(below(instruments_.size()));
      return s;
    }
    const Instrument& in = instruments_[instrument];
    if (roll < 90 && c.next_id > 1) return Sent{1 + below(c.next_id - 1), instrument, price_near(in), quantity(in)};
    return Sent{c.next_id + below(1000), instrument, price_near(in), quantity(in)};  // never used
  }

  engine::Request cancel(engine::InstrumentId instrument, std::uint32_t slot) {
    const Sent s = target(instrument, slot);
    return engine::make_cancel(s.instrument, client_id(slot), s.id);
  }

  engine::Request modify(engine::InstrumentId instrument, std::uint32_t slot) {
    const Sent s = target(instrument, slot);
    const Instrument& in = instruments_[s.instrument];
    const std::uint64_t roll = below(100);
    engine::Price price = s.price;
    engine::Qty qty = s.qty;
    if (roll < 30) {  // same price, smaller total (keeps priority, or cancels when below filled)
      qty = std::max<engine::Qty>(1, s.qty - between(1, 5));
    } else if (roll < 45) {  // same price, larger total
      qty = std::min(in.max_qty, s.qty + between(1, 20));
    } else if (roll < 50) {  // no change (if the order is still as sent)
    } else {                 // new price near the mid, may cross
      price = price_near(in);
      qty = quantity(in);
    }
    return engine::make_modify(s.instrument, client_id(slot), s.id, price, qty);
  }

  // One invalid field (or an odd but valid one), drawn from every validation
  // step of docs/MATCHING.md.
  void corrupt(engine::Request& r) {
    const Instrument& in = instruments_[r.instrument < instruments_.size() ? r.instrument : 0];
    constexpr auto kMinI64 = std::numeric_limits<std::int64_t>::min();
    constexpr auto kMaxI64 = std::numeric_limits<std::int64_t>::max();
    switch (below(16)) {
      // No type any layer takes: 5-10 are the admin requests, which the venue's
      // controls answer (the bare engine's refusal of them: engine_scenarios).
      case 0: r.type = static_cast<engine::RequestType>(chance(500) ? 0 : 11 + below(245)); break;
      case 1: r.side = static_cast<engine::Side>(chance(500) ? 0 : 3 + below(253)); break;
      case 2: r.order_type = static_cast<engine::OrderType>(chance(500) ? 0 : 5 + below(251)); break;
      case 3: r.stp = static_cast<engine::StpMode>(4 + below(252)); break;
      case 4: r.reserved = 1 + static_cast<std::uint32_t>(below(1000)); break;
      case 5:
        r.instrument = chance(500) ? static_cast<engine::InstrumentId>(instruments_.size())
                                   : std::numeric_limits<engine::InstrumentId>::max();
        break;
      case 6: r.client = engine::kMaxClientId + 1 + static_cast<engine::ClientId>(below(1000)); break;
      case 7: r.client_order_id = engine::kMaxClientOrderId + 1 + below(1000); break;
      case 8: r.qty = chance(500) ? 0 : -between(1, 1000); break;
      case 9: r.qty = chance(500) ? in.max_qty + 1 : kMaxI64; break;
      case 10: r.qty = kMinI64; break;
      case 11:
        if (in.tick > 1) r.price += between(1, in.tick - 1);
        break;
      case 12: r.price = chance(500) ? (in.min_ticks - 1) * in.tick : (in.max_ticks + 1) * in.tick; break;
      case 13: r.price = chance(500) ? kMinI64 : kMaxI64; break;
      case 14: {  // beyond the collar around the mid (the last trade is near it)
        const engine::Price far = std::max<engine::Price>(in.collar_ticks * 3, 50);
        r.price = std::clamp(in.mid + (chance(500) ? far : -far), in.min_ticks, in.max_ticks) * in.tick;
        break;
      }
      default: r.type = engine::RequestType::kModify; break;  // a new order's fields as a modify
    }
  }

  std::uint64_t state_;
  std::uint32_t clients_;
  std::uint32_t new_percent_;
  std::vector<Instrument> instruments_;
  std::vector<Client> client_state_;
};

// The engine configurations the random streams run on: small capacities so
// kOrderCapacity/kLevelCapacity happen, collars, negative prices, few clients.
struct DifferentialShape {
  std::string name;
  engine::EngineConfig config;
  std::uint32_t clients;
  std::uint32_t new_percent;  // share of new orders in the stream
};

inline engine::InstrumentConfig instrument(std::string symbol, engine::Price tick, engine::Price min, engine::Price max,
                                           engine::Price collar, engine::Qty max_qty, std::uint32_t max_orders,
                                           std::uint32_t max_levels) {
  engine::InstrumentConfig c;
  c.symbol = std::move(symbol);
  c.tick_size = tick;
  c.min_price = min;
  c.max_price = max;
  c.collar = collar;
  c.max_order_qty = max_qty;
  c.max_orders = max_orders;
  c.max_levels = max_levels;
  return c;
}

inline std::vector<DifferentialShape> differential_shapes() {
  std::vector<DifferentialShape> shapes;
  shapes.push_back(
      {"tight",
       {{instrument("TINY", 1, 1, 200, 0, 50, 12, 4), instrument("COLLAR", 5, 5, 100'000, 40, 1'000, 64, 16),
         instrument("NEG", 25, -5'000, 5'000, 0, 100, 40, 10)}},
       5,
       56});
  shapes.push_back({"roomy",
                    {{instrument("WIDE", 1, 1, 1'000'000, 0, 1'000'000, 4'096, 256),
                      instrument("BIGTICK", 10, 10, 10'000'000, 500, 5'000, 2'048, 128)}},
                    8,
                    72});
  shapes.push_back({"one", {{instrument("SOLO", 2, -100, 100, 30, 10, 6, 3)}}, 2, 56});
  // Room for one order / one level; an all-negative band; the widest band and
  // quantity config validation allows, with the widest collar it allows (2^62).
  constexpr engine::Price kWidest = engine::Price{1} << 61;
  shapes.push_back({"edge",
                    {{instrument("ONE", 1, 1, 20, 3, 3, 1, 1), instrument("NEGONLY", 3, -30, -3, 0, 1, 3, 2),
                      instrument("HUGE", 1, -kWidest, kWidest, engine::Price{1} << 62, engine::Qty{1} << 40, 64, 16)}},
                    3,
                    60});
  return shapes;
}

}  // namespace nanotick::reference
