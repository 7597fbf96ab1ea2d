// The reference model of the venue's controls (docs/CONTROLS.md), written
// for clarity against the reference engine, to check src/controls against:
// it keeps only what a ledger keeps -- cash and positions, changed by fills
// -- and works out everything else when it needs it: what a client's
// working orders hold is summed over the book (for_each_order) at each
// check, never tracked. The same checks in the same order as the spec.
// Not thread-safe; tests only (allocates freely).
#pragma once

#include <map>
#include <utility>

#include "controls/account_limits.hpp"
#include "reference/reference_engine.hpp"

namespace nanotick::reference {

template <typename Sink>
class ReferenceControlledEngine {
  using Money = controls::Money;
  using RejectReason = engine::RejectReason;
  using Side = engine::Side;

  struct Ledger {
    controls::ClientLimits limits;
    Money cash = 0;
    std::map<engine::InstrumentId, engine::Qty> positions;
  };
  struct Settle {
    ReferenceControlledEngine* owner;
    Sink* inner;
    void on_report(const engine::ExecReport& r) {
      owner->settle(r);
      inner->on_report(r);
    }
    void on_market_data(const engine::MdEvent& m) { inner->on_market_data(m); }
  };

 public:
  // What a client's working orders hold, summed over the books.
  struct Held {
    Money cash = 0;
    std::map<engine::InstrumentId, engine::Qty> sells;
    std::uint32_t orders = 0;
  };

  ReferenceControlledEngine(const engine::EngineConfig& config, const controls::ControlsConfig& controls, Sink& sink)
      : config_(config), required_(controls.accounts_required), settle_{this, &sink}, engine_(config, settle_) {
    for (const auto& c : controls.clients) {
      Ledger l;
      l.limits = c;
      l.cash = c.cash;
      for (const auto& p : c.positions) l.positions[p.instrument] = p.qty;
      ledgers_[c.client] = l;
    }
  }

  void process(const engine::Request& rq) {
    const RejectReason why = check(rq);
    if (why != RejectReason::kNone) {
      engine_.refuse(rq, why);
      return;
    }
    engine_.process(rq);
  }

  const ReferenceEngine<Settle>& engine() const { return engine_; }
  bool has_account(engine::ClientId c) const { return ledgers_.count(c) != 0; }
  Money cash(engine::ClientId c) const { return ledgers_.at(c).cash; }
  engine::Qty position(engine::ClientId c, engine::InstrumentId i) const {
    const auto& p = ledgers_.at(c).positions;
    const auto it = p.find(i);
    return it == p.end() ? 0 : it->second;
  }

  Held held(engine::ClientId client) const {
    Held h;
    for (engine::InstrumentId i = 0; i < config_.instruments.size(); ++i) {
      for (const Side side : {Side::kBuy, Side::kSell}) {
        engine_.for_each_order(i, side, [&](const engine::OrderView& o) {
          if (o.client != client) return;
          ++h.orders;
          h.cash += cash_per_unit(i, side, engine::OrderType::kLimit, o.price) * o.open_qty;
          if (side == Side::kSell) h.sells[i] += o.open_qty;
        });
      }
    }
    return h;
  }

 private:
  Money cash_per_unit(engine::InstrumentId i, Side side, engine::OrderType type, engine::Price price) const {
    if (type == engine::OrderType::kMarket)
      price = side == Side::kBuy ? config_.instruments[i].max_price : config_.instruments[i].min_price;
    const Money p = side == Side::kBuy ? Money{price} : -Money{price};
    return p > 0 ? p : 0;
  }

