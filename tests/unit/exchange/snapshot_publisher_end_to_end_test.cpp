// SnapshotPublisher end to end, over real multicast on 127.0.0.1 (TTL 0):
// seeding from a recovered engine, and a real MatchingEngine -> MdPublisher
// -> ring -> SnapshotPublisher where both the incremental feed and every
// snapshot must agree with the engine, and every snapshot's instrument_seq
// with the feed (the snapshot audit of PROTOCOL.md §2.3).
#include "exchange/snapshots/snapshot_publisher.hpp"

#include "unit/exchange/snapshot_fixture.hpp"

namespace {

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

}  // namespace
