// MdConsumer against a test venue: a seeded generator of valid
// order-by-order streams for 4 instruments (adds, modifies, deletes,
// trades, top of book; global seq and per-instrument instrument_seq) packed
// with PacketWriter into small packets of several messages, a reference
// BookReplica that applies each message as it is packed, and snapshots of
// the reference (Start / Orders / End with last_seq and instrument_seq) on
// the snapshot channel. The network is the test: packets are delivered in
// order, twice, shuffled, dropped or not at all, and the consumer's books
// must end equal to the reference order by order.
#include "client/md_consumer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/allocation_counter.hpp"

namespace nt = nanotick::client;
namespace np = nanotick::proto;
namespace nb = nanotick::book;

namespace {

using nt::InstrumentId;
using nt::Side;
using nt::TimeNs;

constexpr std::uint32_t kInstruments = 4;
constexpr std::size_t kMtu = 176;  // 16-byte header + 2 to 4 messages: packets mix instruments
constexpr InstrumentId kA = 0;

std::vector<nb::InstrumentCapacity> capacities() {
  return std::vector<nb::InstrumentCapacity>(kInstruments, {256, 64});
}

struct Packet {
  np::Channel channel = np::Channel::kIncremental;
  std::vector<std::uint8_t> bytes;
  std::uint64_t first_seq = 0;
  std::uint16_t count = 0;
  std::uint32_t instruments = 0;  // bit i: the packet has messages of instrument i
};

bool same_book(const nb::BookReplica& a, const nb::BookReplica& b, InstrumentId inst) {
  std::vector<nb::RestingOrder> x, y;
  a.for_each_order(inst, [&](const nb::RestingOrder& o) { x.push_back(o); });
  b.for_each_order(inst, [&](const nb::RestingOrder& o) { y.push_back(o); });
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].order_id != y[i].order_id || x[i].price != y[i].price || x[i].qty != y[i].qty || x[i].side != y[i].side)
      return false;
  return true;
}

// ---- the test venue ---------------------------------------------------------------------

class TestVenue {
 public:
  explicit TestVenue(std::uint64_t seed)
      : rng_(seed),
        gen_(capacities()),
        ref_(capacities()),
        inc_(np::Channel::kIncremental, kMtu),
        snap_(np::Channel::kSnapshot, kMtu) {}

  // One full packet of the stream: requests are generated (for `only`, or
  // for random instruments) whenever no message is waiting to be packed.
  Packet next_packet(std::optional<InstrumentId> only = std::nullopt) {
    Packet p;
    for (;;) {
      if (pending_.empty()) generate_request(only ? *only : pick(kInstruments));
      if (!append(pending_.front())) break;
      p.instruments |= 1u << pending_.front().inst;
      pack(pending_.front());
      pending_.pop_front();
    }
    return finish(p);
  }

  // The venue halts or resumes `inst`: one InstrumentState, queued behind
  // what was generated (flush() or next_packet() sends it).
  void set_trading_state(InstrumentId inst, bool halted) {
    np::MdInstrumentState m{};
    m.header = {sizeof m, np::MdMsgType::kInstrumentState, 0};
    m.instrument = inst;
    m.state = halted ? np::TradingState::kHalted : np::TradingState::kOpen;
    queue(m, inst);
  }

  // Packs the messages already generated (the rest of a request), nothing new.
  std::vector<Packet> flush() {
    std::vector<Packet> out;
    while (!pending_.empty()) {
      Packet p;
      while (!pending_.empty() && append(pending_.front())) {
        p.instruments |= 1u << pending_.front().inst;
        pack(pending_.front());
        pending_.pop_front();
      }
      out.push_back(finish(p));
    }
    return out;
  }

  // Announces the next seq the channel will send.
  Packet heartbeat() {
    Packet p;
    const auto s = inc_.heartbeat(packed_seq_ + 1);
    p.bytes.assign(s.begin(), s.end());
    p.first_seq = packed_seq_ + 1;
    return p;
  }

  // The reference book of `inst` as of everything packed so far.
  std::vector<Packet> snapshot(InstrumentId inst) {
    np::MdSnapshotBound b{};
    b.header = {sizeof(np::MdSnapshotBound), np::MdMsgType::kSnapshotStart, 0};
    b.instrument = inst;
    b.last_seq = packed_seq_;
    b.orders = ref_.order_count(inst);
    b.instrument_seq = packed_iseq_[inst];
    b.trading_state = halted_[inst] ? np::TradingState::kHalted : np::TradingState::kOpen;
    std::vector<Packet> out;
    snap_append(b, out);
    ref_.for_each_order(inst, [&](const nb::RestingOrder& o) {
      np::MdOrder m{};
      m.header = {sizeof(np::MdOrder), np::MdMsgType::kSnapshotOrder, static_cast<std::uint8_t>(o.side)};
      m.instrument = inst;
      m.order_id = o.order_id;
      m.price = o.price;
      m.qty = o.qty;
      m.instrument_seq = b.instrument_seq;
      snap_append(m, out);
    });
    b.header.type = np::MdMsgType::kSnapshotEnd;
    snap_append(b, out);
    Packet p;
    p.channel = np::Channel::kSnapshot;
    const auto s = snap_.finish();
    p.bytes.assign(s.begin(), s.end());
    out.push_back(p);
    return out;
  }

  // A message the books cannot take (a delete of an order that never
  // rested) and a TopOfBook that does not match: both valid on the wire.
  void inject_unknown_delete(InstrumentId inst) {
    np::MdDeleteOrder m{};
    m.header = {sizeof m, np::MdMsgType::kDeleteOrder, 0};
    m.instrument = inst;
    m.order_id = 999'999'999;
    queue(m, inst, /*bogus=*/true);
  }
  void inject_wrong_top(InstrumentId inst) {
    np::MdTopOfBook m = top_of(inst);
    m.bid_qty += 1;
    m.bid_price = m.bid_qty == 1 ? 95 : m.bid_price;
    queue(m, inst, /*bogus=*/true);
  }

