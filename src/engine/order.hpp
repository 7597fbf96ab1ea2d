// A resting order and the packed (client, client order id) key. Plain data:
// owned and mutated only by the engine's thread.
#pragma once

#include <cstdint>

#include "engine/types.hpp"

namespace nanotick::engine {

// (client, client_order_id) in one 64-bit key: client in the top 16 bits. Both
// values are validated against kMaxClientId / kMaxClientOrderId first, so the
// packing is a bijection on valid keys.
constexpr std::uint64_t order_key(ClientId client, ClientOrderId client_order_id) noexcept {
  return (std::uint64_t{client} << 48) | client_order_id;
}

// Index of a price level in its side's level table; kNoLevel = none.
using LevelIndex = std::uint32_t;
inline constexpr LevelIndex kNoLevel = ~LevelIndex{0};

// One live (resting) order. Linked intrusively into the FIFO of its price
// level (prev/next), so a cancel in the middle of a level is O(1) and keeps
// the others' order. open quantity = order_qty - cum_qty, always > 0.
// Exactly one cache line (the pool's slots are line-aligned): a cancel or a
// fill touches one line per order. The instrument is not stored: it is the
// one whose pool owns the order.
struct Order {
  Order* prev = nullptr;  // towards the level's head (older)
  Order* next = nullptr;  // towards the level's tail (newer)
  std::uint64_t key = 0;  // order_key(client, client_order_id)
  OrderId order_id = 0;
  Price price = 0;
  Qty order_qty = 0;
  Qty cum_qty = 0;
  LevelIndex level = kNoLevel;
  Side side = Side::kBuy;
  StpMode stp = StpMode::kNone;

  ClientId client() const noexcept { return static_cast<ClientId>(key >> 48); }
  ClientOrderId client_order_id() const noexcept { return key & kMaxClientOrderId; }
  Qty open_qty() const noexcept { return order_qty - cum_qty; }
};
static_assert(sizeof(Order) == 64, "Order: one cache line");

}  // namespace nanotick::engine
