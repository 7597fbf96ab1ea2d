// The venue's instrument table: what each instrument is (symbol, tick, price
// band, collar, maximum order quantity) and the engine's capacities for it.
// InstrumentId = index, on the wire and in every module, so the exchange and
// its clients must hold the same table (both read it from the venue's config,
// venue/venue_config.hpp). Validated once at start-up (validate() throws with
// a message naming the instrument and the field); never changed while running.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "market/types.hpp"

namespace nanotick::market {

struct InstrumentConfig {
  std::string symbol;          // for humans and tools; unique
  Price tick_size = 1;         // prices must be multiples of it (> 0)
  Price min_price = 1;         // band: valid prices are [min_price, max_price]
  Price max_price = 1'000'000;
  Price collar = 0;            // > 0: limit prices further than this from the last trade are
                               // rejected and market orders stop there; 0 = no collar
  Qty max_order_qty = 1'000'000;
  std::uint32_t max_orders = 1u << 16;  // live (resting) orders
  std::uint32_t max_levels = 1u << 12;  // distinct price levels per side
};

struct InstrumentTable {
  std::vector<InstrumentConfig> instruments;  // InstrumentId = index

  // Throws std::invalid_argument naming the instrument and field on any
  // inconsistency (empty table, tick <= 0, band not on ticks, min > max, ...).
  void validate() const;
};

}  // namespace nanotick::market