  const nb::BookReplica& reference() const { return ref_; }
  std::uint64_t packed_seq() const { return packed_seq_; }
  std::uint64_t trades_packed() const { return trades_packed_; }
  bool pending() const { return !pending_.empty(); }

 private:
  struct Msg {
    std::array<std::uint8_t, 48> bytes{};
    np::MdMsgType type{};
    std::uint64_t seq = 0;
    InstrumentId inst = 0;
    bool bogus = false;  // not applied to the reference
  };

  std::uint32_t pick(std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng_); }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }

  template <typename M>
  void queue(M m, InstrumentId inst, bool bogus = false) {
    m.instrument_seq = ++gen_iseq_[inst];
    Msg msg;
    std::memcpy(msg.bytes.data(), &m, sizeof m);
    msg.type = m.header.type;
    msg.seq = ++gen_seq_;
    msg.inst = inst;
    msg.bogus = bogus;
    pending_.push_back(msg);
  }

  np::MdTopOfBook top_of(InstrumentId inst) const {
    np::MdTopOfBook t{};
    t.header = {sizeof t, np::MdMsgType::kTopOfBook, 0};
    t.instrument = inst;
    if (const auto b = gen_.best(inst, Side::kBuy)) {
      t.bid_price = b->price;
      t.bid_qty = b->qty;
    }
    if (const auto a = gen_.best(inst, Side::kSell)) {
      t.ask_price = a->price;
      t.ask_qty = a->qty;
    }
    return t;
  }

  void forget(InstrumentId inst, nt::OrderId id) {
    auto& ids = live_[inst];
    const auto it = std::find(ids.begin(), ids.end(), id);
    ASSERT_NE(it, ids.end());
    *it = ids.back();
    ids.pop_back();
  }

  // One request of instrument `inst`: its messages applied to the
  // generator's book at once (the next request depends on them), then a
  // TopOfBook when the best levels changed.
  void generate_request(InstrumentId inst) {
    const np::MdTopOfBook before = top_of(inst);
    auto& ids = live_[inst];
    const std::uint32_t r = pick(100);
    const std::size_t n = ids.size();
    if (n == 0 || (n < 100 && r < 40)) {
      const auto side = pick(2) == 0 ? Side::kBuy : Side::kSell;
      np::MdOrder m{};
      m.header = {sizeof m, np::MdMsgType::kAddOrder, static_cast<std::uint8_t>(side)};
      m.instrument = inst;
      m.order_id = next_order_id_++;
      m.price = side == Side::kBuy ? between(90, 100) : between(101, 111);
      m.qty = between(1, 100);
      ASSERT_EQ(gen_.add(inst, m.order_id, side, m.price, m.qty), nb::BookResult::kOk);
      ids.push_back(m.order_id);
      queue(m, inst);
    } else if (r < 60) {
      const nt::OrderId id = ids[pick(static_cast<std::uint32_t>(n))];
      np::MdDeleteOrder m{};
      m.header = {sizeof m, np::MdMsgType::kDeleteOrder, 0};
      m.instrument = inst;
      m.order_id = id;
      ASSERT_EQ(gen_.remove(inst, id), nb::BookResult::kOk);
      forget(inst, id);
      queue(m, inst);
    } else if (r < 75) {
      const nt::OrderId id = ids[pick(static_cast<std::uint32_t>(n))];
      const nb::RestingOrder* o = gen_.instrument(inst)->find(id);
      if (o->qty == 1) return generate_request(inst);
      np::MdModifyOrder m{};
      m.header = {sizeof m, np::MdMsgType::kModifyOrder, 0};
      m.instrument = inst;
      m.order_id = id;
      m.qty = between(1, o->qty - 1);
      ASSERT_EQ(gen_.modify(inst, id, m.qty), nb::BookResult::kOk);
      queue(m, inst);
    } else {
      // An aggressor takes from the head of the opposite best level, maybe twice.
      const auto aggressor = pick(2) == 0 ? Side::kBuy : Side::kSell;
      const auto maker_side = aggressor == Side::kBuy ? Side::kSell : Side::kBuy;
      const nt::OrderId taker = next_order_id_++;
      for (std::uint32_t k = 0, trades = 1 + pick(2); k < trades; ++k) {
        std::optional<nb::RestingOrder> head;
        gen_.instrument(inst)->for_each_order(maker_side, [&](const nb::RestingOrder& o) {
          if (!head) head = o;
        });
        if (!head) break;
        np::MdTrade m{};
        m.header = {sizeof m, np::MdMsgType::kTrade, static_cast<std::uint8_t>(aggressor)};
        m.instrument = inst;
        m.maker_order_id = head->order_id;
        m.taker_order_id = taker;
        m.price = head->price;
        m.qty = between(1, head->qty);
        ASSERT_EQ(gen_.trade(inst, head->order_id, m.price, m.qty), nb::BookResult::kOk);
        if (m.qty == head->qty) forget(inst, head->order_id);
        queue(m, inst);
      }
      if (pending_.empty()) return generate_request(inst);
    }
    const np::MdTopOfBook after = top_of(inst);
    if (std::memcmp(&before.bid_price, &after.bid_price, 32) != 0) queue(after, inst);
  }

  bool append(const Msg& m) {
    switch (m.type) {
      case np::MdMsgType::kAddOrder: return inc_.append(np::read_md<np::MdOrder>(m.bytes.data()), m.seq);
      case np::MdMsgType::kModifyOrder: return inc_.append(np::read_md<np::MdModifyOrder>(m.bytes.data()), m.seq);
      case np::MdMsgType::kDeleteOrder: return inc_.append(np::read_md<np::MdDeleteOrder>(m.bytes.data()), m.seq);
      case np::MdMsgType::kTrade: return inc_.append(np::read_md<np::MdTrade>(m.bytes.data()), m.seq);
      case np::MdMsgType::kTopOfBook: return inc_.append(np::read_md<np::MdTopOfBook>(m.bytes.data()), m.seq);
      case np::MdMsgType::kInstrumentState:
        return inc_.append(np::read_md<np::MdInstrumentState>(m.bytes.data()), m.seq);
      default: ADD_FAILURE() << "not an incremental message"; return false;
    }
  }

  // The message is on the wire: the reference book takes it.
  void pack(const Msg& m) {
    packed_seq_ = m.seq;
    ++packed_iseq_[m.inst];
    if (m.bogus) return;
    nb::BookResult r = nb::BookResult::kOk;
    switch (m.type) {
      case np::MdMsgType::kAddOrder: {
        const auto o = np::read_md<np::MdOrder>(m.bytes.data());
        r = ref_.add(m.inst, o.order_id, static_cast<Side>(o.header.side), o.price, o.qty);
        break;
      }
      case np::MdMsgType::kModifyOrder: {
        const auto o = np::read_md<np::MdModifyOrder>(m.bytes.data());
        r = ref_.modify(m.inst, o.order_id, o.qty);
        break;
      }
      case np::MdMsgType::kDeleteOrder:
        r = ref_.remove(m.inst, np::read_md<np::MdDeleteOrder>(m.bytes.data()).order_id);
        break;
      case np::MdMsgType::kTrade: {
        const auto t = np::read_md<np::MdTrade>(m.bytes.data());
        r = ref_.trade(m.inst, t.maker_order_id, t.price, t.qty);
        ++trades_packed_;
        break;
      }
      case np::MdMsgType::kInstrumentState:
        halted_[m.inst] = np::read_md<np::MdInstrumentState>(m.bytes.data()).state == np::TradingState::kHalted;
        break;
      default: break;
    }
    EXPECT_EQ(r, nb::BookResult::kOk) << "reference refused seq " << m.seq;
  }

  Packet finish(Packet p) {
    p.count = inc_.count();
    const auto s = inc_.finish();
    p.bytes.assign(s.begin(), s.end());
    std::memcpy(&p.first_seq, p.bytes.data() + 8, 8);
    return p;
  }

  template <typename M>
  void snap_append(const M& m, std::vector<Packet>& out) {
    if (snap_.append(m, snap_seq_)) {
      ++snap_seq_;
      return;
    }
    Packet p;
    p.channel = np::Channel::kSnapshot;
    const auto s = snap_.finish();
    p.bytes.assign(s.begin(), s.end());
    out.push_back(p);
    ASSERT_TRUE(snap_.append(m, snap_seq_++));
  }

  std::mt19937_64 rng_;
  nb::BookReplica gen_;  // everything generated
  nb::BookReplica ref_;  // everything packed
  np::PacketWriter inc_;
  np::PacketWriter snap_;
  std::deque<Msg> pending_;  // generated, not packed yet
  std::array<std::vector<nt::OrderId>, kInstruments> live_;
  std::array<std::uint64_t, kInstruments> gen_iseq_{};
  std::array<std::uint64_t, kInstruments> packed_iseq_{};
  std::uint64_t gen_seq_ = 0;
  std::uint64_t packed_seq_ = 0;
  std::uint64_t snap_seq_ = 1;
  std::array<bool, kInstruments> halted_{};  // as packed

 public:
  // The exchange restarted: its snapshot channel numbers from 1 again.
  void restart_snapshot_channel() { snap_seq_ = 1; }

 private:
  std::uint64_t trades_packed_ = 0;
  nt::OrderId next_order_id_ = 1;
};

