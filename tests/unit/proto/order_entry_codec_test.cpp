// Order-entry framing (docs/PROTOCOL.md §1.5 rules 1-4) and message round trips.
#include "proto/order_entry_codec.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace np = nanotick::proto;

namespace {

template <typename M>
std::vector<std::uint8_t> bytes_of(const M& m) {
  std::vector<std::uint8_t> b(sizeof(M));
  np::write_message(m, b.data());
  return b;
}

np::NewOrder sample_new_order() {
  auto m = np::make_message<np::NewOrder>(7);
  m.client_order_id = 0x0000'1234'5678'9abcULL;
  m.instrument = 3;
  m.side = 2;
  m.order_type = 1;
  m.stp = 3;
  m.price = -42;
  m.qty = 1'000'000;
  return m;
}

TEST(OrderEntryCodec, EveryClientMessageRoundTrips) {
  auto logon = np::make_message<np::Logon>(1);
  logon.client_id = 65535;
  logon.heartbeat_ms = 250;
  std::memcpy(logon.credential, "abcdefghijklmnopqrstuvwxyz012345", 32);
  const auto b = bytes_of(logon);
  const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
  ASSERT_EQ(f.status, np::FrameStatus::kMessage);
  EXPECT_EQ(f.length, 48u);
  EXPECT_EQ(f.header.type, np::MsgType::kLogon);
  EXPECT_EQ(f.header.seq, 1u);
  const auto back = np::read_message<np::Logon>(b.data());
  EXPECT_EQ(back.client_id, 65535u);
  EXPECT_EQ(back.heartbeat_ms, 250u);
  EXPECT_EQ(std::memcmp(back.credential, logon.credential, 32), 0);

  const auto no = sample_new_order();
  const auto nb = bytes_of(no);
  ASSERT_EQ(np::next_frame(nb, np::Direction::kFromClient).status, np::FrameStatus::kMessage);
  EXPECT_EQ(std::memcmp(&no, nb.data(), sizeof no), 0);
  const auto no2 = np::read_message<np::NewOrder>(nb.data());
  EXPECT_EQ(no2.client_order_id, no.client_order_id);
  EXPECT_EQ(no2.price, -42);
  EXPECT_EQ(no2.qty, 1'000'000);
  EXPECT_EQ(no2.stp, 3);

  for (const np::MsgType t :
       {np::MsgType::kLogout, np::MsgType::kHeartbeat, np::MsgType::kCancelOrder, np::MsgType::kModifyOrder}) {
    std::vector<std::uint8_t> m(np::message_length(t), 0);
    const np::Header h{static_cast<std::uint16_t>(m.size()), t, np::kProtocolVersion, 9};
    std::memcpy(m.data(), &h, sizeof h);
    const np::Frame g = np::next_frame(m, np::Direction::kFromClient);
    EXPECT_EQ(g.status, np::FrameStatus::kMessage) << np::to_string(t);
    EXPECT_EQ(g.length, m.size());
  }
}

TEST(OrderEntryCodec, LittleEndianOnTheWire) {
  const auto b = bytes_of(sample_new_order());
  EXPECT_EQ(b[0], 40);  // length low byte
  EXPECT_EQ(b[1], 0);
  EXPECT_EQ(b[2], 10);  // NewOrder
  EXPECT_EQ(b[3], 1);   // version
  EXPECT_EQ(b[4], 7);   // seq
  EXPECT_EQ(b[8], 0xbc);  // client_order_id, least significant byte first
  EXPECT_EQ(b[16], 3);    // instrument
  EXPECT_EQ(b[24], 0xd6); // -42 two's complement
  EXPECT_EQ(b[31], 0xff);
}

TEST(OrderEntryCodec, PartialMessagesNeedMore) {
  const auto b = bytes_of(sample_new_order());
  for (std::size_t n = 0; n < b.size(); ++n) {
    const np::Frame f = np::next_frame(std::span(b.data(), n), np::Direction::kFromClient);
    EXPECT_EQ(f.status, np::FrameStatus::kNeedMore) << n << " bytes";
  }
}

TEST(OrderEntryCodec, TwoMessagesBackToBackFrameOneAtATime) {
  auto b = bytes_of(sample_new_order());
  const auto hb = bytes_of(np::make_message<np::Heartbeat>(8));
  b.insert(b.end(), hb.begin(), hb.end());
  const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
  ASSERT_EQ(f.status, np::FrameStatus::kMessage);
  EXPECT_EQ(f.length, 40u);
  const np::Frame g = np::next_frame(std::span(b).subspan(f.length), np::Direction::kFromClient);
  ASSERT_EQ(g.status, np::FrameStatus::kMessage);
  EXPECT_EQ(g.header.type, np::MsgType::kHeartbeat);
  EXPECT_EQ(g.header.seq, 8u);
}

TEST(OrderEntryCodec, LengthBelowHeaderOrAboveMaxIsFatal) {
  for (const std::uint16_t len : {0, 1, 7, 257, 65535}) {
    std::vector<std::uint8_t> b(8, 0);
    std::memcpy(b.data(), &len, 2);
    const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
    EXPECT_EQ(f.status, np::FrameStatus::kFatal) << len;
    EXPECT_EQ(f.reason, np::SessionRejectReason::kBadLength);
    // Decided from the two length bytes alone: garbage never stalls the session.
    EXPECT_EQ(np::next_frame(std::span(b.data(), 2), np::Direction::kFromClient).status, np::FrameStatus::kFatal);
  }
}

TEST(OrderEntryCodec, WrongVersionIsSkipped) {
  auto b = bytes_of(sample_new_order());
  b[3] = 2;
  const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
  EXPECT_EQ(f.status, np::FrameStatus::kSkip);
  EXPECT_EQ(f.reason, np::SessionRejectReason::kUnsupportedVersion);
  EXPECT_EQ(f.length, 40u);
}

TEST(OrderEntryCodec, UnknownTypeIsSkipped) {
  auto b = bytes_of(sample_new_order());
  for (const std::uint8_t t : {0, 5, 9, 13, 99, 200, 255}) {  // 4 is ReportsRequest (§1.8)
    b[2] = t;
    const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
    EXPECT_EQ(f.status, np::FrameStatus::kSkip) << int{t};
    EXPECT_EQ(f.reason, np::SessionRejectReason::kUnknownType);
    EXPECT_EQ(f.length, 40u);
  }
}

TEST(OrderEntryCodec, MessagesOfTheOtherDirectionAreUnknown) {
  const auto ack = bytes_of(np::make_message<np::LogonAck>(1));
  EXPECT_EQ(np::next_frame(ack, np::Direction::kFromClient).reason, np::SessionRejectReason::kUnknownType);
  EXPECT_EQ(np::next_frame(ack, np::Direction::kFromExchange).status, np::FrameStatus::kMessage);
  const auto logon = bytes_of(np::make_message<np::Logon>(1));
  EXPECT_EQ(np::next_frame(logon, np::Direction::kFromExchange).reason, np::SessionRejectReason::kUnknownType);
}

TEST(OrderEntryCodec, LengthNotTheTypesIsSkipped) {
  // A NewOrder header claiming 48 bytes (a Logon's size): framing holds, the message is bad.
  std::vector<std::uint8_t> b(48, 0);
  const np::Header h{48, np::MsgType::kNewOrder, np::kProtocolVersion, 5};
  std::memcpy(b.data(), &h, sizeof h);
  const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
  EXPECT_EQ(f.status, np::FrameStatus::kSkip);
  EXPECT_EQ(f.reason, np::SessionRejectReason::kBadLength);
  EXPECT_EQ(f.length, 48u);
  EXPECT_EQ(f.header.seq, 5u);
}

TEST(OrderEntryCodec, ExchangeMessagesRoundTrip) {
  auto er = np::make_message<np::ExecutionReport>(12);
  er.exec_seq = 99;
  er.exec_type = np::ExecType::kFill;
  er.last_price = 101;
  er.last_qty = 5;
  er.reject_reason = 202;
  const auto b = bytes_of(er);
  ASSERT_EQ(np::next_frame(b, np::Direction::kFromExchange).status, np::FrameStatus::kMessage);
  const auto back = np::read_message<np::ExecutionReport>(b.data());
  EXPECT_EQ(back.exec_seq, 99u);
  EXPECT_EQ(back.exec_type, np::ExecType::kFill);
  EXPECT_EQ(back.reject_reason, 202);

  const auto cr = np::make_message<np::OrderReject>(3, np::MsgType::kCancelReject);
  const auto cb = bytes_of(cr);
  const np::Frame f = np::next_frame(cb, np::Direction::kFromExchange);
  EXPECT_EQ(f.status, np::FrameStatus::kMessage);
  EXPECT_EQ(f.header.type, np::MsgType::kCancelReject);
}

// §1.8: the replay request (client side only) and its end marker (exchange
// side only), framed with their fixed lengths; the replayed flag is the last byte.
TEST(OrderEntryCodec, ReportsRequestAndReportsReplayedFrameByDirection) {
  auto rq = np::make_message<np::ReportsRequest>(2);
  rq.after_exec_seq = 0x0102'0304'0506'0708ULL;
  const auto b = bytes_of(rq);
  ASSERT_EQ(b.size(), 16u);
  EXPECT_EQ(b[2], 4);  // MsgType 4
  EXPECT_EQ(b[8], 0x08);  // little-endian after_exec_seq
  const np::Frame f = np::next_frame(b, np::Direction::kFromClient);
  ASSERT_EQ(f.status, np::FrameStatus::kMessage);
  EXPECT_EQ(f.length, 16u);
  EXPECT_EQ(np::read_message<np::ReportsRequest>(b.data()).after_exec_seq, rq.after_exec_seq);
  EXPECT_EQ(np::next_frame(b, np::Direction::kFromExchange).reason, np::SessionRejectReason::kUnknownType);

  auto end = np::make_message<np::ReportsReplayed>(9);
  end.count = 3;
  end.through_exec_seq = 77;
  const auto eb = bytes_of(end);
  ASSERT_EQ(eb.size(), 24u);
  EXPECT_EQ(eb[2], 105);
  const np::Frame g = np::next_frame(eb, np::Direction::kFromExchange);
  ASSERT_EQ(g.status, np::FrameStatus::kMessage);
  const auto back = np::read_message<np::ReportsReplayed>(eb.data());
  EXPECT_EQ(back.count, 3u);
  EXPECT_EQ(back.through_exec_seq, 77u);
  EXPECT_EQ(np::next_frame(eb, np::Direction::kFromClient).reason, np::SessionRejectReason::kUnknownType);

  // A ReportsRequest one word short is a readable message of the wrong length (rule 4).
  auto shortened = b;
  shortened.resize(8);
  shortened[0] = 8;
  const np::Frame s = np::next_frame(shortened, np::Direction::kFromClient);
  EXPECT_EQ(s.status, np::FrameStatus::kSkip);
  EXPECT_EQ(s.reason, np::SessionRejectReason::kBadLength);

  auto er = np::make_message<np::ExecutionReport>(1);
  er.flags = np::kReportReplayed;
  EXPECT_EQ(bytes_of(er)[95], 1);
  EXPECT_EQ(np::to_string(np::SessionRejectReason::kReportsRequestNotFirst), "reports request not first");
  EXPECT_EQ(np::kSessionRejectReasons, 10u);
}

TEST(OrderEntryCodec, EveryMessageFitsTheMaximum) {
  for (int t = 0; t < 256; ++t) {
    const std::size_t len = np::message_length(static_cast<np::MsgType>(t));
    EXPECT_LE(len, np::kMaxMessageLength);
    if (len != 0) {
      EXPECT_EQ(len % 8, 0u) << t;
    }
  }
}

TEST(OrderEntryCodec, RandomGarbageNeverCrashesAndAlwaysProgressesOrStops) {
  // A stream of random bytes: each step either needs more, consumes > 0 bytes, or is fatal.
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> b(1 + round % 300);
    for (auto& c : b) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      c = static_cast<std::uint8_t>(x);
    }
    std::span<const std::uint8_t> rest(b);
    for (;;) {
      const np::Frame f = np::next_frame(rest, np::Direction::kFromClient);
      if (f.status == np::FrameStatus::kNeedMore || f.status == np::FrameStatus::kFatal) break;
      ASSERT_GE(f.length, sizeof(np::Header));
      ASSERT_LE(f.length, rest.size());
      rest = rest.subspan(f.length);
    }
  }
}

}  // namespace
