// ShmByteRing: bytes arrive whole and in order across the wrap, the writer
// stops at the reader, and -- written as a hostile peer would -- every
// impossible position the other side can publish (beyond the buffer,
// backwards, past what was written) breaks the view for good instead of
// reading or writing outside the buffer.
#include "ipc/shm_byte_ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace ni = nanotick::ipc;

namespace {

constexpr std::uint64_t kCap = 64;

struct Ring {
  ni::ShmByteRingWords words{};
  std::vector<std::uint8_t> data = std::vector<std::uint8_t>(kCap + 16, 0xEE);  // 16 guard bytes after the buffer
  ni::ShmByteRingWriter writer{&words, data.data(), kCap};
  ni::ShmByteRingReader reader{&words, data.data(), kCap};
  bool guard_intact() const {
    for (std::size_t i = kCap; i < data.size(); ++i)
      if (data[i] != 0xEE) return false;
    return true;
  }
};

std::vector<std::uint8_t> counting(std::size_t n, std::uint8_t from = 0) {
  std::vector<std::uint8_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(ShmByteRing, ShouldCarryBytesInOrderAcrossTheWrap) {
  Ring r;
  std::vector<std::uint8_t> got;
  std::uint8_t next = 0;
  for (int round = 0; round < 50; ++round) {  // 50 x 37 bytes: wraps many times at odd offsets
    const auto chunk = counting(37, next);
    ASSERT_EQ(r.writer.write(chunk), 37u);
    next = static_cast<std::uint8_t>(next + 37);
    std::vector<std::uint8_t> buf(40);
    const std::size_t n = r.reader.read(buf);
    ASSERT_EQ(n, 37u);
    got.insert(got.end(), buf.begin(), buf.begin() + static_cast<long>(n));
  }
  EXPECT_EQ(got, counting(50 * 37));
  EXPECT_TRUE(r.guard_intact());
  EXPECT_FALSE(r.writer.broken());
  EXPECT_FALSE(r.reader.broken());
}

TEST(ShmByteRing, ShouldTakeOnlyWhatFitsUntilTheReaderConsumes) {
  Ring r;
  EXPECT_EQ(r.writer.write(counting(100)), kCap) << "a partial write: the ring holds 64";
  EXPECT_EQ(r.writer.write(counting(1)), 0u) << "full";
  EXPECT_EQ(r.writer.queued(), kCap);
  std::vector<std::uint8_t> buf(10);
  EXPECT_EQ(r.reader.read(buf), 10u);
  EXPECT_EQ(r.writer.write(counting(20)), 10u);
  EXPECT_EQ(r.reader.available(), kCap);
  r.reader.discard();
  EXPECT_EQ(r.reader.available(), 0u);
  EXPECT_EQ(r.writer.queued(), 0u);
  EXPECT_TRUE(r.guard_intact());
}

TEST(ShmByteRing, ReaderShouldBreakOnATailBeyondTheBuffer) {
  Ring r;
  r.words.tail = kCap + 1;  // the peer claims more than the buffer can hold
  std::vector<std::uint8_t> buf(1000);
  EXPECT_EQ(r.reader.read(buf), 0u);
  EXPECT_TRUE(r.reader.broken());
  r.words.tail = 3;  // a plausible value afterwards changes nothing: broken for good
  EXPECT_EQ(r.reader.read(buf), 0u);
  EXPECT_TRUE(r.reader.broken());
}

TEST(ShmByteRing, ReaderShouldBreakOnATailThatMovesBackwards) {
  Ring r;
  ASSERT_EQ(r.writer.write(counting(10)), 10u);
  std::vector<std::uint8_t> buf(10);
  ASSERT_EQ(r.reader.read(buf), 10u);
  r.words.tail = 4;  // behind what was already consumed
  EXPECT_EQ(r.reader.available(), 0u);
  EXPECT_TRUE(r.reader.broken());
}

TEST(ShmByteRing, ReaderShouldBreakOnAHugeTailThatWouldWrapTheArithmetic) {
  Ring r;
  r.words.tail = ~std::uint64_t{0};
  std::vector<std::uint8_t> buf(kCap);
  EXPECT_EQ(r.reader.read(buf), 0u);
  EXPECT_TRUE(r.reader.broken());
}

TEST(ShmByteRing, WriterShouldBreakOnAHeadPastWhatWasWritten) {
  Ring r;
  ASSERT_EQ(r.writer.write(counting(8)), 8u);
  r.words.head = 9;  // "consumed" a byte never written: would make room that is not there
  EXPECT_EQ(r.writer.write(counting(100)), 0u);
  EXPECT_TRUE(r.writer.broken());
  EXPECT_EQ(r.writer.queued(), 0u);
  EXPECT_TRUE(r.guard_intact());
}

TEST(ShmByteRing, WriterShouldBreakOnAHeadThatMovesBackwards) {
  Ring r;
  ASSERT_EQ(r.writer.write(counting(8)), 8u);
  std::vector<std::uint8_t> buf(8);
  ASSERT_EQ(r.reader.read(buf), 8u);
  ASSERT_EQ(r.writer.write(counting(8)), 8u);  // the writer saw head = 8
  r.words.head = 2;
  EXPECT_EQ(r.writer.write(counting(1)), 0u);
  EXPECT_TRUE(r.writer.broken());
}

TEST(ShmByteRing, AWriterShouldNeverReadItsOwnPositionBackFromSharedMemory) {
  Ring r;
  ASSERT_EQ(r.writer.write(counting(8)), 8u);
  r.words.tail = 1000;  // the peer overwrites the writer's own word
  ASSERT_EQ(r.writer.write(counting(8)), 8u) << "the writer continues from its private position";
  EXPECT_EQ(r.words.tail, 16u) << "and republishes it";
  EXPECT_EQ(r.writer.published(), 16u);
}

}  // namespace