// ---- the handler ------------------------------------------------------------------------

// Counts every callback, checks their order (stale and live alternate,
// updates only for live instruments, trades before the book changes) and,
// when asked, that the book equals the reference at each update (whole
// packets only). Allocates nothing itself.
struct Recorder {
  const nb::BookReplica* books = nullptr;      // the consumer's
  const nb::BookReplica* expected = nullptr;   // the reference, checked at each update when set
  std::array<bool, kInstruments> live{};
  std::array<int, kInstruments> updates{};
  std::array<int, kInstruments> stale{};
  std::array<int, kInstruments> lives{};
  std::uint64_t trades = 0;
  int order_violations = 0;
  int trades_after_book = 0;
  int update_mismatches = 0;

  void on_trade(const nt::TradeEvent& t, std::uint64_t) {
    ++trades;
    // The maker still rests at the head of the best level with at least the
    // traded quantity: the book has not applied the trade yet.
    const auto maker = books->best(t.instrument, t.aggressor == Side::kBuy ? Side::kSell : Side::kBuy);
    if (!maker || maker->price != t.price || maker->qty < t.qty) ++trades_after_book;
  }
  void on_book_update(InstrumentId inst, std::uint64_t) {
    ++updates[inst];
    if (!live[inst]) ++order_violations;
    if (expected != nullptr && !same_book(*books, *expected, inst)) ++update_mismatches;
  }
  void on_instrument_stale(InstrumentId inst) {
    ++stale[inst];
    if (!live[inst]) ++order_violations;
    live[inst] = false;
  }
  void on_instrument_live(InstrumentId inst, TimeNs) {
    ++lives[inst];
    if (live[inst]) ++order_violations;
    live[inst] = true;
  }
  int total_stale() const { return stale[0] + stale[1] + stale[2] + stale[3]; }
  // Optional callback (MdConsumer calls it when the handler has it).
  std::vector<std::pair<InstrumentId, bool>> trading_states;
  void on_trading_state(InstrumentId inst, bool halted) { trading_states.emplace_back(inst, halted); }
};

using Consumer = nt::MdConsumer<Recorder>;

