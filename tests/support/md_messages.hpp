// Market data wire messages (PROTOCOL.md §2) of instrument 0 as the feed
// tests build them: an order (an AddOrder, or a SnapshotOrder) and a
// snapshot's Start / End. Plain functions: thread-safe. Test code only.
#pragma once

#include <cstdint>

#include "market/types.hpp"
#include "proto/market_data.hpp"

namespace nanotick::testing {

inline proto::MdOrder md_order(std::uint64_t id, market::Side side, std::int64_t price, std::int64_t qty,
                               std::uint64_t iseq, proto::MdMsgType type = proto::MdMsgType::kAddOrder) {
  proto::MdOrder m{};
  m.header = {sizeof m, type, static_cast<std::uint8_t>(side)};
  m.instrument = 0;
  m.order_id = id;
  m.price = price;
  m.qty = qty;
  m.instrument_seq = iseq;
  return m;
}

inline proto::MdSnapshotBound md_bound(proto::MdMsgType type, std::uint64_t last_seq, std::uint32_t orders,
                                       std::uint64_t iseq) {
  proto::MdSnapshotBound b{};
  b.header = {sizeof b, type, 0};
  b.instrument = 0;
  b.last_seq = last_seq;
  b.orders = orders;
  b.instrument_seq = iseq;
  return b;
}

}  // namespace nanotick::testing
