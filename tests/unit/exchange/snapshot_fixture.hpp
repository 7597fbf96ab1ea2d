// SnapshotPublisher's test helpers (snapshot_publisher_test.cpp,
// snapshot_publisher_end_to_end_test.cpp): a listener on the snapshot
// channel that checks and reassembles what it hears, and an event source
// that numbers MdEvents as the engine would. Real multicast on 127.0.0.1,
// TTL 0. For one test file per executable (an unnamed namespace).
#pragma once

#include <gtest/gtest.h>

#include <poll.h>
#include "exchange/snapshots/snapshot_publisher.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "book/book_replica.hpp"
#include "engine/matching_engine.hpp"
#include "exchange/marketdata/md_publisher.hpp"
#include "net/udp_multicast.hpp"
#include "proto/md_packet.hpp"
#include "support/allocation_counter.hpp"

namespace nb = nanotick::book;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;
namespace np = nanotick::proto;
namespace nx = nanotick::exchange;

namespace {

const nn::Ipv4Address kLoopback = nn::parse_ipv4("127.0.0.1");
constexpr ne::Side kBuy = ne::Side::kBuy;
constexpr ne::Side kSell = ne::Side::kSell;

struct Snapshot {
  std::uint32_t instrument = 0;
  std::uint64_t last_seq = 0;
  std::uint32_t orders_announced = 0;
  std::uint64_t start_seq = 0;  // the snapshot channel's seq of SnapshotStart
  std::vector<nb::RestingOrder> orders;
  std::uint64_t instrument_seq = 0;
};

using OrderRow = std::tuple<ne::OrderId, ne::Side, ne::Price, ne::Qty>;

inline std::vector<OrderRow> rows(const std::vector<nb::RestingOrder>& orders) {
  std::vector<OrderRow> out;
  for (const nb::RestingOrder& o : orders) out.emplace_back(o.order_id, o.side, o.price, o.qty);
  return out;
}
inline std::vector<OrderRow> rows(const nb::BookReplica& books, ne::InstrumentId inst) {
  std::vector<OrderRow> out;
  books.for_each_order(inst, [&](const nb::RestingOrder& o) { out.emplace_back(o.order_id, o.side, o.price, o.qty); });
  return out;
}
template <typename Engine>
std::vector<OrderRow> rows_of_engine(const Engine& engine, ne::InstrumentId inst) {
  std::vector<OrderRow> out;
  for (ne::Side side : {kBuy, kSell})
    engine.for_each_order(inst, side,
                          [&](const ne::OrderView& o) { out.emplace_back(o.order_id, o.side, o.price, o.open_qty); });
  return out;
}

// Joins the snapshot channel and reassembles what it hears, checking that the
// channel's sequence numbers start at 1 and have no gaps, every packet fits
// the MTU and every snapshot is well-formed (Start, its orders, End).
class SnapshotListener {
 public:
  SnapshotListener(const char* group, std::size_t mtu)
      : receiver_({kLoopback, {nn::parse_ipv4(group), 0}, 4 << 20}), mtu_(mtu), buf_(65536) {}

  std::string address() const { return receiver_.local_address().to_string(); }

  // Reads every datagram waiting, the first one waited for up to `wait_ms`.
  void poll(int wait_ms = 0) {
    pollfd p{receiver_.fd(), POLLIN, 0};
    if (::poll(&p, 1, wait_ms) != 1) return;
    for (;;) {
      const nn::RecvResult r = receiver_.recv(buf_);
      if (r.status == nn::RecvStatus::kNothing) return;
      ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
      const std::span<const std::uint8_t> pkt(buf_.data(), r.bytes);
      np::PacketHeader h;
      ASSERT_EQ(np::parse_packet(pkt, np::Channel::kSnapshot, h), np::PacketError::kNone);
      ASSERT_LE(r.bytes, mtu_);
      ASSERT_EQ(h.first_seq, next_seq_) << "gap or repeat on the snapshot channel";
      ++packets_;
      if (h.count == 0) {
        heartbeat_seqs.push_back(h.first_seq);
        continue;
      }
      np::for_each_message(pkt, h, [&](np::MdMsgType t, const std::uint8_t* m, std::uint64_t seq) { on(t, m, seq); });
      next_seq_ = h.first_seq + h.count;
    }
  }

