// One trade as the venue's trade ledger keeps it (docs/CONTROLS.md "Trade
// ledger"): both sides, price, quantity, when, and the engine sequence
// numbers an auditor matches it with (the request that matched it = its
// journal seq, and each side's execution report seq). 128 bytes on disk,
// little-endian as in memory, the last 4 a CRC-32C of the 124 before.
// The ring that carries records from the engine's thread to the ledger
// writer on the auxiliary thread is defined here too. Plain values:
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/spsc_ring.hpp"

namespace nanotick::exchange {

struct TradeRecord {
  std::uint64_t trade_seq;            // the ledger's own, from 1, no gaps
  std::uint64_t request_seq;          // the engine request that matched (its journal seq)
  std::uint64_t time_ns;              // CLOCK_REALTIME ns of the match (the engine thread's TSC, converted)
  std::uint32_t instrument;
  std::uint8_t aggressor;             // engine::Side of the taker: 1 buy, 2 sell
  std::uint8_t pad[3];
  std::int64_t price;                 // the maker's price
  std::int64_t qty;
  std::uint32_t buy_client;
  std::uint32_t sell_client;
  std::uint64_t buy_order_id;
  std::uint64_t sell_order_id;
  std::uint64_t buy_client_order_id;
  std::uint64_t sell_client_order_id;
  std::uint64_t buy_exec_seq;         // engine report seq of the buyer's fill
  std::uint64_t sell_exec_seq;
  std::uint8_t reserved[20];
  std::uint32_t crc;                  // CRC-32C of the bytes before it
};
static_assert(std::is_trivially_copyable_v<TradeRecord>);
static_assert(sizeof(TradeRecord) == 128 && offsetof(TradeRecord, crc) == 124, "the ledger's record layout");

// 64K trades in flight (8 MiB): the writer drains it every aux cycle.
inline constexpr std::size_t kLedgerRingCapacity = 1 << 16;
using LedgerRing = core::SpscRing<TradeRecord, kLedgerRingCapacity>;

}  // namespace nanotick::exchange
