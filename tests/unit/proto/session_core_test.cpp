// Unit tests for the order-entry session core both ends share (proto/):
// WrittenStamps (messages handed, stamped once the writes pass their last
// byte, oldest first; dropped ones forgotten; a full ring refuses; an
// unallocated one stamps nothing), OutputStream (offsets, the boundary of a
// partly written message kept through drops and caps), SessionSequence and
// SessionLiveness (PROTOCOL.md §1.4 rules 3, 6-7).
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "proto/order_entry.hpp"
#include "proto/output_stream.hpp"
#include "proto/session_liveness.hpp"
#include "proto/session_sequence.hpp"
#include "proto/written_stamps.hpp"

namespace np = nanotick::proto;

namespace {

using Taken = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

Taken take(np::WrittenStamps& s, std::uint64_t written, std::uint64_t tsc = 7) {
  Taken out;
  s.stamp_written(written, tsc);
  s.take_stamped([&out, tsc](const np::WrittenStamps::Entry& e) {
    EXPECT_EQ(e.written_tsc, tsc);
    out.emplace_back(e.key, e.aux);
  });
  return out;
}

TEST(WrittenStamps, ShouldHandOverMessagesOnceTheirLastByteWasWrittenOldestFirst) {
  np::WrittenStamps s;
  s.allocate(8);
  ASSERT_TRUE(s.enabled());
  ASSERT_TRUE(s.push(96, 11, 1));
  ASSERT_TRUE(s.push(136, 12, 2));
  ASSERT_TRUE(s.push(232, 13, 3));
  EXPECT_FALSE(s.has_written(95));
  EXPECT_TRUE(take(s, 95).empty());
  EXPECT_TRUE(s.has_written(96));
  EXPECT_EQ(take(s, 200), (Taken{{11, 1}, {12, 2}}));  // a partial write stops inside the third
  EXPECT_EQ(take(s, 232), (Taken{{13, 3}}));
  EXPECT_FALSE(s.has_written(1'000'000));
}

TEST(WrittenStamps, ShouldForgetMessagesDroppedUnwritten) {
  np::WrittenStamps s;
  s.allocate(8);
  ASSERT_TRUE(s.push(40, 1, 0));
  ASSERT_TRUE(s.push(80, 2, 0));
  ASSERT_TRUE(s.push(120, 3, 0));
  s.drop_beyond(60);  // the output was cut after 60 bytes: messages 2 and 3 never leave
  EXPECT_EQ(take(s, 1000), (Taken{{1, 0}}));
  ASSERT_TRUE(s.push(100, 4, 0));  // later messages queue behind the cut
  EXPECT_EQ(take(s, 100), (Taken{{4, 0}}));
}

TEST(WrittenStamps, ShouldRefuseWhenFullAndTakeMoreOnceDrained) {
  np::WrittenStamps s;
  s.allocate(3);  // rounded up to 4
  for (std::uint64_t i = 1; i <= 4; ++i) ASSERT_TRUE(s.push(i * 10, i, 0)) << i;
  EXPECT_TRUE(s.full());
  EXPECT_FALSE(s.push(50, 5, 0));
  EXPECT_EQ(take(s, 20).size(), 2u);
  EXPECT_TRUE(s.push(50, 5, 0));
  EXPECT_EQ(take(s, 50), (Taken{{3, 0}, {4, 0}, {5, 0}}));
}

TEST(WrittenStamps, ShouldStayFullUntilStampedMessagesAreTaken) {
  np::WrittenStamps s;
  s.allocate(2);
  ASSERT_TRUE(s.push(10, 1, 0));
  ASSERT_TRUE(s.push(20, 2, 0));
  s.stamp_written(20, 5);  // written, not yet delivered (the client delivers on its next poll)
  EXPECT_FALSE(s.push(30, 3, 0));
  EXPECT_EQ(s.take_stamped([](const np::WrittenStamps::Entry&) {}), 2u);
  EXPECT_TRUE(s.push(30, 3, 0));
}

TEST(WrittenStamps, ShouldStampNothingUnlessAllocated) {
  np::WrittenStamps s;
  s.allocate(0);
  EXPECT_FALSE(s.enabled());
  EXPECT_FALSE(s.push(10, 1, 1));
  EXPECT_FALSE(s.has_written(100));
  EXPECT_TRUE(take(s, 100).empty());
}

TEST(WrittenStamps, ShouldStartOverAfterClear) {
  np::WrittenStamps s;
  s.allocate(4);
  ASSERT_TRUE(s.push(10, 1, 0));
  s.clear();  // a new connection on the slot: offsets start at 0 again
  EXPECT_FALSE(s.has_written(100));
  ASSERT_TRUE(s.push(5, 2, 0));
  EXPECT_EQ(take(s, 5), (Taken{{2, 0}}));
}

TEST(WrittenStamps, ShouldHandEachMessageOverOnceAndKeepItsStartTsc) {
  np::WrittenStamps s;
  s.allocate(4);
  ASSERT_TRUE(s.push(10, 1, 0, 100));
  ASSERT_TRUE(s.push(20, 2, 0, 0));
  std::vector<std::uint64_t> starts;
  auto collect = [&starts](const np::WrittenStamps::Entry& e) { starts.push_back(e.start_tsc); };
  s.take_handed(collect);
  s.take_handed(collect);  // nothing new since
  EXPECT_EQ(starts, (std::vector<std::uint64_t>{100, 0}));
  ASSERT_TRUE(s.push(30, 3, 0, 300));
  s.take_handed(collect);
  EXPECT_EQ(starts, (std::vector<std::uint64_t>{100, 0, 300}));
}

TEST(WrittenStamps, ShouldKeepStampedMessagesWhenTheConnectionEnds) {
  np::WrittenStamps s;
  s.allocate(4);
  ASSERT_TRUE(s.push(10, 1, 0));
  ASSERT_TRUE(s.push(20, 2, 0));
  s.stamp_written(10, 9);
  s.drop_unstamped();  // message 2 never left
  EXPECT_EQ(take(s, 1000, 9), (Taken{{1, 0}}));
}

np::ExecutionReport report(std::uint32_t ref_seq) {
  auto m = np::make_message<np::ExecutionReport>(0);
  m.ref_seq = ref_seq;
  return m;
}

TEST(OutputStream, ShouldCountOffsetsFromTheConnectionsStart) {
  np::OutputStream out(1024, 8);
  ASSERT_TRUE(out.append(report(1)));
  ASSERT_TRUE(out.append(report(2)));
  EXPECT_EQ(out.queued_end(), 2 * sizeof(np::ExecutionReport));
  out.wrote(100);  // into the second message
  EXPECT_EQ(out.written(), 100u);
  EXPECT_EQ(out.size(), 2 * sizeof(np::ExecutionReport) - 100);
  EXPECT_EQ(out.queued_end(), 2 * sizeof(np::ExecutionReport));
  out.reset();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(out.written(), 0u);
}

TEST(OutputStream, ShouldFinishAPartlyWrittenMessageWhenDroppingTheRest) {
  constexpr std::uint64_t kLen = sizeof(np::ExecutionReport);
  np::OutputStream out(1024, 8);
  for (std::uint32_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(out.append(report(i)));
    ASSERT_TRUE(out.stamps().push(out.queued_end(), i, 0));
  }
  out.wrote(kLen + 10);  // the first message and 10 bytes of the second
  EXPECT_EQ(out.drop_unwritten(), 1u);  // the third only
  EXPECT_EQ(out.size(), kLen - 10);     // the rest of the second stays
  EXPECT_EQ(out.queued_end(), 2 * kLen);
  out.stamps().stamp_written(out.written(), 1);
  std::vector<std::uint64_t> keys;
  out.stamps().take_stamped([&keys](const np::WrittenStamps::Entry& e) { keys.push_back(e.key); });
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{1}));  // the second is not written yet, the third is gone
  out.wrote(kLen - 10);
  out.stamps().stamp_written(out.written(), 2);
  out.stamps().take_stamped([&keys](const np::WrittenStamps::Entry& e) { keys.push_back(e.key); });
  EXPECT_EQ(keys, (std::vector<std::uint64_t>{1, 2}));
}

