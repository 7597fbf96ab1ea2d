// The test venue and handler the MdConsumer tests share
// (md_consumer_test.cpp: ordering, duplicates, reordering, garbage, config;
// md_consumer_recovery_test.cpp: loss and per-instrument recovery):
// a seeded generator of valid order-by-order streams for 4 instruments
// (adds, modifies, deletes, trades, top of book; global seq and
// per-instrument instrument_seq) packed with PacketWriter into small packets
// of several messages, a reference BookReplica that applies each message as
// it is packed, and snapshots of the reference (Start / Orders / End with
// last_seq and instrument_seq) on the snapshot channel.
#pragma once

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

#include "client/md_consumer.hpp"

namespace nt = nanotick::client;
namespace np = nanotick::proto;
namespace nb = nanotick::book;

namespace md_consumer_fixture {

using nt::InstrumentId;
using nt::Side;
using nt::TimeNs;

constexpr std::uint32_t kInstruments = 4;
constexpr std::size_t kMtu = 176;  // 16-byte header + 2 to 4 messages: packets mix instruments
constexpr InstrumentId kA = 0;

inline std::vector<nb::InstrumentCapacity> capacities() {
  return std::vector<nb::InstrumentCapacity>(kInstruments, {256, 64});
}

struct Packet {
  np::Channel channel = np::Channel::kIncremental;
  std::vector<std::uint8_t> bytes;
  std::uint64_t first_seq = 0;
  std::uint16_t count = 0;
  std::uint32_t instruments = 0;  // bit i: the packet has messages of instrument i
};

inline bool same_book(const nb::BookReplica& a, const nb::BookReplica& b, InstrumentId inst) {
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

inline std::size_t reason(nt::RecoveryReason r) { return static_cast<std::size_t>(r); }

}  // namespace md_consumer_fixture
