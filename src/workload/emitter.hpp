// Shared machinery of the generators: appends requests to a workload (fresh
// client order ids, event ids = position), keeps the book model in step, and
// sizes the instrument capacities from the model's peaks at the end.
// Not thread-safe: one per generate() call.
#pragma once

#include <cstdint>

#include "workload/book_model.hpp"
#include "workload/generators.hpp"
#include "workload/rng.hpp"
#include "workload/workload.hpp"

namespace nanotick::workload {

class Emitter {
 public:
  using Key = BookModel::Key;

  // `workload.config.instruments` must be filled in (capacities are set by finish()).
  Emitter(Workload& workload, GenStats& stats, std::uint64_t seed, std::uint32_t clients);

  Rng& rng() noexcept { return rng_; }
  BookModel& model() noexcept { return model_; }

  // Instrument prices in ticks: price = tick * tick_size, clamped into the band.
  engine::Price price_at(engine::InstrumentId instrument, std::int64_t tick) const noexcept;
  std::int64_t tick_of(engine::InstrumentId instrument, engine::Price price) const noexcept;
  std::optional<std::int64_t> best_tick(engine::InstrumentId instrument, engine::Side side) const;

  // A new order from a random client with a fresh client order id; returns its key.
  Key new_order(engine::InstrumentId instrument, engine::Side side, engine::OrderType type, std::int64_t tick,
                engine::Qty qty);
  void cancel(Key live_order);
  // Modify a live order to `tick` and `total_qty` (must change something).
  void modify(Key live_order, std::int64_t tick, engine::Qty total_qty);
  // Cancel an order that is already done (a duplicate or late cancel); false
  // when the instrument has no finished order yet.
  bool late_cancel(engine::InstrumentId instrument);
  // Cancel / modify of a given order that is no longer live (filled, or
  // already cancelled): the engine rejects it (too late, or unknown once its
  // finished-order memory has forgotten the key).
  void cancel_gone(engine::InstrumentId instrument, Key done_order);
  void modify_gone(engine::InstrumentId instrument, Key done_order, std::int64_t tick, engine::Qty total_qty);
  // Cancel of an id no client ever used.
  void unknown_cancel(engine::InstrumentId instrument);
  // A new order reusing the id of a live order of the same client (the engine
  // rejects it as a duplicate); false when the instrument has no live order.
  bool duplicate_new(engine::InstrumentId instrument, engine::Side side, std::int64_t tick, engine::Qty qty);
  // Cancels every live order, in a seeded random order.
  void cancel_all();

  // Sets max_orders/max_levels of every instrument from the model's peaks
  // (twice the peak, rounded up to a power of two, with a floor).
  void finish();

 private:
  void push(engine::Request request);
  void sample_book();  // adds the book's current size to the averages (GenStats::avg_*)

  Workload& workload_;
  GenStats& stats_;
  Rng rng_;
  BookModel model_;
  std::vector<engine::ClientOrderId> next_id_;  // per client
  std::uint64_t unknown_ids_ = 0;
  double live_sum_ = 0;  // sums over the samples of sample_book()
  double level_sum_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace nanotick::workload
