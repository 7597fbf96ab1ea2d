// Unit tests for AnswerStamps (exchange/session.hpp), the gateway's queue of
// answers waiting for their write before their ex_tcp_write stamp: stamped
// once the writes pass their last byte, oldest first; dropped answers are
// forgotten; a full ring refuses; an unallocated one stamps nothing.
#include "exchange/session.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace nx = nanotick::exchange;

namespace {

using Taken = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

Taken take(nx::AnswerStamps& s, std::uint64_t written) {
  Taken out;
  s.take_written(written, [&out](std::uint64_t key, std::uint64_t aux) { out.emplace_back(key, aux); });
  return out;
}

TEST(AnswerStamps, ShouldHandOverAnswersOnceTheirLastByteWasWrittenOldestFirst) {
  nx::AnswerStamps s;
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

TEST(AnswerStamps, ShouldForgetAnswersDroppedUnwritten) {
  nx::AnswerStamps s;
  s.allocate(8);
  ASSERT_TRUE(s.push(40, 1, 0));
  ASSERT_TRUE(s.push(80, 2, 0));
  ASSERT_TRUE(s.push(120, 3, 0));
  s.drop_beyond(60);  // the output was cut after 60 bytes: answers 2 and 3 never leave
  EXPECT_EQ(take(s, 1000), (Taken{{1, 0}}));
  ASSERT_TRUE(s.push(100, 4, 0));  // later answers queue behind the cut
  EXPECT_EQ(take(s, 100), (Taken{{4, 0}}));
}

TEST(AnswerStamps, ShouldRefuseWhenFullAndTakeMoreOnceDrained) {
  nx::AnswerStamps s;
  s.allocate(3);  // rounded up to 4
  for (std::uint64_t i = 1; i <= 4; ++i) ASSERT_TRUE(s.push(i * 10, i, 0)) << i;
  EXPECT_FALSE(s.push(50, 5, 0));
  EXPECT_EQ(take(s, 20).size(), 2u);
  EXPECT_TRUE(s.push(50, 5, 0));
  EXPECT_EQ(take(s, 50), (Taken{{3, 0}, {4, 0}, {5, 0}}));
}

TEST(AnswerStamps, ShouldStampNothingUnlessAllocated) {
  nx::AnswerStamps s;
  s.allocate(0);
  EXPECT_FALSE(s.enabled());
  EXPECT_FALSE(s.push(10, 1, 1));
  EXPECT_FALSE(s.has_written(100));
  EXPECT_TRUE(take(s, 100).empty());
}

TEST(AnswerStamps, ShouldStartOverAfterClear) {
  nx::AnswerStamps s;
  s.allocate(4);
  ASSERT_TRUE(s.push(10, 1, 0));
  s.clear();  // a new connection on the slot: offsets start at 0 again
  EXPECT_FALSE(s.has_written(100));
  ASSERT_TRUE(s.push(5, 2, 0));
  EXPECT_EQ(take(s, 5), (Taken{{2, 0}}));
}

}  // namespace
