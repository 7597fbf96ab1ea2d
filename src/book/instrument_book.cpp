#include "book/instrument_book.hpp"

#include <stdexcept>
#include <string>

namespace nanotick::book {

namespace {

std::uint32_t checked(std::uint32_t value, const char* what) {
  if (value == 0 || value == kNil)
    throw std::invalid_argument(std::string(what) + " must be in [1, " + std::to_string(kNil - 1) + "], got " +
                                std::to_string(value) + " (check the instrument's capacity in the config)");
  return value;
}

}  // namespace

InstrumentBook::InstrumentBook(std::uint32_t max_orders, std::uint32_t max_levels)
    : max_orders_(checked(max_orders, "max_orders")),
      nodes_(std::make_unique<Node[]>(max_orders)),
      ids_(max_orders),
      bids_(Side::kBuy, checked(max_levels, "max_levels")),
      asks_(Side::kSell, max_levels) {
  // make_unique value-initialised (wrote) every node: the pages are faulted here.
  for (std::uint32_t i = 0; i < max_orders; ++i) nodes_[i].next = i + 1 < max_orders ? i + 1 : kNil;
  free_head_ = 0;
}

void InstrumentBook::clear() noexcept {
  for (const LevelLadder* ladder : {&bids_, &asks_}) {
    ladder->walk([this](const Level& lvl) {
      for (NodeIndex i = lvl.head; i != kNil;) {
        Node& n = nodes_[i];
        const NodeIndex next = n.next;
        n.prev = kNil;
        n.level = kNil;
        n.next = free_head_;
        free_head_ = i;
        i = next;
      }
    });
  }
  bids_.clear();
  asks_.clear();
  ids_.clear();
  live_ = 0;
}

}  // namespace nanotick::book
