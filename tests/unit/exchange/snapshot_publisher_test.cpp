// SnapshotPublisher over real multicast on 127.0.0.1, TTL 0: the snapshot of
// an instrument after adds, trades, modifies and deletes (content, priority
// order, last_seq, the instrument's own instrument_seq), MTU splitting with
// the per-pass packet budget, a snapshot that stays consistent while events
// keep arriving during it, round robin over instruments, heartbeats
// announcing the next seq, config errors, no allocation in do_work. Seeding
// from a recovered engine and the end-to-end audit against a real engine:
// snapshot_publisher_end_to_end_test.cpp. Each test uses its own group in
// 239.255.78.128/25 and a kernel-picked port.
#include "exchange/snapshots/snapshot_publisher.hpp"

#include "unit/exchange/snapshot_fixture.hpp"

namespace {

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
