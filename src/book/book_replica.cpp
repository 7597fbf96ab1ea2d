#include "book/book_replica.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::book {

std::vector<InstrumentCapacity> capacities_of(const market::InstrumentTable& config) {
  std::vector<InstrumentCapacity> out;
  out.reserve(config.instruments.size());
  for (const market::InstrumentConfig& i : config.instruments) out.push_back({i.max_orders, i.max_levels});
  return out;
}

BookReplica::BookReplica(std::span<const InstrumentCapacity> instruments) {
  if (instruments.empty())
    throw std::invalid_argument("book replica: the instrument table is empty (configure at least one instrument)");
  books_.reserve(instruments.size());
  for (std::size_t i = 0; i < instruments.size(); ++i) {
    try {
      books_.push_back(std::make_unique<InstrumentBook>(instruments[i].max_orders, instruments[i].max_levels));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("book replica: instrument " + std::to_string(i) + ": " + e.what());
    }
  }
}

BookResult BookReplica::clear(InstrumentId inst) noexcept {
  if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
  books_[inst]->clear();
  return BookResult::kOk;
}

BookResult BookReplica::load(InstrumentId inst, std::span<const RestingOrder> orders) noexcept {
  if (inst >= books_.size()) return count(BookResult::kUnknownInstrument);
  InstrumentBook& book = *books_[inst];
  book.clear();
  for (const RestingOrder& o : orders) {
    const BookResult r = book.add(o.order_id, o.side, o.price, o.qty);
    if (r != BookResult::kOk) {
      book.clear();
      return count(r);
    }
  }
  applied_.add(orders.size());
  return BookResult::kOk;
}

std::uint64_t BookReplica::rejected_total() const noexcept {
  std::uint64_t n = 0;
  for (const core::Counter& c : rejected_) n += c.get();
  return n;
}

void BookReplica::place_counters(core::CountersFile& file, std::string_view prefix) {
  const std::string p(prefix);
  file.place(applied_, p + ".applied");
  for (std::size_t i = 1; i < rejected_.size(); ++i)
    file.place(rejected_[i], p + ".rejected." + std::string(counter_name(static_cast<BookResult>(i))));
}

}  // namespace nanotick::book
