// CRC-32C against the standard check value and a bitwise reference.
#include "core/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

// Bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78): slow and obviously right.
std::uint32_t reference_crc32c(const std::vector<std::uint8_t>& b) {
  std::uint32_t c = 0xffffffffu;
  for (const std::uint8_t byte : b) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
  }
  return ~c;
}

TEST(Crc32c, CheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(nanotick::core::crc32c(0, s, 9), 0xE3069283u);  // the published CRC-32C check value
  EXPECT_EQ(nanotick::core::crc32c(0, s, 0), 0u);
}

TEST(Crc32c, MatchesReferenceOnEveryLengthAndChains) {
  std::vector<std::uint8_t> b;
  std::uint32_t x = 1;
  for (int len = 0; len < 300; ++len) {
    EXPECT_EQ(nanotick::core::crc32c(0, b.data(), b.size()), reference_crc32c(b)) << len;
    for (std::size_t split = 0; split <= b.size(); split += 7) {
      const std::uint32_t first = nanotick::core::crc32c(0, b.data(), split);
      EXPECT_EQ(nanotick::core::crc32c(first, b.data() + split, b.size() - split), reference_crc32c(b));
    }
    x = x * 1103515245u + 12345u;
    b.push_back(static_cast<std::uint8_t>(x >> 16));
  }
}

}  // namespace
