// Market data packets (docs/PROTOCOL.md §2): every message's length and
// offsets as the §2.2 table gives them, MTU splitting, heartbeats and the
// rejection of every malformed datagram.
#include "proto/md_packet.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace np = nanotick::proto;

namespace {

np::MdOrder add(std::uint64_t id) {
  np::MdOrder m{};
  m.header = {sizeof(np::MdOrder), np::MdMsgType::kAddOrder, 1};
  m.instrument = 2;
  m.order_id = id;
  m.price = 100 + static_cast<std::int64_t>(id);
  m.qty = 10;
  m.instrument_seq = 1000 + id;
  return m;
}

np::MdTrade trade() {
  np::MdTrade t{};
  t.header = {sizeof(np::MdTrade), np::MdMsgType::kTrade, 2};
  t.instrument = 2;
  t.maker_order_id = 1;
  t.taker_order_id = 9;
  t.price = 101;
  t.qty = 3;
  t.instrument_seq = 77;
  return t;
}

std::vector<std::uint8_t> copy(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

// The little-endian unsigned value of bytes [at, at + n) of `m`'s encoding.
template <typename M>
std::uint64_t field(const M& m, std::size_t at, std::size_t n) {
  std::uint8_t bytes[sizeof(M)];
  std::memcpy(bytes, &m, sizeof(M));
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{bytes[at + i]} << (8 * i);
  return v;
}

TEST(MdPacket, EveryMessageHasTheLengthOfTheProtocolTable) {
  using T = np::MdMsgType;
  EXPECT_EQ(np::md_message_length(T::kAddOrder), 40u);
  EXPECT_EQ(np::md_message_length(T::kModifyOrder), 32u);
  EXPECT_EQ(np::md_message_length(T::kDeleteOrder), 24u);
  EXPECT_EQ(np::md_message_length(T::kTrade), 48u);
  EXPECT_EQ(np::md_message_length(T::kTopOfBook), 48u);
  EXPECT_EQ(np::md_message_length(T::kSnapshotStart), 32u);
  EXPECT_EQ(np::md_message_length(T::kSnapshotOrder), 40u);
  EXPECT_EQ(np::md_message_length(T::kSnapshotEnd), 32u);
  EXPECT_EQ(np::md_message_length(T::kInstrumentState), 24u);
  EXPECT_EQ(np::md_message_length(static_cast<T>(7)), 0u);
  EXPECT_EQ(np::kMaxMdMessageLength, 48u);
}

TEST(MdPacket, EveryMessageEndsWithItsInstrumentSeqAtTheTablesOffset) {
  const std::uint64_t s = 0x0102030405060708ULL;
  np::MdOrder add_order{};
  add_order.instrument_seq = s;
  EXPECT_EQ(field(add_order, 32, 8), s);
  np::MdModifyOrder modify{};
  modify.instrument_seq = s;
  EXPECT_EQ(field(modify, 24, 8), s);
  np::MdDeleteOrder del{};
  del.instrument_seq = s;
  EXPECT_EQ(field(del, 16, 8), s);
  np::MdTrade tr{};
  tr.instrument_seq = s;
  EXPECT_EQ(field(tr, 40, 8), s);
  np::MdTopOfBook top{};
  top.instrument_seq = s;
  EXPECT_EQ(field(top, 40, 8), s);
  np::MdInstrumentState state{};
  state.instrument = 5;
  state.state = np::TradingState::kHalted;
  state.instrument_seq = s;
  EXPECT_EQ(field(state, 4, 4), 5u);
  EXPECT_EQ(field(state, 8, 1), 1u);
  EXPECT_EQ(field(state, 16, 8), s);
  np::MdSnapshotBound bound{};
  bound.instrument = 3;
  bound.last_seq = 99;
  bound.orders = 7;
  bound.instrument_seq = s;
  EXPECT_EQ(field(bound, 4, 4), 3u);
  EXPECT_EQ(field(bound, 8, 8), 99u);
  EXPECT_EQ(field(bound, 16, 4), 7u);
  EXPECT_EQ(field(bound, 20, 4), 0u);  // trading_state open, 3 reserved
  bound.trading_state = np::TradingState::kHalted;
  EXPECT_EQ(field(bound, 20, 1), 1u);
  EXPECT_EQ(field(bound, 24, 8), s);
}

TEST(MdPacket, RoundTripKeepsOrderAndSequence) {
  np::PacketWriter w(np::Channel::kIncremental, 1400);
  ASSERT_TRUE(w.append(add(1), 41));
  ASSERT_TRUE(w.append(trade(), 42));
  ASSERT_TRUE(w.append(add(3), 43));
  const auto pkt = copy(w.finish());
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(pkt.size(), 16u + 40 + 48 + 40);
  np::PacketHeader h;
  ASSERT_EQ(np::parse_packet(pkt, np::Channel::kIncremental, h), np::PacketError::kNone);
  EXPECT_EQ(h.count, 3);
  EXPECT_EQ(h.first_seq, 41u);
  std::vector<std::uint64_t> seqs;
  std::vector<np::MdMsgType> types;
  np::for_each_message(pkt, h, [&](np::MdMsgType t, const std::uint8_t* p, std::uint64_t seq) {
    seqs.push_back(seq);
    types.push_back(t);
    if (t == np::MdMsgType::kTrade) {
      const auto tr = np::read_md<np::MdTrade>(p);
      EXPECT_EQ(tr.taker_order_id, 9u);
      EXPECT_EQ(tr.header.side, 2);
      EXPECT_EQ(tr.instrument_seq, 77u);
    } else {
      EXPECT_EQ(np::read_md<np::MdOrder>(p).instrument_seq, 1000 + np::read_md<np::MdOrder>(p).order_id);
    }
  });
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{41, 42, 43}));
  EXPECT_EQ(types,
            (std::vector<np::MdMsgType>{np::MdMsgType::kAddOrder, np::MdMsgType::kTrade, np::MdMsgType::kAddOrder}));
}

