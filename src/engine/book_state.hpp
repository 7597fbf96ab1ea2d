// Engine-independent views of a book's state, through the public engine API
// (instrument_count, best, for_each_order, live_orders, last_trade, sequence
// counters), so the fast engine and the reference model can be compared and
// fingerprinted the same way: differential tests, replay, recovery checks.
// Stateless function templates; thread-safety: as the engine's const API
// (call them on the engine's thread).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/types.hpp"

namespace nanotick::engine {

// One resting order as seen through for_each_order, in priority order.
struct RestingOrder {
  OrderId order_id;
  ClientId client;
  ClientOrderId client_order_id;
  Price price;
  Qty order_qty;
  Qty cum_qty;
  Qty open_qty;
  StpMode stp;
  bool operator==(const RestingOrder&) const = default;
};

template <typename Engine>
std::vector<RestingOrder> resting_orders(const Engine& engine, InstrumentId inst, Side side) {
  std::vector<RestingOrder> out;
  engine.for_each_order(inst, side, [&out](const auto& o) {
    out.push_back(
        RestingOrder{o.order_id, o.client, o.client_order_id, o.price, o.order_qty, o.cum_qty, o.open_qty, o.stp});
  });
  return out;
}

// FNV-1a over every instrument's last trade, both sides' resting orders in
// priority order, and the engine's sequence counters. Equal states give equal
// hashes whatever the engine's internal layout.
template <typename Engine>
std::uint64_t state_hash(const Engine& engine) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  };
  mix(engine.requests_processed());
  mix(engine.last_report_seq());
  mix(engine.last_md_seq());
  for (InstrumentId inst = 0; inst < engine.instrument_count(); ++inst) {
    const std::optional<Price> last = engine.last_trade(inst);
    mix(last.has_value());
    mix(static_cast<std::uint64_t>(last.value_or(0)));
    for (Side side : {Side::kBuy, Side::kSell}) {
      mix(static_cast<std::uint64_t>(side));
      for (const RestingOrder& o : resting_orders(engine, inst, side)) {
        for (std::uint64_t v :
             {o.order_id, std::uint64_t{o.client}, o.client_order_id, static_cast<std::uint64_t>(o.price),
              static_cast<std::uint64_t>(o.order_qty), static_cast<std::uint64_t>(o.cum_qty),
              static_cast<std::uint64_t>(o.open_qty), static_cast<std::uint64_t>(o.stp)})
          mix(v);
      }
    }
  }
  return h;
}

// Empty when both engines show the same state through the API; otherwise a
// description of the first difference found.
template <typename EngineA, typename EngineB>
std::string compare_books(const EngineA& a, const EngineB& b) {
  if (a.instrument_count() != b.instrument_count()) return "instrument counts differ";
  if (a.requests_processed() != b.requests_processed()) return "requests_processed differs";
  if (a.last_report_seq() != b.last_report_seq()) return "last_report_seq differs";
  if (a.last_md_seq() != b.last_md_seq()) return "last_md_seq differs";
  for (InstrumentId inst = 0; inst < a.instrument_count(); ++inst) {
    const std::string where = "instrument " + std::to_string(inst) + ": ";
    if (a.last_trade(inst) != b.last_trade(inst)) return where + "last trade differs";
    if (a.live_orders(inst) != b.live_orders(inst)) return where + "live order counts differ";
    for (Side side : {Side::kBuy, Side::kSell}) {
      const char* name = side == Side::kBuy ? "bid" : "ask";
      const auto ba = a.best(inst, side);
      const auto bb = b.best(inst, side);
      if (ba.has_value() != bb.has_value() ||
          (ba && (ba->price != bb->price || ba->qty != bb->qty || ba->orders != bb->orders)))
        return where + "best " + name + " differs";
      const auto oa = resting_orders(a, inst, side);
      const auto ob = resting_orders(b, inst, side);
      if (oa.size() != ob.size()) return where + name + " order counts differ";
      for (std::size_t i = 0; i < oa.size(); ++i)
        if (!(oa[i] == ob[i]))
          return where + name + " order #" + std::to_string(i) + " differs (order ids " +
                 std::to_string(oa[i].order_id) + " vs " + std::to_string(ob[i].order_id) + ")";
    }
  }
  return {};
}

}  // namespace nanotick::engine