struct Fixture {
  explicit Fixture(std::uint64_t seed, nt::MdConsumerConfig config = {})
      : venue(seed), caps(capacities()), consumer(caps, config, recorder) {
    recorder.books = &consumer.books();
  }
  void deliver(const Packet& p) { consumer.on_datagram(p.channel, p.bytes, now, 0); }
  void deliver(const std::vector<Packet>& ps) {
    for (const Packet& p : ps) deliver(p);
  }
  // Late join: `packets` packets buffered, then a snapshot of every instrument.
  void bootstrap(int packets = 5) {
    for (int i = 0; i < packets; ++i) deliver(venue.next_packet());
    for (InstrumentId i = 0; i < kInstruments; ++i) deliver(venue.snapshot(i));
  }
  void expect_books_equal(const char* where) {
    for (InstrumentId i = 0; i < kInstruments; ++i)
      EXPECT_TRUE(same_book(consumer.books(), venue.reference(), i)) << where << ": instrument " << i;
  }
  std::uint64_t counter(const nanotick::core::Counter& c) const { return c.get(); }

  TestVenue venue;
  std::vector<nb::InstrumentCapacity> caps;
  Recorder recorder;
  Consumer consumer;
  TimeNs now = 1'000'000;
};

std::size_t reason(nt::RecoveryReason r) { return static_cast<std::size_t>(r); }

// ---- tests ------------------------------------------------------------------------------

TEST(MdConsumer, ShouldStartWithEveryInstrumentStaleAndGoLiveFromSnapshots) {
  Fixture f(1);
  for (InstrumentId i = 0; i < kInstruments; ++i) EXPECT_FALSE(f.consumer.is_live(i));
  EXPECT_EQ(f.consumer.stale_count(), kInstruments);
  f.bootstrap();
  for (InstrumentId i = 0; i < kInstruments; ++i) {
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
    EXPECT_EQ(f.recorder.lives[i], 1);
    EXPECT_EQ(f.recorder.stale[i], 0) << "start stale: no stale callback";
  }
  EXPECT_EQ(f.consumer.stale_count(), 0u);
  EXPECT_EQ(f.consumer.counters().recoveries_completed[reason(nt::RecoveryReason::kLateJoin)].get(), kInstruments);
  EXPECT_EQ(f.consumer.recovery_ns().count(), kInstruments);
  f.expect_books_equal("after bootstrap");
}

TEST(MdConsumer, ShouldMatchTheReferenceAfterEveryPacketInOrder) {
  Fixture f(2);
  f.bootstrap();
  f.recorder.expected = &f.venue.reference();
  const std::uint64_t trades_before = f.venue.trades_packed();
  for (int n = 0; n < 400; ++n) {
    const Packet p = f.venue.next_packet();
    int updates_before = 0, updates_after = 0;
    for (int u : f.recorder.updates) updates_before += u;
    f.deliver(p);
    for (int u : f.recorder.updates) updates_after += u;
    ASSERT_EQ(updates_after - updates_before, __builtin_popcount(p.instruments)) << "one update per instrument touched";
    for (InstrumentId i = 0; i < kInstruments; ++i)
      ASSERT_TRUE(same_book(f.consumer.books(), f.venue.reference(), i)) << "packet " << n << " instrument " << i;
    if (n % 37 == 0) f.deliver(f.venue.snapshot(static_cast<InstrumentId>(n % kInstruments)));  // audited, ignored
  }
  const auto& c = f.consumer.counters();
  EXPECT_EQ(f.recorder.update_mismatches, 0) << "the handler only ever sees whole packets";
  EXPECT_EQ(f.recorder.trades, f.venue.trades_packed() - trades_before);
  EXPECT_GT(f.recorder.trades, 0u);
  EXPECT_EQ(f.recorder.trades_after_book, 0) << "on_trade comes before the book applies the trade";
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
  EXPECT_EQ(c.gaps.get(), 0u);
  EXPECT_EQ(c.duplicates.get(), 0u);
  EXPECT_EQ(c.book_rejects.get(), 0u);
  EXPECT_EQ(c.top_of_book_mismatches.get(), 0u);
  EXPECT_GT(c.audits.get(), 0u);
  EXPECT_EQ(c.audit_mismatches.get(), 0u);
  EXPECT_GT(c.snapshots_ignored_live.get(), 0u);
}

TEST(MdConsumer, ShouldDropDuplicatePackets) {
  Fixture f(3);
  f.bootstrap();
  std::vector<Packet> sent;
  std::uint64_t dups = 0;
  for (int n = 0; n < 200; ++n) {
    sent.push_back(f.venue.next_packet());
    f.deliver(sent.back());
    f.deliver(sent.back());
    ++dups;
    if (n >= 5 && n % 10 == 0) {
      f.deliver(sent[sent.size() - 5]);
      ++dups;
    }
  }
  f.expect_books_equal("duplicates");
  EXPECT_EQ(f.consumer.counters().duplicates.get(), dups);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
}

TEST(MdConsumer, ShouldApplyPacketsReorderedInsideTheWindowWithoutRecovery) {
  Fixture f(4);
  f.bootstrap();
  std::mt19937_64 rng(44);
  for (int block = 0; block < 40; ++block) {
    std::vector<Packet> ps;
    const int size = 2 + static_cast<int>(rng() % 7);  // up to 8: the first stays the hole, 7 held
    for (int i = 0; i < size; ++i) ps.push_back(f.venue.next_packet());
    if (block % 5 == 0) ps.push_back(f.venue.heartbeat());
    std::shuffle(ps.begin(), ps.end(), rng);
    for (const Packet& p : ps) {
      f.deliver(p);
      f.now += 1000;
      f.consumer.on_timer(f.now);  // well inside 200 us
    }
    f.expect_books_equal("after a shuffled block");
    EXPECT_EQ(f.consumer.held_packets(), 0u);
  }
  const auto& c = f.consumer.counters();
  EXPECT_GT(c.reordered.get(), 0u);
  EXPECT_EQ(c.gaps.get(), 0u);
  EXPECT_EQ(c.messages_lost.get(), 0u);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
}

