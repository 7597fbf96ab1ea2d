#include "workload/emitter.hpp"

#include <algorithm>
#include <bit>

namespace nanotick::workload {

using engine::OrderType;
using engine::Price;
using engine::Qty;
using engine::Side;

namespace {
// Ids for cancels of never-used orders: far above any id a generator hands out.
constexpr engine::ClientOrderId kUnknownIdBase = engine::ClientOrderId{1} << 47;
}  // namespace

Emitter::Emitter(Workload& workload, GenStats& stats, std::uint64_t seed, std::uint32_t clients)
    : workload_(workload),
      stats_(stats),
      rng_(seed),
      model_(workload.config.instruments.size(), stats),
      next_id_(clients, 1) {}

Price Emitter::price_at(engine::InstrumentId instrument, std::int64_t tick) const noexcept {
  const auto& in = workload_.config.instruments[instrument];
  return std::clamp(tick * in.tick_size, in.min_price, in.max_price);
}

std::int64_t Emitter::tick_of(engine::InstrumentId instrument, Price price) const noexcept {
  return price / workload_.config.instruments[instrument].tick_size;
}

std::optional<std::int64_t> Emitter::best_tick(engine::InstrumentId instrument, Side side) const {
  const auto best = model_.best(instrument, side);
  if (!best) return std::nullopt;
  return tick_of(instrument, *best);
}

void Emitter::sample_book() {
  for (engine::InstrumentId i = 0; i < workload_.config.instruments.size(); ++i) {
    live_sum_ += static_cast<double>(model_.live_count(i));
    level_sum_ += static_cast<double>(model_.level_count(i, Side::kBuy) + model_.level_count(i, Side::kSell));
  }
  ++samples_;
}

void Emitter::push(engine::Request request) {
  // The model holds the book as the previous request left it.
  if (!workload_.requests.empty()) sample_book();
  request.event_id = workload_.requests.size() + 1;
  workload_.requests.push_back(request);
}

Emitter::Key Emitter::new_order(engine::InstrumentId instrument, Side side, OrderType type, std::int64_t tick,
                                Qty qty) {
  const auto client = static_cast<engine::ClientId>(rng_.below(next_id_.size()));
  const engine::ClientOrderId id = next_id_[client]++;
  const Price price = type == OrderType::kMarket ? 0 : price_at(instrument, tick);
  const auto request = engine::make_new(instrument, client + 1, id, side, type, price, qty);
  push(request);
  ++stats_.new_orders;
  switch (type) {
    case OrderType::kLimit: ++stats_.limit_orders; break;
    case OrderType::kIoc: ++stats_.ioc_orders; break;
    case OrderType::kMarket: ++stats_.market_orders; break;
    case OrderType::kFok: break;
  }
  model_.apply_new(request);
  return BookModel::key_of(request.client, request.client_order_id);
}

void Emitter::cancel(Key key) {
  const auto& o = model_.order(key);
  push(engine::make_cancel(o.instrument, o.client, o.client_order_id));
  ++stats_.cancels;
  model_.apply_cancel(key);
}

void Emitter::modify(Key key, std::int64_t tick, Qty total_qty) {
  const auto& o = model_.order(key);
  const Price price = price_at(o.instrument, tick);
  push(engine::make_modify(o.instrument, o.client, o.client_order_id, price, total_qty));
  ++stats_.modifies;
  model_.apply_modify(key, price, total_qty);
}

bool Emitter::late_cancel(engine::InstrumentId instrument) {
  const auto key = model_.recent_finished(instrument, rng_);
  if (!key || model_.is_live(*key)) return false;
  const auto client = static_cast<engine::ClientId>(*key >> 48);
  const engine::ClientOrderId id = *key & engine::kMaxClientOrderId;
  push(engine::make_cancel(instrument, client, id));
  ++stats_.cancels;
  ++stats_.late_cancels;
  return true;
}

void Emitter::cancel_gone(engine::InstrumentId instrument, Key key) {
  const auto client = static_cast<engine::ClientId>(key >> 48);
  push(engine::make_cancel(instrument, client, key & engine::kMaxClientOrderId));
  ++stats_.cancels;
  ++stats_.late_cancels;
}

void Emitter::modify_gone(engine::InstrumentId instrument, Key key, std::int64_t tick, Qty total_qty) {
  const auto client = static_cast<engine::ClientId>(key >> 48);
  push(engine::make_modify(instrument, client, key & engine::kMaxClientOrderId, price_at(instrument, tick), total_qty));
  ++stats_.modifies;
  ++stats_.late_modifies;
}

void Emitter::unknown_cancel(engine::InstrumentId instrument) {
  const auto client = static_cast<engine::ClientId>(rng_.below(next_id_.size()) + 1);
  push(engine::make_cancel(instrument, client, kUnknownIdBase + unknown_ids_++));
  ++stats_.cancels;
  ++stats_.unknown_cancels;
}

bool Emitter::duplicate_new(engine::InstrumentId instrument, Side side, std::int64_t tick, Qty qty) {
  if (model_.live_count(instrument) == 0) return false;
  const auto& o = model_.order(model_.random_live(instrument, rng_));
  push(engine::make_new(instrument, o.client, o.client_order_id, side, OrderType::kLimit, price_at(instrument, tick),
                        qty));
  ++stats_.new_orders;
  ++stats_.limit_orders;
  ++stats_.duplicate_news;
  return true;
}

void Emitter::cancel_all() {
  for (engine::InstrumentId i = 0; i < workload_.config.instruments.size(); ++i) {
    while (model_.live_count(i) > 0) cancel(model_.random_live(i, rng_));
  }
}

void Emitter::finish() {
  if (!workload_.requests.empty()) {
    sample_book();  // after the last request
    stats_.avg_live_orders = live_sum_ / static_cast<double>(samples_);
    stats_.avg_levels = level_sum_ / static_cast<double>(samples_);
  }
  for (engine::InstrumentId i = 0; i < workload_.config.instruments.size(); ++i) {
    auto& in = workload_.config.instruments[i];
    in.max_orders =
        static_cast<std::uint32_t>(std::bit_ceil(std::clamp<std::uint64_t>(2 * model_.peak_live(i), 1024, 1u << 26)));
    in.max_levels =
        static_cast<std::uint32_t>(std::bit_ceil(std::clamp<std::uint64_t>(2 * model_.peak_levels(i), 256, 1u << 24)));
  }
}

}  // namespace nanotick::workload