  // Polls until `done()` or 2 s passed, calling `work()` in between.
  template <typename Work, typename Done>
  void run_until(Work&& work, Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      work();
      poll(1);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  std::vector<Snapshot> complete;
  std::vector<std::uint64_t> heartbeat_seqs;
  std::uint64_t packets() const { return packets_; }
  std::uint64_t next_seq() const { return next_seq_; }

 private:
  void on(np::MdMsgType t, const std::uint8_t* m, std::uint64_t seq) {
    switch (t) {
      case np::MdMsgType::kSnapshotStart: {
        EXPECT_FALSE(open_.has_value()) << "SnapshotStart inside a snapshot";
        const auto b = np::read_md<np::MdSnapshotBound>(m);
        open_ = Snapshot{b.instrument, b.last_seq, b.orders, seq, {}, b.instrument_seq};
        break;
      }
      case np::MdMsgType::kSnapshotOrder: {
        ASSERT_TRUE(open_.has_value()) << "SnapshotOrder outside a snapshot";
        const auto o = np::read_md<np::MdOrder>(m);
        EXPECT_EQ(o.instrument, open_->instrument);
        EXPECT_EQ(o.instrument_seq, open_->instrument_seq) << "a SnapshotOrder carries its snapshot's instrument_seq";
        open_->orders.push_back({o.order_id, o.price, o.qty, static_cast<ne::Side>(o.header.side)});
        break;
      }
      case np::MdMsgType::kSnapshotEnd: {
        ASSERT_TRUE(open_.has_value()) << "SnapshotEnd outside a snapshot";
        const auto b = np::read_md<np::MdSnapshotBound>(m);
        EXPECT_EQ(b.instrument, open_->instrument);
        EXPECT_EQ(b.last_seq, open_->last_seq);
        EXPECT_EQ(b.orders, open_->orders_announced);
        EXPECT_EQ(b.instrument_seq, open_->instrument_seq);
        EXPECT_EQ(open_->orders.size(), open_->orders_announced);
        complete.push_back(*open_);
        open_.reset();
        break;
      }
      default: ADD_FAILURE() << "unexpected message on the snapshot channel: " << np::to_string(t);
    }
  }

  nn::UdpMulticastReceiver receiver_;
  std::size_t mtu_;
  std::vector<std::uint8_t> buf_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t packets_ = 0;
  std::optional<Snapshot> open_;
};

nx::MarketDataConfig config_for(const SnapshotListener& l, std::uint32_t mtu, std::uint32_t interval_ms,
                                std::uint32_t heartbeat_ms = 60'000) {
  nx::MarketDataConfig c;
  c.interface = "127.0.0.1";
  c.snapshot = l.address();
  c.ttl = 0;
  c.mtu = mtu;
  c.heartbeat_ms = heartbeat_ms;
  c.snapshot_interval_ms = interval_ms;
  return c;
}

inline std::vector<nb::InstrumentCapacity> caps(std::uint32_t n, std::uint32_t max_orders = 256) {
  return std::vector<nb::InstrumentCapacity>(n, nb::InstrumentCapacity{max_orders, 64});
}

// Builds MdEvents with consecutive seqs and per-instrument consecutive
// instrument_seqs, as the engine would.
class EventSource {
 public:
  explicit EventSource(nx::MdRing& ring) : ring_(ring) {}
  void add(ne::InstrumentId inst, ne::OrderId id, ne::Side side, ne::Price price, ne::Qty qty) {
    push(inst, ne::MdType::kAdd, side, id, 0, price, qty);
  }
  void modify(ne::InstrumentId inst, ne::OrderId id, ne::Side side, ne::Price price, ne::Qty qty) {
    push(inst, ne::MdType::kModify, side, id, 0, price, qty);
  }
  void remove(ne::InstrumentId inst, ne::OrderId id, ne::Side side, ne::Price price, ne::Qty qty) {
    push(inst, ne::MdType::kDelete, side, id, 0, price, qty);
  }
  void trade(ne::InstrumentId inst, ne::OrderId maker, ne::OrderId taker, ne::Side aggressor, ne::Price price,
             ne::Qty qty) {
    push(inst, ne::MdType::kTrade, aggressor, maker, taker, price, qty);
  }
  void top(ne::InstrumentId inst) { push(inst, ne::MdType::kTopOfBook, ne::Side{}, 0, 0, 0, 0); }
  ne::Seq last_seq() const { return seq_; }

 private:
  void push(ne::InstrumentId inst, ne::MdType type, ne::Side side, ne::OrderId id, ne::OrderId contra, ne::Price price,
            ne::Qty qty) {
    ne::MdEvent e{};
    e.seq = ++seq_;
    e.instrument_seq = ++instrument_seq_.at(inst);
    e.instrument = inst;
    e.type = type;
    e.side = side;
    e.order_id = id;
    e.contra_order_id = contra;
    e.price = price;
    e.qty = qty;
    ASSERT_TRUE(ring_.try_push(e));
  }
  nx::MdRing& ring_;
  ne::Seq seq_ = 0;
  std::array<ne::Seq, 8> instrument_seq_{};  // a fixed array: the allocation test counts every new
};

}  // namespace