TEST(MdConsumer, ShouldWaitReorderNsBeforeGivingUpAHole) {
  Fixture f(5);
  f.bootstrap();
  f.venue.next_packet();  // lost
  f.deliver(f.venue.next_packet());
  EXPECT_EQ(f.consumer.held_packets(), 1u);
  f.consumer.on_timer(f.now + 199'999);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
  f.consumer.on_timer(f.now + 200'000);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  EXPECT_EQ(f.consumer.held_packets(), 0u);
}

TEST(MdConsumer, ShouldGiveUpTheHoleWhenTheWindowIsFull) {
  nt::MdConsumerConfig config;
  config.reorder_packets = 2;
  Fixture f(6, config);
  f.bootstrap();
  const Packet lost = f.venue.next_packet();
  f.deliver(f.venue.next_packet());
  f.deliver(f.venue.next_packet());
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
  f.deliver(f.venue.next_packet());  // no timer at all: the full window gives up the hole
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  EXPECT_EQ(f.consumer.counters().messages_lost.get(), lost.count);
  EXPECT_EQ(f.consumer.next_seq(), f.venue.packed_seq() + 1);
}

TEST(MdConsumer, ShouldRecoverOnlyTheInstrumentALostPacketTouched) {
  Fixture f(7);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  const Packet lost = f.venue.next_packet(kA);
  ASSERT_EQ(lost.instruments, 1u << kA);
  const std::array<int, kInstruments> updates_at_loss = f.recorder.updates;
  int updates_while_a_stale = 0;
  for (int n = 0; n < 60; ++n) {
    const bool a_stale = !f.consumer.is_live(kA);
    const int before = f.recorder.updates[1] + f.recorder.updates[2] + f.recorder.updates[3];
    f.deliver(f.venue.next_packet());
    if (a_stale)
      updates_while_a_stale += f.recorder.updates[1] + f.recorder.updates[2] + f.recorder.updates[3] - before;
    f.now += 50'000;
    f.consumer.on_timer(f.now);
  }
  EXPECT_FALSE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.stale[kA], 1);
  for (InstrumentId i = 1; i < kInstruments; ++i) {
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
    EXPECT_EQ(f.recorder.stale[i], 0) << "healthy instruments are not paused: " << i;
    EXPECT_GT(f.recorder.updates[i], updates_at_loss[i]) << i;
    EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), i)) << i;
  }
  EXPECT_GT(updates_while_a_stale, 0) << "B, C, D kept receiving updates while A recovered";
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.messages_lost.get(), lost.count);
  EXPECT_EQ(c.instrument_seq_jumps.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kSeqJump)].get(), 1u);
  EXPECT_GT(f.consumer.buffered_messages(), 0u);

  f.now += 1'000'000;
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.lives[kA], 2);
  EXPECT_EQ(c.recoveries_completed[reason(nt::RecoveryReason::kSeqJump)].get(), 1u);
  EXPECT_EQ(f.consumer.buffered_messages(), 0u);
  EXPECT_EQ(f.recorder.order_violations, 0);
  f.expect_books_equal("after A's recovery");
  for (int n = 0; n < 50; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("flowing again");
}

TEST(MdConsumer, ShouldJoinLateAndUseOnlySnapshotsThatReachItsStart) {
  Fixture f(8);
  for (int n = 0; n < 100; ++n) f.venue.next_packet();  // before we joined
  const std::vector<Packet> before_start = f.venue.snapshot(kA);
  const std::vector<Packet> too_old = f.venue.snapshot(1);
  for (int n = 0; n < 5; ++n) f.venue.next_packet(1);  // instrument 1 moves on, unseen
  f.venue.flush();                                      // packed, never delivered

  f.deliver(before_start);  // the incremental channel has not started: unusable
  EXPECT_EQ(f.consumer.counters().snapshots_before_start.get(), 1u);
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(too_old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(1));
  EXPECT_EQ(f.recorder.total_stale(), 0);
  for (int u : f.recorder.updates) EXPECT_EQ(u, 0) << "no update for a stale instrument";

  for (InstrumentId i = 0; i < kInstruments; ++i) {
    for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet());
    f.now += 10'000;
    f.deliver(f.venue.snapshot(i));
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
  }
  f.expect_books_equal("after the late join");
  for (int n = 0; n < 50; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("flowing");
  for (InstrumentId i = 0; i < kInstruments; ++i) EXPECT_EQ(f.recorder.lives[i], 1);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
  EXPECT_EQ(f.consumer.recovery_ns().count(), kInstruments);
  EXPECT_GT(f.consumer.recovery_ns().max(), 0u);
}

