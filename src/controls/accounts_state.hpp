// The accounts' balances as plain values: what an engine snapshot stores
// beside the books (exchange/engine_snapshot.hpp) and what
// ControlledEngine::export_state / import_state exchange. Only cash and
// positions: what working orders hold is not state of its own, it is worked
// out again from the books on import (Accounts::import_balances), so a
// snapshot cannot disagree with itself. Start-up / snapshot code (vectors).
// Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "controls/account_limits.hpp"

namespace nanotick::controls {

struct AccountsState {
  struct Account {
    ClientId client = 0;
    Money cash = 0;
    std::vector<Qty> positions;  // by InstrumentId
    bool operator==(const Account&) const = default;
  };
  std::vector<Account> accounts;  // in the config's order
  bool operator==(const AccountsState&) const = default;
};

}  // namespace nanotick::controls