TEST(OutputStream, ShouldCapWritesAtWholeMessagesButAlwaysFinishAStartedOne) {
  constexpr std::size_t kLen = sizeof(np::ExecutionReport);
  np::OutputStream out(1024, 0);
  for (std::uint32_t i = 1; i <= 4; ++i) ASSERT_TRUE(out.append(report(i)));
  EXPECT_EQ(out.whole_messages_within(4 * kLen), 4 * kLen);
  EXPECT_EQ(out.whole_messages_within(2 * kLen + 5), 2 * kLen);
  EXPECT_EQ(out.whole_messages_within(0), 0u);
  out.wrote(5);  // inside the first
  EXPECT_EQ(out.whole_messages_within(0), kLen - 5);  // its rest goes whatever the room
  EXPECT_EQ(out.whole_messages_within(2 * kLen), 2 * kLen - 5);
}

TEST(OutputStream, ShouldRefuseAMessageThatDoesNotFit) {
  np::OutputStream out(sizeof(np::ExecutionReport) + 10, 0);
  EXPECT_TRUE(out.append(report(1)));
  EXPECT_FALSE(out.append(report(2)));
  EXPECT_EQ(out.size(), sizeof(np::ExecutionReport));
}

TEST(SessionSequence, ShouldExpectEachSeqOnceAndTellGapsFromRepeats) {
  np::SessionSequence seq;
  EXPECT_EQ(seq.check(1), np::SeqCheck::kExpected);
  seq.accept();
  EXPECT_EQ(seq.expected_in(), 2u);
  EXPECT_EQ(seq.check(1), np::SeqCheck::kRepeat);
  EXPECT_EQ(seq.check(5), np::SeqCheck::kGap);
  EXPECT_EQ(seq.expected_in(), 2u);  // a bad seq changes nothing
}