// An instrument in recovery that has buffered nothing cannot tell from its
// own seq what it missed: a snapshot must reach past the channel's start
// and past every hole since, or messages lost there are silently missing.
TEST(MdConsumer, ShouldNotUseASnapshotOlderThanTheJoinOfAnInstrumentWithNothingBuffered) {
  Fixture f(14);
  constexpr InstrumentId kX = 3;
  for (int n = 0; n < 10; ++n) f.venue.next_packet();
  const std::vector<Packet> old = f.venue.snapshot(kX);
  for (int n = 0; n < 2; ++n) f.venue.next_packet(kX);  // missed: before we joined
  f.venue.flush();
  for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet(0));  // nothing of X's
  f.deliver(f.venue.flush());
  f.deliver(old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

TEST(MdConsumer, ShouldNotUseASnapshotOlderThanAHoleWhileNothingIsBuffered) {
  Fixture f(15);
  constexpr InstrumentId kX = 3;
  f.deliver(f.venue.next_packet(0));  // the channel starts at seq 1: nothing missed yet
  f.deliver(f.venue.flush());
  const std::vector<Packet> old = f.venue.snapshot(kX);
  f.venue.next_packet(kX);  // lost: X's messages, while X buffers nothing
  f.venue.flush();
  f.deliver(f.venue.next_packet(0));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

// The buffer must continue the snapshot without a hole: a recovering
// instrument that lost messages in a gap restarts its buffer after them,
// and a snapshot from before the loss no longer fits.
TEST(MdConsumer, ShouldRestartTheBufferAfterAHoleInTheInstrumentsOwnSeq) {
  Fixture f(16);
  constexpr InstrumentId kX = 2;
  f.deliver(f.venue.next_packet(kX));
  f.deliver(f.venue.flush());
  const std::vector<Packet> old = f.venue.snapshot(kX);
  f.venue.next_packet(kX);  // lost
  f.venue.flush();
  f.deliver(f.venue.next_packet(kX));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.buffer_restarts.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(c.snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

// A snapshot may overtake the incremental packets it reflects (two
// channels, two paths): those packets, arriving after it, are skipped.
TEST(MdConsumer, ShouldSkipIncrementalsTheLoadedSnapshotAlreadyReflects) {
  Fixture f(17);
  constexpr InstrumentId kX = 2;
  f.deliver(f.venue.next_packet(kX));  // late join: X buffers
  std::vector<Packet> behind;
  for (int n = 0; n < 3; ++n) behind.push_back(f.venue.next_packet(kX));
  for (Packet& p : f.venue.flush()) behind.push_back(std::move(p));
  f.deliver(f.venue.snapshot(kX));
  ASSERT_TRUE(f.consumer.is_live(kX));
  f.deliver(behind);
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_EQ(f.recorder.stale[kX], 0);
  EXPECT_GT(f.consumer.counters().skipped_in_snapshot.get(), 0u);
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
  EXPECT_EQ(f.recorder.stale[kX], 0);
}

TEST(MdConsumer, ShouldCatchALostLastPacketBeforeAQuietPeriodWithTheSnapshotAudit) {
  Fixture f(9);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  std::uint64_t lost = f.venue.next_packet(kA).count;
  for (const Packet& p : f.venue.flush()) lost += p.count;  // the rest of A's request: lost too
  // Quiet: only a heartbeat, which shows the hole but not whose it was.
  f.deliver(f.venue.heartbeat());
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.messages_lost.get(), lost);
  EXPECT_TRUE(f.consumer.is_live(kA)) << "nothing of A's arrived since: its seq alone cannot tell";

  f.deliver(f.venue.snapshot(1));  // B agrees with its snapshot
  EXPECT_EQ(c.audits.get(), 1u);
  EXPECT_EQ(c.audit_mismatches.get(), 0u);
  f.deliver(f.venue.snapshot(kA));
  EXPECT_EQ(c.audit_mismatches.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kAuditMismatch)].get(), 1u);
  EXPECT_EQ(c.recoveries_completed[reason(nt::RecoveryReason::kAuditMismatch)].get(), 1u)
      << "recovered from the very snapshot that caught it";
  EXPECT_EQ(f.recorder.stale[kA], 1);
  EXPECT_EQ(f.recorder.lives[kA], 2);
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.order_violations, 0);
  f.expect_books_equal("after the audit");
}

TEST(MdConsumer, ShouldFollowTheSnapshotChannelAfterItStartsOverAtAnExchangeRestart) {
  Fixture f(23);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i) f.deliver(f.venue.snapshot(i));  // the channel's seq is well past 1
  f.deliver(f.venue.flush());
  (void)f.venue.next_packet(kA);  // lost, then quiet
  (void)f.venue.flush();
  f.deliver(f.venue.heartbeat());
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  f.venue.restart_snapshot_channel();
  f.deliver(f.venue.snapshot(kA));  // seq 1 again: not a duplicate
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.snapshot_channel_restarts.get(), 1u);
  EXPECT_EQ(c.audit_mismatches.get(), 1u) << "the restarted channel's snapshot still audits";
  EXPECT_TRUE(f.consumer.is_live(kA));
  f.expect_books_equal("after the restart");
}

TEST(MdConsumer, ShouldWaitForALaterSnapshotAfterTheBufferOverflowed) {
  nt::MdConsumerConfig config;
  config.buffer_messages = 8;
  Fixture f(10, config);
  f.bootstrap(1);
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  f.venue.next_packet(kA);  // lost
  f.deliver(f.venue.next_packet(kA));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  ASSERT_FALSE(f.consumer.is_live(kA));
  const std::vector<Packet> old = f.venue.snapshot(kA);  // delivered too late: the buffer overflows first
  for (int n = 0; n < 6; ++n) f.deliver(f.venue.next_packet(kA));
  const auto& c = f.consumer.counters();
  EXPECT_GE(c.buffer_overflows.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(c.snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kA)) << "the buffer lost messages after that snapshot";
  for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(c.snapshots_used.get(), kInstruments + 1u);
  f.expect_books_equal("after the later snapshot");
  EXPECT_EQ(f.recorder.order_violations, 0);
}

TEST(MdConsumer, ShouldRecoverAnInstrumentWhoseBookRefusesAMessageOrDisagreesWithTopOfBook) {
  Fixture f(11);
  f.bootstrap();
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  f.venue.inject_unknown_delete(kA);
  f.deliver(f.venue.flush());
  const auto& c = f.consumer.counters();
  EXPECT_FALSE(f.consumer.is_live(kA));
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kBookReject)].get(), 1u);
  EXPECT_EQ(f.consumer.books().rejected(nb::BookResult::kUnknownOrder), 1u);
  for (int n = 0; n < 5; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));

  f.deliver(f.venue.flush());
  f.venue.inject_wrong_top(2);
  f.deliver(f.venue.flush());
  EXPECT_FALSE(f.consumer.is_live(2));
  EXPECT_EQ(c.top_of_book_mismatches.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kTopOfBookMismatch)].get(), 1u);
  f.deliver(f.venue.snapshot(2));
  EXPECT_TRUE(f.consumer.is_live(2));
  EXPECT_EQ(f.recorder.stale[1] + f.recorder.stale[3], 0);
  f.expect_books_equal("after both recoveries");
}

