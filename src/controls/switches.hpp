// The venue's switches (docs/CONTROLS.md "Admin"): which instruments an
// admin has halted and which clients an admin has blocked. A halted
// instrument and a blocked client take no new orders and no modifies;
// cancels always pass, so a client can still take its orders out.
//
// Part of the sequenced state, like the books and the accounts: set only by
// admin requests, which are journaled, so a replay sets them again; an
// engine snapshot carries them (ControlsState::halted, ::blocked).
//
// Not thread-safe: the engine's thread. The queries are noexcept, O(1) and
// never allocate (both tables are sized at construction).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "controls/controls_state.hpp"
#include "engine/types.hpp"

namespace nanotick::controls {

class Switches {
 public:
  explicit Switches(std::size_t instruments) : halted_(instruments, 0), blocked_(engine::kMaxClientId + 1, 0) {}

  // Whether any instrument is halted or any client blocked: the one load and
  // branch a new order pays in the normal case.
  bool any() const noexcept { return on_ != 0; }
  bool halted(engine::InstrumentId inst) const noexcept { return inst < halted_.size() && halted_[inst] != 0; }
  bool blocked(engine::ClientId client) const noexcept {
    return client <= engine::kMaxClientId && blocked_[client] != 0;
  }
  // Each returns whether the switch changed (halting a halted instrument does not).
  bool set_halted(engine::InstrumentId inst, bool on) noexcept { return flip(halted_, inst, on); }
  bool set_blocked(engine::ClientId client, bool on) noexcept { return flip(blocked_, client, on); }

  // Snapshot code: allocates; import throws std::invalid_argument on an
  // instrument or client out of range.
  void export_into(ControlsState& s) const {
    s.halted.clear();
    s.blocked.clear();
    for (std::size_t i = 0; i < halted_.size(); ++i)
      if (halted_[i] != 0) s.halted.push_back(static_cast<engine::InstrumentId>(i));
    for (std::size_t c = 0; c < blocked_.size(); ++c)
      if (blocked_[c] != 0) s.blocked.push_back(static_cast<engine::ClientId>(c));
  }
  void import_from(const ControlsState& s) {
    for (const engine::InstrumentId i : s.halted)
      if (i >= halted_.size())
        throw std::invalid_argument("switches: halted instrument " + std::to_string(i) + " does not exist");
    for (const engine::ClientId c : s.blocked)
      if (c > engine::kMaxClientId)
        throw std::invalid_argument("switches: blocked client " + std::to_string(c) + " is out of range");
    std::fill(halted_.begin(), halted_.end(), 0);
    std::fill(blocked_.begin(), blocked_.end(), 0);
    on_ = 0;
    for (const engine::InstrumentId i : s.halted) on_ += flip(halted_, i, true) ? 1 : 0;
    for (const engine::ClientId c : s.blocked) on_ += flip(blocked_, c, true) ? 1 : 0;
  }

 private:
  bool flip(std::vector<std::uint8_t>& table, std::size_t i, bool on) noexcept {
    if (i >= table.size() || (table[i] != 0) == on) return false;
    table[i] = on ? 1 : 0;
    on_ = on ? on_ + 1 : on_ - 1;
    return true;
  }

  std::vector<std::uint8_t> halted_;   // by InstrumentId
  std::vector<std::uint8_t> blocked_;  // by ClientId: 64 KiB, read only while any() is true
  std::uint32_t on_ = 0;               // switches on: halted instruments + blocked clients
};

}  // namespace nanotick::controls