TEST(SessionSequence, ShouldNumberOutputAndGiveBackDroppedSeqs) {
  np::SessionSequence seq;
  EXPECT_EQ(seq.next_out(), 1u);
  seq.sent();
  seq.sent();
  seq.sent();
  seq.unsend(2);  // two queued messages dropped unwritten
  EXPECT_EQ(seq.next_out(), 2u);
  seq.accept();
  seq.reset();
  EXPECT_EQ(seq.next_out(), 1u);
  EXPECT_EQ(seq.expected_in(), 1u);
}

TEST(SessionLiveness, ShouldAskForAHeartbeatAfterOneQuietIntervalAndCallThreeSilent) {
  np::SessionLiveness l;
  l.start(1'000, 100);
  EXPECT_FALSE(l.heartbeat_due(1'099));
  EXPECT_TRUE(l.heartbeat_due(1'100));
  l.sent(1'100);
  EXPECT_FALSE(l.heartbeat_due(1'150));
  EXPECT_FALSE(l.silent(1'299));
  EXPECT_TRUE(l.silent(1'300));
  l.heard(1'250);
  EXPECT_FALSE(l.silent(1'300));
  l.set_interval_ns(1'000);  // the interval in force after logon
  EXPECT_FALSE(l.silent(4'249));
  EXPECT_TRUE(l.silent(4'250));
  EXPECT_EQ(l.connected_ns(), 1'000u);
}

TEST(SessionLiveness, ShouldCallAStallTooLongAfterThreeIntervals) {
  np::SessionLiveness l;
  l.start(0, 100);
  EXPECT_FALSE(l.stalled_too_long(0, 1'000'000));  // 0: no stall
  EXPECT_FALSE(l.stalled_too_long(50, 349));
  EXPECT_TRUE(l.stalled_too_long(50, 350));
}

}  // namespace
