// Market data messages (UDP multicast), docs/PROTOCOL.md §2: the packet
// header and one struct per message type, laid out exactly as on the wire
// (little-endian host asserted in order_entry.hpp; encoding is memcpy).
// Plain values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/order_entry.hpp"

namespace nanotick::proto {

enum class Channel : std::uint8_t { kIncremental = 1, kSnapshot = 2 };

inline constexpr std::size_t kMinMtu = 128;
inline constexpr std::size_t kMaxMtu = 65000;

struct PacketHeader {
  std::uint16_t length;  // whole packet
  Channel channel;
  std::uint8_t version;
  std::uint16_t count;   // messages; 0 = heartbeat
  std::uint16_t reserved;
  std::uint64_t first_seq;  // seq of the first message (heartbeat: the next seq to be sent)
};
static_assert(sizeof(PacketHeader) == 16 && offsetof(PacketHeader, channel) == 2 &&
              offsetof(PacketHeader, version) == 3 && offsetof(PacketHeader, count) == 4 &&
              offsetof(PacketHeader, first_seq) == 8);

enum class MdMsgType : std::uint8_t {
  kAddOrder = 1,
  kModifyOrder = 2,
  kDeleteOrder = 3,
  kTrade = 4,
  kTopOfBook = 5,
  kInstrumentState = 6,
  kSnapshotStart = 10,
  kSnapshotOrder = 11,
  kSnapshotEnd = 12,
};

struct MdMsgHeader {
  std::uint16_t length;
  MdMsgType type;
  std::uint8_t side;  // 0 where not applicable
};
static_assert(sizeof(MdMsgHeader) == 4);

// AddOrder and SnapshotOrder.
struct MdOrder {
  MdMsgHeader header;
  std::uint32_t instrument;
  std::uint64_t order_id;
  std::int64_t price;
  std::int64_t qty;
  std::uint64_t instrument_seq;  // AddOrder: see MdDeleteOrder; SnapshotOrder: its snapshot's instrument_seq
};
static_assert(sizeof(MdOrder) == 40 && offsetof(MdOrder, instrument) == 4 && offsetof(MdOrder, order_id) == 8 &&
              offsetof(MdOrder, price) == 16 && offsetof(MdOrder, qty) == 24 &&
              offsetof(MdOrder, instrument_seq) == 32);

struct MdModifyOrder {
  MdMsgHeader header;
  std::uint32_t instrument;
  std::uint64_t order_id;
  std::int64_t qty;  // new open quantity
  std::uint64_t instrument_seq;
};
static_assert(sizeof(MdModifyOrder) == 32 && offsetof(MdModifyOrder, order_id) == 8 &&
              offsetof(MdModifyOrder, qty) == 16 && offsetof(MdModifyOrder, instrument_seq) == 24);

struct MdDeleteOrder {
  MdMsgHeader header;
  std::uint32_t instrument;
  std::uint64_t order_id;
  // Every incremental message ends with its instrument's own sequence number:
  // 1, 2, 3... per instrument, no gaps, continuing across restarts, so a
  // consumer that lost packets knows which instruments they touched.
  std::uint64_t instrument_seq;
};
static_assert(sizeof(MdDeleteOrder) == 24 && offsetof(MdDeleteOrder, order_id) == 8 &&
              offsetof(MdDeleteOrder, instrument_seq) == 16);

struct MdTrade {
  MdMsgHeader header;  // side = aggressor
  std::uint32_t instrument;
  std::uint64_t maker_order_id;
  std::uint64_t taker_order_id;
  std::int64_t price;
  std::int64_t qty;
  std::uint64_t instrument_seq;
};
static_assert(sizeof(MdTrade) == 48 && offsetof(MdTrade, maker_order_id) == 8 &&
              offsetof(MdTrade, taker_order_id) == 16 && offsetof(MdTrade, price) == 24 &&
              offsetof(MdTrade, qty) == 32 && offsetof(MdTrade, instrument_seq) == 40);

struct MdTopOfBook {
  MdMsgHeader header;
  std::uint32_t instrument;
  std::int64_t bid_price;
  std::int64_t bid_qty;
  std::int64_t ask_price;
  std::int64_t ask_qty;
  std::uint64_t instrument_seq;
};
static_assert(sizeof(MdTopOfBook) == 48 && offsetof(MdTopOfBook, bid_price) == 8 &&
              offsetof(MdTopOfBook, bid_qty) == 16 && offsetof(MdTopOfBook, ask_price) == 24 &&
              offsetof(MdTopOfBook, ask_qty) == 32 && offsetof(MdTopOfBook, instrument_seq) == 40);

// An instrument's trading state (docs/CONTROLS.md "Admin"): open (trading)
// or halted by the venue. InstrumentState.state and SnapshotStart/End's
// trading_state.
enum class TradingState : std::uint8_t { kOpen = 0, kHalted = 1 };

struct MdInstrumentState {
  MdMsgHeader header;
  std::uint32_t instrument;
  TradingState state;
  std::uint8_t reserved[7];
  std::uint64_t instrument_seq;
};
static_assert(sizeof(MdInstrumentState) == 24 && offsetof(MdInstrumentState, state) == 8 &&
              offsetof(MdInstrumentState, instrument_seq) == 16);

// SnapshotStart and SnapshotEnd.
struct MdSnapshotBound {
  MdMsgHeader header;
  std::uint32_t instrument;
  std::uint64_t last_seq;  // reflects every incremental message with seq <= last_seq
  std::uint32_t orders;
  TradingState trading_state;  // as of last_seq
  std::uint8_t reserved[3];
  std::uint64_t instrument_seq;  // the instrument's last incremental message the snapshot reflects (0: none yet)
};
static_assert(sizeof(MdSnapshotBound) == 32 && offsetof(MdSnapshotBound, last_seq) == 8 &&
              offsetof(MdSnapshotBound, orders) == 16 && offsetof(MdSnapshotBound, trading_state) == 20 &&
              offsetof(MdSnapshotBound, instrument_seq) == 24);

// The fixed length of a message type, 0 for an unknown type.
constexpr std::size_t md_message_length(MdMsgType t) noexcept {
  switch (t) {
    case MdMsgType::kAddOrder: return sizeof(MdOrder);
    case MdMsgType::kModifyOrder: return sizeof(MdModifyOrder);
    case MdMsgType::kDeleteOrder: return sizeof(MdDeleteOrder);
    case MdMsgType::kTrade: return sizeof(MdTrade);
    case MdMsgType::kTopOfBook: return sizeof(MdTopOfBook);
    case MdMsgType::kInstrumentState: return sizeof(MdInstrumentState);
    case MdMsgType::kSnapshotStart: return sizeof(MdSnapshotBound);
    case MdMsgType::kSnapshotOrder: return sizeof(MdOrder);
    case MdMsgType::kSnapshotEnd: return sizeof(MdSnapshotBound);
  }
  return 0;
}

// Which channel carries a type.
constexpr bool md_type_on_channel(MdMsgType t, Channel c) noexcept {
  const auto v = static_cast<std::uint8_t>(t);
  return md_message_length(t) != 0 && (c == Channel::kSnapshot ? v >= 10 : v < 10);
}

std::string_view to_string(MdMsgType t) noexcept;

}  // namespace nanotick::proto