TEST(MdConsumer, ShouldCountGarbageAndTruncatedDatagramsAndStayUnharmed) {
  Fixture f(12);
  f.bootstrap();
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  const auto& c = f.consumer.counters();
  const auto invalid = [&](np::PacketError e) { return c.invalid[static_cast<std::size_t>(e)].get(); };
  const Packet good = f.venue.next_packet();
  ASSERT_GE(good.count, 2u);
  const std::array<int, kInstruments> updates = f.recorder.updates;

  const std::vector<std::uint8_t> tiny(5, 0xAB);
  f.consumer.on_datagram(np::Channel::kIncremental, tiny, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTooShort), 1u);

  std::vector<std::uint8_t> cut(good.bytes.begin(), good.bytes.end() - 10);
  f.consumer.on_datagram(np::Channel::kIncremental, cut, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kLengthMismatch), 1u);
  const auto cut_length = static_cast<std::uint16_t>(cut.size());
  std::memcpy(cut.data(), &cut_length, 2);  // a consistent header over a cut last message
  f.consumer.on_datagram(np::Channel::kIncremental, cut, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTruncatedMessage), 1u);

  std::vector<std::uint8_t> bad = good.bytes;
  bad[3] = 2;
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kBadVersion), 1u);
  bad = good.bytes;
  bad[16 + 2] = 99;  // first message's type
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kUnknownMessageType), 1u);
  bad = good.bytes;
  bad[16] = static_cast<std::uint8_t>(bad[16] + 8);  // first message's length
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kBadMessageLength), 1u);
  bad = good.bytes;
  bad[4] = static_cast<std::uint8_t>(bad[4] + 1);  // count
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTruncatedMessage), 2u);
  f.consumer.on_datagram(np::Channel::kSnapshot, good.bytes, f.now, 0);
  f.consumer.on_datagram(static_cast<np::Channel>(7), good.bytes, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kWrongChannel), 2u);
  bad = good.bytes;
  std::memset(bad.data() + 8, 0, 8);  // first_seq 0
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  std::memset(bad.data() + 8, 0xFF, 8);  // first_seq + count overflows
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(c.bad_seq.get(), 2u);

  std::mt19937_64 rng(1212);
  std::uint64_t random_garbage = 0;
  for (int n = 0; n < 300; ++n) {
    std::vector<std::uint8_t> junk(1 + rng() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    f.consumer.on_datagram(n % 2 == 0 ? np::Channel::kIncremental : np::Channel::kSnapshot, junk, f.now, 0);
    ++random_garbage;
  }
  std::uint64_t total_invalid = 0;
  for (const auto& x : c.invalid) total_invalid += x.get();
  EXPECT_EQ(total_invalid, 9u + random_garbage);
  EXPECT_EQ(f.recorder.updates, updates) << "garbage reaches no handler";
  EXPECT_EQ(f.recorder.total_stale(), 0);

  f.deliver(good);
  for (int n = 0; n < 30; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("after the garbage");
  EXPECT_EQ(c.gaps.get(), 0u);
}

// Drops, duplicates, reordering beyond the window, lost snapshot packets
// and heartbeats, over several seeds: after a quiet period and one
// snapshot cycle every instrument is live and equal to the reference.
TEST(MdConsumer, ShouldConvergeUnderRandomLossDuplicationAndReordering) {
  for (std::uint64_t seed = 100; seed < 106; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Fixture f(seed);
    std::mt19937_64 rng(seed * 7919);
    const auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    std::vector<std::pair<int, Packet>> delayed;  // (packets to wait, packet)
    std::deque<std::pair<int, Packet>> snapshots;  // (packet number when due, packet)
    int snapshot_due = 0;
    InstrumentId next_snapshot = 0;
    for (int n = 0; n < 1500; ++n) {
      f.now += 20'000;
      Packet p = f.venue.next_packet();
      if (chance(4)) {
        // lost
      } else if (chance(8)) {
        delayed.emplace_back(1 + static_cast<int>(rng() % 12), p);  // beyond the window sometimes
      } else {
        f.deliver(p);
        if (chance(4)) f.deliver(p);
      }
      for (auto it = delayed.begin(); it != delayed.end();) {
        if (--it->first <= 0) {
          f.deliver(it->second);
          it = delayed.erase(it);
        } else {
          ++it;
        }
      }
      if (n % 25 == 0) f.deliver(f.venue.heartbeat());
      if (n % 9 == 0) {
        // Some snapshots arrive late (behind the incrementals they describe),
        // in the channel's order all the same.
        snapshot_due = std::max(snapshot_due, chance(30) ? n + static_cast<int>(rng() % 30) : n);
        for (Packet& s : f.venue.snapshot(next_snapshot))
          if (!chance(3)) snapshots.emplace_back(snapshot_due, std::move(s));
        next_snapshot = (next_snapshot + 1) % kInstruments;
      }
      while (!snapshots.empty() && snapshots.front().first <= n) {
        f.deliver(snapshots.front().second);
        snapshots.pop_front();
      }
      f.consumer.on_timer(f.now);
    }
    for (const auto& d : delayed) f.deliver(d.second);
    for (const auto& s : snapshots) f.deliver(s.second);
    f.deliver(f.venue.flush());
    f.deliver(f.venue.heartbeat());
    f.now += 1'000'000;
    f.consumer.on_timer(f.now);
    for (InstrumentId i = 0; i < kInstruments; ++i) f.deliver(f.venue.snapshot(i));
    for (InstrumentId i = 0; i < kInstruments; ++i) {
      EXPECT_TRUE(f.consumer.is_live(i)) << i;
      EXPECT_EQ(f.recorder.lives[i], f.recorder.stale[i] + 1) << i;
    }
    f.expect_books_equal("converged");
    const auto& c = f.consumer.counters();
    EXPECT_GT(c.gaps.get(), 0u);
    EXPECT_GT(c.reordered.get(), 0u);
    EXPECT_GT(c.duplicates.get(), 0u);
    EXPECT_GT(c.snapshots_too_old.get(), 0u) << "late snapshots were refused, not loaded";
    EXPECT_GT(c.skipped_in_snapshot.get(), 0u);
    EXPECT_GT(f.recorder.total_stale(), 0);
    EXPECT_EQ(f.recorder.order_violations, 0);
    EXPECT_EQ(f.consumer.held_packets(), 0u);
    for (int n = 0; n < 30; ++n) f.deliver(f.venue.next_packet());
    f.expect_books_equal("flowing after convergence");
  }
}

TEST(MdConsumer, ShouldNotAllocateAfterConstruction) {
  Fixture f(13, [] {
    nt::MdConsumerConfig c;
    c.buffer_messages = 64;
    return c;
  }());
  // Everything prepared first: a late join, in-order flow, a loss and its
  // recovery, reordering, duplicates, an overflow, garbage.
  std::vector<Packet> script;
  for (int n = 0; n < 3; ++n) script.push_back(f.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i)
    for (Packet& p : f.venue.snapshot(i)) script.push_back(std::move(p));
  for (int n = 0; n < 100; ++n) script.push_back(f.venue.next_packet());
  for (Packet& p : f.venue.flush()) script.push_back(std::move(p));
  f.venue.next_packet(kA);  // lost
  for (int n = 0; n < 30; ++n) script.push_back(f.venue.next_packet(kA));  // holes, overflow
  for (int n = 0; n < 10; ++n) script.push_back(f.venue.next_packet());
  std::swap(script[script.size() - 2], script[script.size() - 4]);
  script.push_back(script[script.size() - 3]);
  for (Packet& p : f.venue.snapshot(kA)) script.push_back(std::move(p));
  Packet junk = script.back();
  junk.bytes[3] = 9;
  script.push_back(junk);

  nanotick::test::AllocationScope scope;
  for (const Packet& p : script) {
    f.deliver(p);
    f.now += 10'000;  // a hole is given up when the window fills, reordering stays inside it
    f.consumer.on_timer(f.now);
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GE(f.consumer.counters().buffer_overflows.get(), 1u);
  EXPECT_TRUE(f.consumer.is_live(kA));
  f.expect_books_equal("after the script");
}

TEST(MdConsumerConfig, ShouldRejectEachBadFieldByName) {
  const auto message = [](nt::MdConsumerConfig c) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nt::MdConsumerConfig c;
  EXPECT_EQ(message(c), "");
  c.reorder_packets = nt::MdConsumerConfig::kMaxReorderPackets + 1;
  EXPECT_NE(message(c).find("reorder_packets"), std::string::npos);
  c = {};
  c.reorder_ns = nt::MdConsumerConfig::kMaxReorderNs + 1;
  EXPECT_NE(message(c).find("reorder_ns"), std::string::npos);
  c = {};
  c.buffer_messages = 0;
  EXPECT_NE(message(c).find("buffer_messages"), std::string::npos);
  c.buffer_messages = nt::MdConsumerConfig::kMaxBufferMessages + 1;
  EXPECT_NE(message(c).find("buffer_messages"), std::string::npos);

  Recorder r;
  const auto caps = capacities();
  c = {};
  c.buffer_messages = 0;
  EXPECT_THROW({ Consumer bad(caps, c, r); }, std::invalid_argument);
  EXPECT_THROW({ Consumer none(std::span<const nb::InstrumentCapacity>(), nt::MdConsumerConfig{}, r); },
               std::invalid_argument);
  c = {};
  c.reorder_packets = 0;  // no holding: every hole is a gap at once
  Consumer no_window(caps, c, r);
  EXPECT_EQ(no_window.held_packets(), 0u);
}

}  // namespace

namespace {

TEST(MdConsumer, ShouldFollowTheInstrumentsTradingStateFromTheFeedAndFromSnapshots) {
  Fixture f(77);
  f.bootstrap();
  f.venue.set_trading_state(1, true);
  f.deliver(f.venue.flush());
  EXPECT_TRUE(f.consumer.halted(1));
  EXPECT_FALSE(f.consumer.halted(0));
  EXPECT_TRUE(f.consumer.is_live(1)) << "an InstrumentState follows on like any message of its instrument";
  ASSERT_EQ(f.recorder.trading_states.size(), 1u);
  EXPECT_EQ(f.recorder.trading_states[0], (std::pair<InstrumentId, bool>{1, true}));
  for (int i = 0; i < 20; ++i) f.deliver(f.venue.next_packet());
  f.venue.set_trading_state(1, false);
  f.deliver(f.venue.flush());
  EXPECT_FALSE(f.consumer.halted(1));
  EXPECT_EQ(f.recorder.trading_states.size(), 2u);

  // A late joiner learns a halt from the instrument's snapshot.
  Fixture late(78);
  late.venue.set_trading_state(2, true);
  for (int i = 0; i < 5; ++i) late.deliver(late.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i) late.deliver(late.venue.snapshot(i));
  EXPECT_TRUE(late.consumer.is_live(2));
  EXPECT_TRUE(late.consumer.halted(2));
  EXPECT_FALSE(late.consumer.halted(3));
}

}  // namespace
