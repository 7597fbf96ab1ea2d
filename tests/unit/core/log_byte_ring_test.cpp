// Unit tests for the async logger's byte ring (core/log_byte_ring.hpp): one
// producer's variable-size records, contiguous across the wrap.
#include "core/log_byte_ring.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace nc = nanotick::core;

TEST(LogByteRing, ShouldRejectCapacityNotPowerOfTwo) {
  EXPECT_THROW(nc::LogByteRing(100), std::invalid_argument);
  EXPECT_THROW(nc::LogByteRing(32), std::invalid_argument);
  EXPECT_NO_THROW(nc::LogByteRing(64));
}

TEST(LogByteRing, ShouldReturnRecordsInOrderWithTheirSizes) {
  nc::LogByteRing ring(256);
  for (std::uint32_t size : {1u, 7u, 8u, 13u}) {
    std::byte* p = ring.try_claim(size);
    ASSERT_NE(p, nullptr);
    std::memset(p, static_cast<int>(size), size);
    ring.commit();
  }
  for (std::uint32_t size : {1u, 7u, 8u, 13u}) {
    auto rec = ring.front();
    ASSERT_EQ(rec.size(), size);
    for (auto b : rec) EXPECT_EQ(static_cast<unsigned>(b), size);
    ring.pop();
    ring.publish_consumed();
  }
  EXPECT_TRUE(ring.front().empty());
}

TEST(LogByteRing, ShouldNotPublishUntilCommit) {
  nc::LogByteRing ring(128);
  ASSERT_NE(ring.try_claim(8), nullptr);
  EXPECT_TRUE(ring.front().empty());
  ring.commit();
  EXPECT_EQ(ring.front().size(), 8u);
}

TEST(LogByteRing, ShouldReportFullInsteadOfOverwriting) {
  nc::LogByteRing ring(64);  // 4 frames of 16 bytes (8 header + 8 payload)
  for (int i = 0; i < 4; ++i) {
    ASSERT_NE(ring.try_claim(8), nullptr) << i;
    ring.commit();
  }
  EXPECT_EQ(ring.try_claim(8), nullptr);
  ring.front();
  ring.pop();
  ring.publish_consumed();
  EXPECT_NE(ring.try_claim(8), nullptr);
}

TEST(LogByteRing, ShouldReturnSpaceToTheProducerOnlyWhenPublished) {
  nc::LogByteRing ring(64);
  for (int i = 0; i < 4; ++i) {
    ASSERT_NE(ring.try_claim(8), nullptr);
    ring.commit();
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(ring.front().empty());
    ring.pop();
  }
  EXPECT_TRUE(ring.front().empty());
  EXPECT_EQ(ring.try_claim(8), nullptr);
  ring.publish_consumed();
  EXPECT_NE(ring.try_claim(8), nullptr);
}

TEST(LogByteRing, ShouldKeepRecordsContiguousAcrossTheWrap) {
  nc::LogByteRing ring(256);
  std::uint32_t next_write = 0, next_read = 0;
  for (int round = 0; round < 1000; ++round) {
    const std::uint32_t size = 1 + static_cast<std::uint32_t>(round * 37 % static_cast<int>(ring.max_payload()));
    while (true) {
      std::byte* p = ring.try_claim(size);
      if (p != nullptr) {
        for (std::uint32_t i = 0; i < size; ++i) p[i] = static_cast<std::byte>(next_write + i);
        ++next_write;
        ring.commit();
        break;
      }
      auto rec = ring.front();
      ASSERT_FALSE(rec.empty());
      for (std::size_t i = 0; i < rec.size(); ++i) ASSERT_EQ(rec[i], static_cast<std::byte>(next_read + i));
      ++next_read;
      ring.pop();
      ring.publish_consumed();
    }
  }
  while (!ring.front().empty()) {
    ring.pop();
    ring.publish_consumed();
    ++next_read;
  }
  EXPECT_EQ(next_read, next_write);
}

TEST(LogByteRing, ShouldAlwaysFitMaxPayloadWhenEmpty) {
  nc::LogByteRing ring(256);
  for (int i = 0; i < 20; ++i) {
    ASSERT_NE(ring.try_claim(static_cast<std::uint32_t>(ring.max_payload())), nullptr) << i;
    ring.commit();
    ASSERT_EQ(ring.front().size(), ring.max_payload());
    ring.pop();
    ring.publish_consumed();
    ASSERT_NE(ring.try_claim(static_cast<std::uint32_t>(8 * (i % 5) + 1)), nullptr);  // shift the offset
    ring.commit();
    ring.front();
    ring.pop();
    ring.publish_consumed();
  }
}