  RejectReason check(const engine::Request& rq) const {
    using engine::RequestType;
    if (rq.type != RequestType::kNew && rq.type != RequestType::kModify) return RejectReason::kNone;
    const auto it = ledgers_.find(rq.client);
    if (it == ledgers_.end())
      return required_ && rq.client <= engine::kMaxClientId ? RejectReason::kNoAccount : RejectReason::kNone;
    if (rq.instrument >= config_.instruments.size() || rq.qty <= 0) return RejectReason::kNone;
    const controls::ClientLimits& lim = it->second.limits;

    Side side = rq.side;
    engine::OrderType type = rq.order_type;
    engine::Qty open_after = rq.qty;
    Money order_held = 0;
    engine::Qty order_sell_held = 0;
    if (rq.type == RequestType::kNew) {
      if (side != Side::kBuy && side != Side::kSell) return RejectReason::kNone;
      if (type != engine::OrderType::kLimit && type != engine::OrderType::kMarket && type != engine::OrderType::kIoc &&
          type != engine::OrderType::kFok)
        return RejectReason::kNone;
      bool permitted = lim.instruments.empty();
      for (const auto i : lim.instruments) permitted = permitted || i == rq.instrument;
      if (!permitted) return RejectReason::kInstrumentNotPermitted;
    } else {
      std::optional<engine::OrderView> found;
      for (const Side s : {Side::kBuy, Side::kSell})
        engine_.for_each_order(rq.instrument, s, [&](const engine::OrderView& o) {
          if (o.client == rq.client && o.client_order_id == rq.client_order_id) found = o;
        });
      if (!found) return RejectReason::kNone;
      side = found->side;
      type = engine::OrderType::kLimit;
      open_after = rq.qty - found->cum_qty;
      if (open_after <= 0) return RejectReason::kNone;
      order_held = cash_per_unit(rq.instrument, side, type, found->price) * found->open_qty;
      order_sell_held = side == Side::kSell ? found->open_qty : 0;
    }
    if (lim.max_order_qty > 0 && rq.qty > lim.max_order_qty) return RejectReason::kClientQuantityLimit;
    engine::Price at = rq.price;
    if (type == engine::OrderType::kMarket)
      at = side == Side::kBuy ? config_.instruments[rq.instrument].max_price
                              : config_.instruments[rq.instrument].min_price;
    if (lim.max_notional > 0 && (at < 0 ? -Money{at} : Money{at}) * rq.qty > lim.max_notional)
      return RejectReason::kClientNotionalLimit;
    if (lim.collar > 0 && type != engine::OrderType::kMarket) {
      if (const auto last = engine_.last_trade(rq.instrument)) {
        const Money d = Money{rq.price} - Money{*last};
        if ((d < 0 ? -d : d) > lim.collar) return RejectReason::kClientCollar;
      }
    }
    const Held h = held(rq.client);
    if (rq.type == RequestType::kNew && lim.max_open_orders > 0 && h.orders >= lim.max_open_orders)
      return RejectReason::kTooManyOpenOrders;
    const Money need = cash_per_unit(rq.instrument, side, type, rq.price) * open_after - order_held;
    if (need > 0 && it->second.cash - h.cash < need) return RejectReason::kInsufficientCash;
    if (side == Side::kSell) {
      const auto s = h.sells.find(rq.instrument);
      const engine::Qty sells = s == h.sells.end() ? 0 : s->second;
      const engine::Qty need_qty = open_after - order_sell_held;
      if (need_qty > 0 && position(rq.client, rq.instrument) - sells + lim.short_limit < need_qty)
        return RejectReason::kInsufficientPosition;
    }
    return RejectReason::kNone;
  }

  void settle(const engine::ExecReport& r) {
    if (r.type != engine::ReportType::kFill) return;
    const auto it = ledgers_.find(r.client);
    if (it == ledgers_.end()) return;
    const Money value = Money{r.last_price} * r.last_qty;
    if (r.side == Side::kBuy) {
      it->second.cash -= value;
      it->second.positions[r.instrument] += r.last_qty;
    } else {
      it->second.cash += value;
      it->second.positions[r.instrument] -= r.last_qty;
    }
  }

  engine::EngineConfig config_;
  bool required_;
  std::map<engine::ClientId, Ledger> ledgers_;
  Settle settle_;
  ReferenceEngine<Settle> engine_;
};

}  // namespace nanotick::reference
