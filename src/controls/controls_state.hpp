// The controls' state beyond the books, as plain values: what an engine
// snapshot stores beside the books (exchange/engine_snapshot.hpp) and what
// ControlledEngine::export_controls / import_state exchange.
// - The accounts' balances: only cash and positions. What working orders
//   hold is not state of its own; it is worked out again from the books on
//   import (Accounts::import_balances), so a snapshot cannot disagree with
//   itself.
// - The switches an admin set (switches.hpp): halted instruments, blocked
//   clients.
// Start-up / snapshot code (vectors). Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "controls/account_limits.hpp"

namespace nanotick::controls {

struct ControlsState {
  struct Account {
    ClientId client = 0;
    Money cash = 0;
    std::vector<Qty> positions;  // by InstrumentId
    bool operator==(const Account&) const = default;
  };
  std::vector<Account> accounts;      // in the config's order
  std::vector<InstrumentId> halted;   // ascending
  std::vector<ClientId> blocked;      // ascending
  bool operator==(const ControlsState&) const = default;
};

}  // namespace nanotick::controls