TEST(MdPacket, NeverExceedsTheMtuAndSplitsWithoutLoss) {
  for (const std::size_t mtu : {std::size_t{128}, std::size_t{200}, std::size_t{1400}}) {
    np::PacketWriter w(np::Channel::kIncremental, mtu);
    std::vector<std::vector<std::uint8_t>> packets;
    const std::uint64_t n = 1000;
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      if (!w.append(add(seq), seq)) {
        packets.push_back(copy(w.finish()));
        ASSERT_TRUE(w.append(add(seq), seq));
      }
    }
    packets.push_back(copy(w.finish()));
    std::uint64_t expect = 1;
    for (const auto& p : packets) {
      EXPECT_LE(p.size(), mtu);
      np::PacketHeader h;
      ASSERT_EQ(np::parse_packet(p, np::Channel::kIncremental, h), np::PacketError::kNone);
      ASSERT_EQ(h.first_seq, expect);
      np::for_each_message(p, h, [&](np::MdMsgType, const std::uint8_t* m, std::uint64_t seq) {
        EXPECT_EQ(np::read_md<np::MdOrder>(m).order_id, seq);
      });
      expect += h.count;
    }
    EXPECT_EQ(expect, n + 1) << "mtu " << mtu;
  }
}

TEST(MdPacket, HeartbeatAnnouncesTheNextSequence) {
  np::PacketWriter w(np::Channel::kSnapshot, 1400);
  const auto hb = copy(w.heartbeat(77));
  np::PacketHeader h;
  ASSERT_EQ(np::parse_packet(hb, np::Channel::kSnapshot, h), np::PacketError::kNone);
  EXPECT_EQ(h.count, 0);
  EXPECT_EQ(h.first_seq, 77u);
  EXPECT_EQ(hb.size(), sizeof(np::PacketHeader));
}

TEST(MdPacket, MtuOutOfRangeIsRefused) {
  EXPECT_THROW(np::PacketWriter(np::Channel::kIncremental, 127), std::invalid_argument);
  EXPECT_THROW(np::PacketWriter(np::Channel::kIncremental, 65001), std::invalid_argument);
  EXPECT_NO_THROW(np::PacketWriter(np::Channel::kIncremental, 128));
}

class MdPacketMalformed : public ::testing::Test {
 protected:
  void SetUp() override {
    np::PacketWriter w(np::Channel::kIncremental, 1400);
    ASSERT_TRUE(w.append(add(1), 5));
    ASSERT_TRUE(w.append(trade(), 6));
    good = copy(w.finish());
  }
  np::PacketError parse(const std::vector<std::uint8_t>& b, np::Channel c = np::Channel::kIncremental) {
    np::PacketHeader h;
    return np::parse_packet(b, c, h);
  }
  std::vector<std::uint8_t> good;
};

TEST_F(MdPacketMalformed, EachDefectHasItsOwnError) {
  EXPECT_EQ(parse(good), np::PacketError::kNone);
  EXPECT_EQ(parse(std::vector<std::uint8_t>(good.begin(), good.begin() + 15)), np::PacketError::kTooShort);

  auto b = good;
  b.pop_back();  // datagram shorter than the header says
  EXPECT_EQ(parse(b), np::PacketError::kLengthMismatch);

  b = good;
  b[3] = 9;
  EXPECT_EQ(parse(b), np::PacketError::kBadVersion);

  EXPECT_EQ(parse(good, np::Channel::kSnapshot), np::PacketError::kWrongChannel);

  b = good;
  b[16 + 2] = 77;  // first message: unknown type
  EXPECT_EQ(parse(b), np::PacketError::kUnknownMessageType);

  b = good;
  b[16 + 2] = static_cast<std::uint8_t>(np::MdMsgType::kSnapshotOrder);  // snapshot type on the incremental channel
  EXPECT_EQ(parse(b), np::PacketError::kUnknownMessageType);

  b = good;
  b[16] = 32;  // AddOrder claiming 32 bytes (its length before instrument_seq)
  EXPECT_EQ(parse(b), np::PacketError::kBadMessageLength);

  b = good;
  b[4] = 3;  // count 3, only 2 messages present
  EXPECT_EQ(parse(b), np::PacketError::kTruncatedMessage);

  b = good;
  b[4] = 1;  // count 1: a whole message left over
  EXPECT_EQ(parse(b), np::PacketError::kCountMismatch);
}

TEST_F(MdPacketMalformed, RandomCorruptionIsCaughtOrHarmless) {
  // Flip random bytes; whatever parse_packet accepts must be iterable within bounds.
  std::uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    auto b = good;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b[x % b.size()] = static_cast<std::uint8_t>(x >> 32);
    if (x & 1) b.resize(x % (b.size() + 1));
    np::PacketHeader h;
    if (np::parse_packet(b, np::Channel::kIncremental, h) != np::PacketError::kNone) continue;
    std::size_t total = sizeof(np::PacketHeader);
    np::for_each_message(
        b, h, [&](np::MdMsgType t, const std::uint8_t*, std::uint64_t) { total += np::md_message_length(t); });
    EXPECT_EQ(total, b.size());
  }
}

}  // namespace
