// SnapshotPublisher over real multicast on 127.0.0.1, TTL 0: the snapshot of
// an instrument after adds, trades, modifies and deletes (content, priority
// order, last_seq, the instrument's own instrument_seq), MTU splitting with the per-pass packet budget, a snapshot
// that stays consistent while events keep arriving during it, round robin
// over instruments, heartbeats announcing the next seq, seeding from a
// recovered engine, config errors, no allocation in do_work, and an end to
// end run: a real MatchingEngine -> MdPublisher -> ring -> SnapshotPublisher
// where both the incremental feed and every snapshot must agree with the
// engine, and every snapshot's instrument_seq with the feed (the snapshot
// audit of PROTOCOL.md §2.3). Each test uses its own group in 239.255.78.128/25 and a
// kernel-picked port.
#include "exchange/snapshots/snapshot_publisher.hpp"

#include <gtest/gtest.h>
#include <poll.h>

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

std::vector<OrderRow> rows(const std::vector<nb::RestingOrder>& orders) {
  std::vector<OrderRow> out;
  for (const nb::RestingOrder& o : orders) out.emplace_back(o.order_id, o.side, o.price, o.qty);
  return out;
}
std::vector<OrderRow> rows(const nb::BookReplica& books, ne::InstrumentId inst) {
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

std::vector<nb::InstrumentCapacity> caps(std::uint32_t n, std::uint32_t max_orders = 256) {
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

TEST(SnapshotPublisher, ShouldSendTheBookAndLastSeqAfterAddsTradesModifiesAndDeletes) {
  SnapshotListener listener("239.255.78.129", 1400);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(2);
  nx::SnapshotPublisher pub(config_for(listener, 1400, 60'000), c, *ring);
  EventSource ev(*ring);
  ev.add(0, 1, kBuy, 100, 10);
  ev.add(0, 2, kBuy, 100, 5);
  ev.add(0, 3, kSell, 105, 7);
  ev.add(0, 4, kBuy, 101, 3);
  ev.add(1, 9, kSell, 50, 1);        // another instrument: not in instrument 0's snapshot
  ev.trade(0, 4, 20, kSell, 101, 3);  // maker 4 filled: gone
  ev.top(0);
  ev.trade(0, 1, 21, kSell, 100, 4);  // maker 1 partly filled: 6 left, keeps its place
  ev.remove(0, 2, kBuy, 100, 5);
  ev.add(0, 5, kSell, 104, 2);
  ev.modify(0, 3, kSell, 105, 6);
  ev.top(0);

  listener.run_until([&] { (void)pub.do_work(); }, [&] { return !listener.complete.empty(); });
  ASSERT_EQ(listener.complete.size(), 1u);
  const Snapshot& s = listener.complete[0];
  EXPECT_EQ(s.instrument, 0u) << "the cycle starts with instrument 0";
  EXPECT_EQ(s.last_seq, 12u) << "every event applied, the TopOfBooks included";
  EXPECT_EQ(s.instrument_seq, 11u) << "instrument 0's own count: the event of instrument 1 is not in it";
  EXPECT_EQ(s.start_seq, 1u) << "the snapshot channel numbers its messages from 1";
  EXPECT_EQ(rows(s.orders), (std::vector<OrderRow>{{1, kBuy, 100, 6}, {5, kSell, 104, 2}, {3, kSell, 105, 6}}));
  EXPECT_EQ(listener.next_seq(), 6u) << "Start + 3 orders + End";
  EXPECT_EQ(pub.last_seq(), 12u);
  EXPECT_EQ(pub.events(), 12u);
  EXPECT_EQ(pub.snapshots(), 1u);
  EXPECT_EQ(pub.book_rejects(), 0u);
  EXPECT_EQ(pub.channel().messages(), 5u);
  EXPECT_EQ(rows(pub.books(), 1), (std::vector<OrderRow>{{9, kSell, 50, 1}}));
  EXPECT_EQ(pub.last_instrument_seq(0), 11u);
  EXPECT_EQ(pub.last_instrument_seq(1), 1u);
  EXPECT_EQ(pub.last_instrument_seq(2), 0u) << "no such instrument";
}

TEST(SnapshotPublisher, ShouldSplitASnapshotAtTheMtuAFewPacketsPerPass) {
  SnapshotListener listener("239.255.78.130", 128);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(1);
  nx::SnapshotPublisher pub(config_for(listener, 128, 60'000), c, *ring);
  EventSource ev(*ring);
  std::vector<OrderRow> want;
  for (ne::OrderId id = 1; id <= 40; ++id) {
    const ne::Price price = 100 + static_cast<ne::Price>(id % 5);
    ev.add(0, id, kSell, price, static_cast<ne::Qty>(id));
  }
  for (ne::Price p = 100; p <= 104; ++p)
    for (ne::OrderId id = 1; id <= 40; ++id)
      if (100 + static_cast<ne::Price>(id % 5) == p) want.emplace_back(id, kSell, p, static_cast<ne::Qty>(id));

  (void)pub.do_work();
  EXPECT_EQ(pub.channel().packets(), static_cast<std::uint64_t>(nx::SnapshotPublisher::kPacketsPerPass))
      << "one pass sends at most kPacketsPerPass packets";
  EXPECT_EQ(pub.snapshots(), 0u) << "40 orders need more: the snapshot goes on in the next passes";
  listener.run_until([&] { (void)pub.do_work(); }, [&] { return !listener.complete.empty(); });
  ASSERT_EQ(listener.complete.size(), 1u);
  EXPECT_EQ(rows(listener.complete[0].orders), want);
  EXPECT_EQ(listener.complete[0].orders_announced, 40u);
  // Start (32) + 2 orders (40 each) fill 16 + 32 + 80 = 128 bytes; then 2
  // orders per packet (16 + 80 = 96: a third does not fit); End (32) fits
  // after the last 2 (128).
  EXPECT_EQ(listener.packets(), 1u + 19u);
  EXPECT_EQ(pub.channel().messages(), 42u);
}

TEST(SnapshotPublisher, ShouldKeepASnapshotAtItsLastSeqWhileEventsArriveDuringIt) {
  SnapshotListener listener("239.255.78.131", 128);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(1);
  nx::SnapshotPublisher pub(config_for(listener, 128, 60'000), c, *ring);
  EventSource ev(*ring);
  for (ne::OrderId id = 1; id <= 40; ++id) ev.add(0, id, kBuy, 100, 1);
  (void)pub.do_work();  // snapshot 1 starts at seq 40 and is partly sent
  ASSERT_EQ(pub.snapshots(), 0u);
  for (ne::OrderId id = 1; id <= 40; id += 2) ev.remove(0, id, kBuy, 100, 1);
  ev.add(0, 41, kBuy, 99, 5);
  listener.run_until([&] { (void)pub.do_work(); }, [&] { return !listener.complete.empty(); });
  ASSERT_EQ(listener.complete.size(), 1u);
  const Snapshot& s = listener.complete[0];
  EXPECT_EQ(s.last_seq, 40u);
  EXPECT_EQ(s.instrument_seq, 40u);
  ASSERT_EQ(s.orders.size(), 40u) << "the later deletes are not in it";
  for (std::size_t i = 0; i < 40; ++i) EXPECT_EQ(s.orders[i].order_id, i + 1);
  EXPECT_EQ(pub.last_seq(), 61u) << "the books went on meanwhile";
  EXPECT_EQ(pub.last_instrument_seq(0), 61u);
  EXPECT_EQ(pub.books().order_count(0), 21u);
}

TEST(SnapshotPublisher, ShouldCycleThroughTheInstrumentsInTurn) {
  SnapshotListener listener("239.255.78.132", 1400);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(3);
  nx::SnapshotPublisher pub(config_for(listener, 1400, 30), c, *ring);  // one instrument every 10 ms
  EventSource ev(*ring);
  ne::OrderId id = 1;
  for (ne::InstrumentId inst = 0; inst < 3; ++inst)
    for (std::uint32_t k = 0; k <= inst; ++k) ev.add(inst, id++, kBuy, 10 * (inst + 1), 1);
  listener.run_until([&] { (void)pub.do_work(); }, [&] { return listener.complete.size() >= 5; });
  ASSERT_GE(listener.complete.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const Snapshot& s = listener.complete[i];
    EXPECT_EQ(s.instrument, i % 3) << "snapshot " << i;
    EXPECT_EQ(s.orders.size(), s.instrument + 1) << "snapshot " << i;
    for (const nb::RestingOrder& o : s.orders) EXPECT_EQ(o.price, 10 * static_cast<ne::Price>(s.instrument + 1));
    EXPECT_EQ(s.last_seq, 6u);
    EXPECT_EQ(s.instrument_seq, s.instrument + 1u) << "snapshot " << i << ": its instrument's events only";
  }
}

TEST(SnapshotPublisher, ShouldSendHeartbeatsAnnouncingTheNextSeqWhenIdle) {
  SnapshotListener listener("239.255.78.133", 1400);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(1);
  nx::SnapshotPublisher pub(config_for(listener, 1400, 60'000, 20), c, *ring);
  listener.run_until([&] { (void)pub.do_work(); }, [&] { return listener.heartbeat_seqs.size() >= 2; });
  ASSERT_EQ(listener.complete.size(), 1u) << "the first (empty) snapshot goes out at once";
  EXPECT_EQ(listener.complete[0].orders_announced, 0u);
  EXPECT_EQ(listener.complete[0].last_seq, 0u);
  EXPECT_EQ(listener.complete[0].instrument_seq, 0u) << "no event of the instrument yet";
  ASSERT_GE(listener.heartbeat_seqs.size(), 2u);
  EXPECT_EQ(listener.heartbeat_seqs[0], 3u) << "Start 1, End 2: the next is 3";
  EXPECT_EQ(listener.heartbeat_seqs[1], 3u);
  EXPECT_GE(pub.channel().heartbeats(), 2u);
}

TEST(SnapshotPublisher, ShouldNotAllocateInItsDutyCycle) {
  SnapshotListener listener("239.255.78.134", 256);
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(2);
  nx::SnapshotPublisher pub(config_for(listener, 256, 2, 1), c, *ring);
  EventSource ev(*ring);
  const nanotick::test::AllocationScope scope;
  for (ne::OrderId id = 1; id <= 300; ++id) {
    ev.add(static_cast<ne::InstrumentId>(id % 2), id, id % 3 ? kBuy : kSell, 100 + static_cast<ne::Price>(id % 7), 2);
    if (id > 20) ev.remove(static_cast<ne::InstrumentId>((id - 20) % 2), id - 20, kBuy, 0, 0);
    (void)pub.do_work();
  }
  const std::size_t allocations = scope.count();
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(pub.book_rejects(), 0u);
}

// The engine's outputs: market data into the publisher, reports ignored.
struct PublishingSink {
  nx::MdPublisher* publisher = nullptr;
  void on_report(const ne::ExecReport&) {}
  void on_market_data(const ne::MdEvent& m) { publisher->on_md(m); }
};

ne::EngineConfig engine_config(std::uint32_t instruments) {
  ne::EngineConfig cfg;
  for (std::uint32_t i = 0; i < instruments; ++i) {
    ne::InstrumentConfig ic;
    ic.symbol = "T" + std::to_string(i);
    ic.min_price = 1;
    ic.max_price = 1000;
    ic.max_order_qty = 1000;
    ic.max_orders = 256;
    ic.max_levels = 64;
    cfg.instruments.push_back(ic);
  }
  cfg.validate();
  return cfg;
}

TEST(SnapshotPublisher, ShouldSeedItsBooksFromARecoveredEngine) {
  SnapshotListener listener("239.255.78.135", 1400);
  const ne::EngineConfig cfg = engine_config(2);
  struct NullSink {
    void on_report(const ne::ExecReport&) {}
    void on_market_data(const ne::MdEvent&) {}
  } sink;
  ne::MatchingEngine<NullSink> engine(cfg, sink);
  engine.process(ne::make_new(1, 1, 1, kBuy, ne::OrderType::kLimit, 100, 10));
  engine.process(ne::make_new(1, 1, 2, kBuy, ne::OrderType::kLimit, 101, 5));
  engine.process(ne::make_new(1, 2, 3, kSell, ne::OrderType::kLimit, 101, 2));  // trades 2 of order 2
  engine.process(ne::make_new(0, 2, 4, kSell, ne::OrderType::kLimit, 200, 7));
  auto ring = std::make_unique<nx::MdRing>();
  const std::vector<nb::InstrumentCapacity> c = nb::capacities_of(cfg);
  nx::SnapshotPublisher pub(config_for(listener, 1400, 20), c, *ring);
  pub.seed_from(engine);
  EXPECT_EQ(pub.last_seq(), engine.last_md_seq());
  ASSERT_GT(engine.last_instrument_md_seq(1), engine.last_instrument_md_seq(0)) << "distinct counts tell them apart";
  EXPECT_GT(engine.last_instrument_md_seq(0), 0u);
  for (ne::InstrumentId inst = 0; inst < 2; ++inst)
    EXPECT_EQ(pub.last_instrument_seq(inst), engine.last_instrument_md_seq(inst)) << "instrument " << inst;
  listener.run_until([&] { (void)pub.do_work(); }, [&] { return listener.complete.size() >= 2; });
  ASSERT_GE(listener.complete.size(), 2u);
  for (const Snapshot& s : listener.complete) {
    EXPECT_EQ(rows(s.orders), rows_of_engine(engine, s.instrument)) << "instrument " << s.instrument;
    EXPECT_EQ(s.last_seq, engine.last_md_seq());
    EXPECT_EQ(s.instrument_seq, engine.last_instrument_md_seq(s.instrument)) << "instrument " << s.instrument;
  }
  EXPECT_EQ(listener.complete[1].orders.size(), 2u);

  const ne::EngineConfig other = engine_config(3);
  const std::vector<nb::InstrumentCapacity> c3 = nb::capacities_of(other);
  nx::SnapshotPublisher mismatched(config_for(listener, 1400, 20), c3, *ring);
  EXPECT_THROW(mismatched.seed_from(engine), std::runtime_error);
}

// (instrument, instrument_seq) of one incremental wire message.
std::pair<std::uint32_t, std::uint64_t> instrument_seq_of(np::MdMsgType t, const std::uint8_t* m) {
  switch (t) {
    case np::MdMsgType::kAddOrder: {
      const auto x = np::read_md<np::MdOrder>(m);
      return {x.instrument, x.instrument_seq};
    }
    case np::MdMsgType::kModifyOrder: {
      const auto x = np::read_md<np::MdModifyOrder>(m);
      return {x.instrument, x.instrument_seq};
    }
    case np::MdMsgType::kDeleteOrder: {
      const auto x = np::read_md<np::MdDeleteOrder>(m);
      return {x.instrument, x.instrument_seq};
    }
    case np::MdMsgType::kTrade: {
      const auto x = np::read_md<np::MdTrade>(m);
      return {x.instrument, x.instrument_seq};
    }
    case np::MdMsgType::kTopOfBook: {
      const auto x = np::read_md<np::MdTopOfBook>(m);
      return {x.instrument, x.instrument_seq};
    }
    default: ADD_FAILURE() << "not an incremental message: " << np::to_string(t); return {0, 0};
  }
}

// Applies one incremental wire message to a consumer's replica; false on a refusal.
bool apply_wire(nb::BookReplica& books, np::MdMsgType t, const std::uint8_t* m) {
  switch (t) {
    case np::MdMsgType::kAddOrder: {
      const auto a = np::read_md<np::MdOrder>(m);
      return books.add(a.instrument, a.order_id, static_cast<ne::Side>(a.header.side), a.price, a.qty) ==
             nb::BookResult::kOk;
    }
    case np::MdMsgType::kModifyOrder: {
      const auto x = np::read_md<np::MdModifyOrder>(m);
      return books.modify(x.instrument, x.order_id, x.qty) == nb::BookResult::kOk;
    }
    case np::MdMsgType::kDeleteOrder: {
      const auto d = np::read_md<np::MdDeleteOrder>(m);
      return books.remove(d.instrument, d.order_id) == nb::BookResult::kOk;
    }
    case np::MdMsgType::kTrade: {
      const auto tr = np::read_md<np::MdTrade>(m);
      return books.trade(tr.instrument, tr.maker_order_id, tr.price, tr.qty) == nb::BookResult::kOk;
    }
    default: return true;
  }
}

TEST(SnapshotPublisher, ShouldAgreeWithTheEngineAndTheIncrementalFeedEndToEnd) {
  constexpr std::uint32_t kInstruments = 2;
  SnapshotListener snapshots("239.255.78.136", 1400);
  nn::UdpMulticastReceiver incremental({kLoopback, {nn::parse_ipv4("239.255.78.137"), 0}, 4 << 20});
  nx::MarketDataConfig md = config_for(snapshots, 1400, 4);  // a snapshot every 2 ms
  md.incremental = incremental.local_address().to_string();
  const ne::EngineConfig cfg = engine_config(kInstruments);
  const std::vector<nb::InstrumentCapacity> c = nb::capacities_of(cfg);
  auto ring = std::make_unique<nx::MdRing>();
  nx::MdPublisher md_pub(md, *ring);
  nx::SnapshotPublisher snap_pub(md, c, *ring);
  PublishingSink sink{&md_pub};
  ne::MatchingEngine<PublishingSink> engine(cfg, sink);

  // The consumer side: every incremental message, in order, kept for replays.
  struct WireMsg {
    np::MdMsgType type;
    std::uint64_t seq;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<WireMsg> feed;
  std::vector<std::uint8_t> buf(65536);
  auto read_incremental = [&] {
    for (;;) {
      const nn::RecvResult r = incremental.recv(buf);
      if (r.status == nn::RecvStatus::kNothing) return;
      ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
      const std::span<const std::uint8_t> pkt(buf.data(), r.bytes);
      np::PacketHeader h;
      ASSERT_EQ(np::parse_packet(pkt, np::Channel::kIncremental, h), np::PacketError::kNone);
      ASSERT_EQ(h.first_seq, feed.size() + 1) << "gap on the incremental channel";
      np::for_each_message(pkt, h, [&](np::MdMsgType t, const std::uint8_t* m, std::uint64_t seq) {
        feed.push_back({t, seq, std::vector<std::uint8_t>(m, m + np::md_message_length(t))});
      });
    }
  };

  std::mt19937_64 rng(7);
  auto below = [&](std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); };
  std::vector<std::pair<ne::ClientId, ne::ClientOrderId>> sent;
  for (int i = 0; i < 3000; ++i) {
    const auto inst = static_cast<ne::InstrumentId>(below(kInstruments));
    const ne::ClientId client = 1 + static_cast<ne::ClientId>(below(3));
    const std::uint64_t op = below(100);
    if (op < 60 || sent.empty()) {
      const ne::ClientOrderId id = static_cast<ne::ClientOrderId>(i + 1);
      const ne::OrderType type = below(10) == 0 ? ne::OrderType::kIoc : ne::OrderType::kLimit;
      engine.process(ne::make_new(inst, client, id, below(2) ? kBuy : kSell, type,
                                  95 + static_cast<ne::Price>(below(11)), 1 + static_cast<ne::Qty>(below(20))));
      sent.emplace_back(client, id);
    } else {
      const auto& [cl, id] = sent[below(sent.size())];
      if (op < 80) {
        engine.process(ne::make_cancel(inst, cl, id));
      } else {
        engine.process(
            ne::make_modify(inst, cl, id, 95 + static_cast<ne::Price>(below(11)), 1 + static_cast<ne::Qty>(below(20))));
      }
    }
    md_pub.flush();  // once per engine batch (here: per request)
    (void)snap_pub.do_work();
    read_incremental();
    snapshots.poll();
    if (HasFatalFailure()) return;
  }
  ASSERT_GT(engine.last_md_seq(), 3000u) << "the run must produce a real feed";
  // Let every instrument get a snapshot that starts after the last event.
  const std::uint64_t done = snap_pub.snapshots();
  snapshots.run_until([&] { (void)snap_pub.do_work(); },
                      [&] { return snap_pub.snapshots() >= done + 1 + kInstruments; });
  snapshots.poll(50);
  read_incremental();
  ASSERT_EQ(feed.size(), engine.last_md_seq());
  EXPECT_EQ(md_pub.send_drops(), 0u);
  EXPECT_EQ(snap_pub.book_rejects(), 0u);
  EXPECT_EQ(snap_pub.last_seq(), engine.last_md_seq());

  // Each instrument's messages are numbered 1, 2, 3... by instrument_seq, and
  // the counts end where the engine's do.
  std::map<std::uint32_t, std::uint64_t> last_of;
  for (const WireMsg& w : feed) {
    const auto [inst, iseq] = instrument_seq_of(w.type, w.bytes.data());
    ASSERT_EQ(iseq, last_of[inst] + 1) << "instrument " << inst << " at seq " << w.seq;
    last_of[inst] = iseq;
  }
  for (ne::InstrumentId inst = 0; inst < kInstruments; ++inst) {
    EXPECT_EQ(last_of[inst], engine.last_instrument_md_seq(inst)) << "instrument " << inst;
    EXPECT_EQ(snap_pub.last_instrument_seq(inst), engine.last_instrument_md_seq(inst)) << "instrument " << inst;
  }

  // The snapshot publisher's books and a consumer rebuilt from the feed both equal the engine's.
  nb::BookReplica consumer(c);
  for (const WireMsg& w : feed) ASSERT_TRUE(apply_wire(consumer, w.type, w.bytes.data())) << "seq " << w.seq;
  for (ne::InstrumentId inst = 0; inst < kInstruments; ++inst) {
    EXPECT_EQ(rows(snap_pub.books(), inst), rows_of_engine(engine, inst)) << "instrument " << inst;
    EXPECT_EQ(rows(consumer, inst), rows_of_engine(engine, inst)) << "instrument " << inst;
  }

  // Every snapshot equals the feed replayed up to its last_seq.
  ASSERT_GT(snapshots.complete.size(), 2u * kInstruments);
  std::size_t checked = 0;
  for (std::size_t k = 0; k < snapshots.complete.size(); k += 1 + snapshots.complete.size() / 40) {
    const Snapshot& s = snapshots.complete[k];
    nb::BookReplica replay(c);
    std::uint64_t instrument_seq = 0;  // the instrument's last message with seq <= last_seq (the audit)
    for (const WireMsg& w : feed) {
      if (w.seq > s.last_seq) break;
      ASSERT_TRUE(apply_wire(replay, w.type, w.bytes.data()));
      if (const auto [inst, iseq] = instrument_seq_of(w.type, w.bytes.data()); inst == s.instrument)
        instrument_seq = iseq;
    }
    EXPECT_EQ(rows(s.orders), rows(replay, s.instrument)) << "snapshot " << k << " at seq " << s.last_seq;
    EXPECT_EQ(s.instrument_seq, instrument_seq) << "snapshot " << k << " at seq " << s.last_seq;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  // The last snapshot of each instrument reflects the final state.
  for (ne::InstrumentId inst = 0; inst < kInstruments; ++inst) {
    const Snapshot* last = nullptr;
    for (const Snapshot& s : snapshots.complete)
      if (s.instrument == inst) last = &s;
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->last_seq, engine.last_md_seq());
    EXPECT_EQ(last->instrument_seq, engine.last_instrument_md_seq(inst));
    EXPECT_EQ(rows(last->orders), rows_of_engine(engine, inst));
  }
}

TEST(SnapshotPublisher, ShouldRejectABadConfigNamingTheKey) {
  auto ring = std::make_unique<nx::MdRing>();
  const auto c = caps(1);
  nx::MarketDataConfig good;
  good.snapshot = "239.255.78.138:39211";
  auto expect_error = [&](nx::MarketDataConfig cfg, const std::string& key) {
    try {
      nx::SnapshotPublisher pub(cfg, c, *ring);
      ADD_FAILURE() << "accepted a bad " << key;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  nx::MarketDataConfig cfg = good;
  cfg.snapshot_interval_ms = 0;
  expect_error(cfg, "market_data.snapshot_interval_ms");
  cfg = good;
  cfg.snapshot = "239.255.78.138:0";
  expect_error(cfg, "market_data.snapshot");
  cfg = good;
  cfg.mtu = 100;
  expect_error(cfg, "market_data.mtu");
  EXPECT_THROW(nx::SnapshotPublisher(good, std::vector<nb::InstrumentCapacity>{}, *ring), std::invalid_argument);
}

}  // namespace
