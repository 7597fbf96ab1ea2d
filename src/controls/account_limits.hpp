// What the venue knows of each client's account before trading starts
// (docs/CONTROLS.md "Accounts"): opening cash and positions, and the limits
// the pre-trade checks apply. Plain values, validated once at start-up
// (validate() throws std::invalid_argument naming the client and field),
// never changed while running.
//
// Money: cash and notionals are in price units x quantity, held in 128 bits
// (Money) so that no product of a price (|p| < 2^61) and a quantity (< 2^62)
// and no sum of fills can overflow; config values are int64.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/types.hpp"

namespace nanotick::controls {

using engine::ClientId;
using engine::InstrumentId;
using engine::Price;
using engine::Qty;

// __extension__: a GCC/Clang type, not ISO C++ (-Wpedantic says so).
__extension__ typedef __int128 Money;
__extension__ typedef unsigned __int128 UnsignedMoney;

// Decimal text of a Money value ("-1234").
inline std::string to_string(Money m) {
  if (m == 0) return "0";
  const bool negative = m < 0;
  // |m| without overflow at the most negative value.
  UnsignedMoney u = negative ? static_cast<UnsignedMoney>(-(m + 1)) + 1 : static_cast<UnsignedMoney>(m);
  std::string digits;
  while (u != 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + digits : digits;
}

// Opening holding of one instrument.
struct OpeningPosition {
  InstrumentId instrument = 0;
  Qty qty = 0;  // may be negative (short) down to -short_limit
};

struct ClientLimits {
  ClientId client = 0;
  std::int64_t cash = 0;                        // opening cash, >= 0
  std::vector<OpeningPosition> positions;       // instruments not listed start flat
  std::vector<InstrumentId> instruments;        // may trade these; empty: every instrument
  Qty max_order_qty = 0;                        // 0: only the instrument's own limit
  std::int64_t max_notional = 0;                // |price| x qty of one order; 0: no limit
  Price collar = 0;                             // limit price at most this far from the last trade; 0: none
  Qty short_limit = 0;                          // may sell down to a position of -short_limit
  std::uint32_t max_open_orders = 0;            // working orders at once; 0: no limit
};

struct ControlsConfig {
  // Clients with an account. A client without one trades unchecked and
  // unsettled when accounts_required is false, and is refused
  // (kNoAccount) when it is true.
  std::vector<ClientLimits> clients;
  bool accounts_required = false;

  // Throws std::invalid_argument naming the client and the field.
  void validate(const engine::EngineConfig& engine) const {
    std::vector<bool> seen(engine::kMaxClientId + 1, false);
    for (const ClientLimits& c : clients) {
      const std::string who = "client " + std::to_string(c.client) + ": ";
      if (c.client > engine::kMaxClientId)
        throw std::invalid_argument(who + "id above " + std::to_string(engine::kMaxClientId));
      if (seen[c.client]) throw std::invalid_argument(who + "has two accounts");
      seen[c.client] = true;
      if (c.cash < 0) throw std::invalid_argument(who + "cash must be >= 0, got " + std::to_string(c.cash));
      if (c.max_order_qty < 0) throw std::invalid_argument(who + "max_order_qty must be >= 0");
      if (c.max_notional < 0) throw std::invalid_argument(who + "max_notional must be >= 0");
      if (c.collar < 0) throw std::invalid_argument(who + "collar must be >= 0");
      if (c.short_limit < 0) throw std::invalid_argument(who + "short_limit must be >= 0");
      std::vector<bool> held(engine.instruments.size(), false);
      for (const OpeningPosition& p : c.positions) {
        if (p.instrument >= engine.instruments.size())
          throw std::invalid_argument(who + "position in unknown instrument " + std::to_string(p.instrument));
        if (held[p.instrument])
          throw std::invalid_argument(who + "two positions in instrument " + std::to_string(p.instrument));
        held[p.instrument] = true;
        if (p.qty < -c.short_limit)
          throw std::invalid_argument(who + "position " + std::to_string(p.qty) + " in instrument " +
                                      std::to_string(p.instrument) + " is below -short_limit");
        if (p.qty > (std::numeric_limits<Qty>::max() >> 2) || p.qty < -(std::numeric_limits<Qty>::max() >> 2))
          throw std::invalid_argument(who + "position out of range");
      }
      for (const InstrumentId i : c.instruments)
        if (i >= engine.instruments.size())
          throw std::invalid_argument(who + "permission for unknown instrument " + std::to_string(i));
    }
  }
};

}  // namespace nanotick::controls
