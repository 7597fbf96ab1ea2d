// ByteBuffer: FIFO bytes with compaction, never past its capacity.
#include "core/byte_buffer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace nc = nanotick::core;

namespace {

std::string text(const nc::ByteBuffer& b) {
  const auto r = b.readable();
  return std::string(reinterpret_cast<const char*>(r.data()), r.size());
}

TEST(ByteBuffer, AppendsConsumesAndCompactsToMakeRoom) {
  nc::ByteBuffer b(8);
  EXPECT_TRUE(b.append("abcdef", 6));
  EXPECT_FALSE(b.append("xyz", 3));  // 6 + 3 > 8, nothing consumed yet
  EXPECT_EQ(text(b), "abcdef");
  b.consume(4);
  EXPECT_TRUE(b.append("xyz", 3));   // compaction frees the consumed front
  EXPECT_EQ(text(b), "efxyz");
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(b.capacity(), 8u);
  b.consume(5);
  EXPECT_TRUE(b.empty());
}

TEST(ByteBuffer, WritableAndCommitLikeASocketRead) {
  nc::ByteBuffer b(4);
  auto w = b.writable();
  ASSERT_EQ(w.size(), 4u);
  w[0] = 'h';
  w[1] = 'i';
  b.commit(2);
  b.consume(1);
  b.commit(0);
  EXPECT_EQ(text(b), "i");
  EXPECT_EQ(b.writable().size(), 2u);  // back not exhausted: no compaction yet
  b.commit(2);
  EXPECT_EQ(b.writable().size(), 1u);  // back exhausted: compacted, the consumed byte is room again
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.writable().size(), 4u);
}

TEST(ByteBuffer, TruncateKeepsTheFirstUnconsumedBytes) {
  nc::ByteBuffer b(8);
  EXPECT_TRUE(b.append("abcdefg", 7));
  b.consume(2);
  b.truncate(3);
  EXPECT_EQ(text(b), "cde");
  b.truncate(10);  // longer than what is there: nothing changes
  EXPECT_EQ(text(b), "cde");
  b.truncate(0);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.writable().size(), 8u);  // emptied: the whole capacity is room again
}

}  // namespace
