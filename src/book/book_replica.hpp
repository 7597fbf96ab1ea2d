// Order-by-order books for every instrument of a venue, rebuilt from its
// market data: the exchange's snapshot publisher feeds it engine events, the
// trading client's book builder feeds it decoded wire messages, so the
// interface takes plain fields (instrument, order id, side, price, qty).
// Every call returns a BookResult; each rejected event is counted by result
// and leaves the books exactly as they were. Not thread-safe: one owning
// thread applies events; the counters may be read from any thread.
//
// Capacity per instrument (orders, price levels per side) is fixed at
// construction; nothing allocates afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "book/book_result.hpp"
#include "book/instrument_book.hpp"
#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "market/instrument_table.hpp"
#include "market/types.hpp"

namespace nanotick::book {

using market::InstrumentId;

struct InstrumentCapacity {
  std::uint32_t max_orders = 1u << 16;  // resting orders
  std::uint32_t max_levels = 1u << 12;  // price levels per side
};

// The engine's own limits per instrument: a replica sized like this can hold
// every book the engine can build.
std::vector<InstrumentCapacity> capacities_of(const market::InstrumentTable& config);

class BookReplica {
 public:
  // One book per entry, InstrumentId = index. Start-up only: throws
  // std::invalid_argument for an empty table or a zero capacity (naming the
  // instrument).
  explicit BookReplica(std::span<const InstrumentCapacity> instruments);
  BookReplica(const BookReplica&) = delete;
  BookReplica& operator=(const BookReplica&) = delete;

  std::uint32_t instrument_count() const noexcept { return static_cast<std::uint32_t>(books_.size()); }

  [[nodiscard]] NT_ALWAYS_INLINE BookResult add(InstrumentId inst, OrderId id, Side side, Price price,
                                                Qty qty) noexcept {
    if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
    return count(books_[inst]->add(id, side, price, qty));
  }
  [[nodiscard]] NT_ALWAYS_INLINE BookResult modify(InstrumentId inst, OrderId id, Qty qty) noexcept {
    if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
    return count(books_[inst]->modify(id, qty));
  }
  [[nodiscard]] NT_ALWAYS_INLINE BookResult remove(InstrumentId inst, OrderId id) noexcept {
    if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
    return count(books_[inst]->remove(id));
  }
  [[nodiscard]] NT_ALWAYS_INLINE BookResult trade(InstrumentId inst, OrderId maker, Price price, Qty qty) noexcept {
    if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
    return count(books_[inst]->trade(maker, price, qty));
  }

  // Empties one instrument's book (the start of a snapshot load: clear, then
  // add() the snapshot's orders in the order they come, which is priority order).
  [[nodiscard]] BookResult clear(InstrumentId inst) noexcept;

  // Replaces one instrument's book with `orders` (priority order, as in a
  // snapshot). All or nothing: if any order is refused, the book is left
  // empty (a consumer then waits for the next snapshot) and the first
  // refusal is returned and counted.
  [[nodiscard]] BookResult load(InstrumentId inst, std::span<const RestingOrder> orders) noexcept;

  // One instrument's book for reading (levels, best, iteration), or nullptr
  // for an unknown instrument.
  const InstrumentBook* instrument(InstrumentId inst) const noexcept {
    return inst < books_.size() ? books_[inst].get() : nullptr;
  }
  std::optional<market::LevelView> best(InstrumentId inst, Side side) const noexcept {
    return inst < books_.size() ? books_[inst]->best(side) : std::nullopt;
  }
  // Calls fn(const RestingOrder&) for the instrument's orders in priority order
  // (bids best first, FIFO within a level, then asks); nothing for an unknown one.
  template <typename Fn>
  void for_each_order(InstrumentId inst, Fn&& fn) const {
    if (inst < books_.size()) books_[inst]->for_each_order(fn);
  }
  std::uint32_t order_count(InstrumentId inst) const noexcept {
    return inst < books_.size() ? books_[inst]->order_count() : 0;
  }

  // Events applied, and events refused per result (the kOk slot is unused).
  std::uint64_t applied() const noexcept { return applied_.get(); }
  std::uint64_t rejected(BookResult r) const noexcept { return rejected_[static_cast<std::size_t>(r)].get(); }
  std::uint64_t rejected_total() const noexcept;
  // Start-up, before the applying thread runs: `<prefix>.applied` and
  // `<prefix>.rejected.<result>` into `file`.
  void place_counters(core::CountersFile& file, std::string_view prefix);

 private:
  NT_ALWAYS_INLINE BookResult count(BookResult r) noexcept {
    if (r == BookResult::kOk) [[likely]] {
      applied_.add();
    } else {
      rejected_[static_cast<std::size_t>(r)].add();
    }
    return r;
  }

  std::vector<std::unique_ptr<InstrumentBook>> books_;
  core::Counter applied_;
  std::array<core::Counter, kBookResultCount> rejected_;
};

}  // namespace nanotick::book
