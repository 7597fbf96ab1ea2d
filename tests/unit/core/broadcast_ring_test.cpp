// Unit tests for core::BroadcastRing (single thread). Torn reads under a live
// writer are covered by tests/concurrency/broadcast_ring_stress_test.cpp.
#include "core/broadcast_ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace {

using nanotick::core::BroadcastRing;

template <typename T, std::size_t N>
concept ValidRing = requires { typename BroadcastRing<T, N>; };

struct Tiny {
  std::uint8_t b[3];
};
struct Quote {  // 100 bytes: not a multiple of the 8-byte copy word
  std::uint32_t seq;
  std::uint8_t bytes[96];
};
static_assert(sizeof(Tiny) == 3 && sizeof(Quote) == 100);

using Ring = BroadcastRing<std::uint64_t, 8>;
using Status = Ring::ReadStatus;

// Reads everything currently available; records values and losses.
struct Drained {
  std::vector<std::uint64_t> values;
  std::uint64_t lost = 0;
  int lapped_events = 0;
};
Drained drain(Ring::Reader& reader) {
  Drained d;
  for (;;) {
    std::uint64_t v = 0;
    const Ring::ReadResult r = reader.try_read(v);
    if (r.status == Status::kEmpty) {
      return d;
    }
    if (r.status == Status::kLapped) {
      d.lost += r.lost;
      ++d.lapped_events;
    } else {
      d.values.push_back(v);
    }
  }
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = from; i < to; ++i) {
    v.push_back(i);
  }
  return v;
}

TEST(BroadcastRing, ShouldRejectCapacityNotPowerOfTwo) {
  static_assert(ValidRing<std::uint64_t, 8>);
  static_assert(!ValidRing<std::uint64_t, 0>);
  static_assert(!ValidRing<std::uint64_t, 6>);
  static_assert(ValidRing<std::uint64_t, std::dynamic_extent>);  // the capacity is chosen at run time
  static_assert(std::is_standard_layout_v<Ring>);
  EXPECT_EQ(Ring::capacity(), 8u);
}

TEST(BroadcastRing, ShouldReportEmptyBeforeAnyPublish) {
  Ring ring;
  Ring::Reader reader(ring);
  std::uint64_t v = 5;
  const auto r = reader.try_read(v);
  EXPECT_EQ(r.status, Status::kEmpty);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(v, 5u);
}

TEST(BroadcastRing, ShouldNumberMessagesFromZero) {
  Ring ring;
  EXPECT_EQ(ring.publish(10), 0u);
  EXPECT_EQ(ring.publish(11), 1u);
  EXPECT_EQ(ring.published(), 2u);
}

TEST(BroadcastRing, ShouldDeliverEveryMessageInOrderToEveryReader) {
  Ring ring;
  Ring::Reader a(ring);
  Ring::Reader b(ring);
  Ring::Reader c(ring);
  for (std::uint64_t i = 0; i < 6; ++i) {
    ring.publish(100 + i);
  }
  for (Ring::Reader* reader : {&a, &b, &c}) {
    const Drained d = drain(*reader);
    EXPECT_EQ(d.values, range(100, 106));
    EXPECT_EQ(d.lost, 0u);
  }
}

TEST(BroadcastRing, ShouldLetReadersProgressIndependently) {
  Ring ring;
  Ring::Reader fast(ring);
  Ring::Reader slow(ring);
  std::vector<std::uint64_t> fast_seen;
  for (std::uint64_t i = 0; i < 1000; ++i) {  // wraps the ring 125 times
    ring.publish(i);
    std::uint64_t v = 0;
    ASSERT_EQ(fast.try_read(v).status, Status::kOk);
    fast_seen.push_back(v);
    if (i % 2 == 0) {  // the slow reader reads every other round: never lapped
      ASSERT_EQ(drain(slow).lost, 0u);
    }
  }
  EXPECT_EQ(fast_seen, range(0, 1000));
  EXPECT_EQ(fast.total_lost(), 0u);
}

TEST(BroadcastRing, ShouldReportExactLossWhenReaderIsLapped) {
  Ring ring;
  Ring::Reader reader(ring);
  for (std::uint64_t i = 0; i < 20; ++i) {  // 20 messages into 8 slots
    ring.publish(i);
  }
  std::uint64_t v = 0;
  const auto r = reader.try_read(v);
  EXPECT_EQ(r.status, Status::kLapped);
  EXPECT_EQ(r.lost, 12u);  // messages 0..11 were overwritten
  EXPECT_EQ(reader.position(), 12u);
  // Resynchronised to the oldest message still in the ring.
  const Drained d = drain(reader);
  EXPECT_EQ(d.values, range(12, 20));
  EXPECT_EQ(d.lost, 0u);
  EXPECT_EQ(reader.total_lost(), 12u);
}

TEST(BroadcastRing, ShouldAccountForEveryMessageAsReadOrLostAfterRepeatedLaps) {
  Ring ring;
  Ring::Reader reader(ring);
  std::uint64_t published = 0;
  std::uint64_t expected = 0;  // message number the reader must deliver next
  std::uint64_t received = 0;
  for (int round = 0; round < 200; ++round) {
    const int burst = 1 + (round * 7) % 23;  // sometimes fits, sometimes laps
    for (int i = 0; i < burst; ++i) {
      ring.publish(published++);
    }
    for (;;) {
      std::uint64_t v = 0;
      const Ring::ReadResult r = reader.try_read(v);
      if (r.status == Status::kEmpty) {
        break;
      }
      if (r.status == Status::kLapped) {
        ASSERT_GT(r.lost, 0u);
        expected += r.lost;
        continue;
      }
      ASSERT_EQ(v, expected);  // in order, and the reported losses were exact
      ++expected;
      ++received;
    }
  }
  EXPECT_GT(reader.total_lost(), 0u);
  EXPECT_EQ(received + reader.total_lost(), published);
  EXPECT_EQ(reader.position(), published);
}

TEST(BroadcastRing, ShouldStartLateJoiningReaderAtTheNextMessage) {
  Ring ring;
  for (std::uint64_t i = 0; i < 5; ++i) {
    ring.publish(i);
  }
  Ring::Reader late(ring);
  EXPECT_EQ(late.position(), 5u);
  std::uint64_t v = 0;
  EXPECT_EQ(late.try_read(v).status, Status::kEmpty);
  ring.publish(5);
  ring.publish(6);
  const Drained d = drain(late);
  EXPECT_EQ(d.values, range(5, 7));
  EXPECT_EQ(d.lost, 0u);
}

TEST(BroadcastRing, ShouldStartReaderAtOldestRetainedMessageWhenAsked) {
  Ring ring;
  Ring::Reader early(ring, Ring::StartAt::kOldest);
  EXPECT_EQ(early.position(), 0u);
  for (std::uint64_t i = 0; i < 3; ++i) {
    ring.publish(i);
  }
  Ring::Reader replaying(ring, Ring::StartAt::kOldest);
  EXPECT_EQ(drain(replaying).values, range(0, 3));
  for (std::uint64_t i = 3; i < 30; ++i) {
    ring.publish(i);
  }
  Ring::Reader late(ring, Ring::StartAt::kOldest);
  EXPECT_EQ(late.position(), 22u);
  const Drained d = drain(late);
  EXPECT_EQ(d.values, range(22, 30));
  EXPECT_EQ(d.lost, 0u);
}

TEST(BroadcastRing, ShouldNeverBlockTheWriterWhenReadersStall) {
  auto ring = std::make_unique<Ring>();
  Ring::Reader stalled(*ring);
  for (std::uint64_t i = 0; i < 100000; ++i) {
    ring->publish(i);
  }
  EXPECT_EQ(ring->published(), 100000u);
  const Drained d = drain(stalled);
  EXPECT_EQ(d.lapped_events, 1);
  EXPECT_EQ(d.lost, 100000u - 8u);
  EXPECT_EQ(d.values, range(100000 - 8, 100000));
}

TEST(BroadcastRing, ShouldCarryThreeBytePayloads) {
  using TinyRing = BroadcastRing<Tiny, 4>;
  TinyRing ring;
  TinyRing::Reader reader(ring);
  for (std::uint8_t i = 0; i < 100; ++i) {
    ring.publish(Tiny{{i, static_cast<std::uint8_t>(i ^ 0x5a), static_cast<std::uint8_t>(~i)}});
    Tiny out{};
    ASSERT_EQ(reader.try_read(out).status, TinyRing::ReadStatus::kOk);
    EXPECT_EQ(out.b[0], i);
    EXPECT_EQ(out.b[1], static_cast<std::uint8_t>(i ^ 0x5a));
    EXPECT_EQ(out.b[2], static_cast<std::uint8_t>(~i));
  }
}

TEST(BroadcastRing, ShouldCarryHundredBytePayloadsIntact) {
  using QuoteRing = BroadcastRing<Quote, 16>;
  auto ring = std::make_unique<QuoteRing>();
  QuoteRing::Reader reader(*ring);
  for (std::uint32_t i = 0; i < 50; ++i) {
    Quote q{};
    q.seq = i;
    for (std::size_t k = 0; k < sizeof(q.bytes); ++k) {
      q.bytes[k] = static_cast<std::uint8_t>(i * 13 + k);
    }
    ring->publish(q);
    Quote out{};
    ASSERT_EQ(reader.try_read(out).status, QuoteRing::ReadStatus::kOk);
    ASSERT_EQ(out.seq, i);
    for (std::size_t k = 0; k < sizeof(out.bytes); ++k) {
      ASSERT_EQ(out.bytes[k], static_cast<std::uint8_t>(i * 13 + k));
    }
  }
}

// A record that says its own size in its first word, as the market data
// ring's packets do.
struct Sized {
  std::uint64_t bytes;  // of the whole record that matter: 8 + payload
  std::uint8_t payload[120];
};
std::uint64_t sized_bytes(std::uint64_t first_word) { return first_word; }

TEST(BroadcastRing, ShouldCopyOnlyThePrefixASizedMessageNames) {
  using SizedRing = BroadcastRing<Sized, 4>;
  auto ring = std::make_unique<SizedRing>();
  SizedRing::Reader reader(*ring);
  Sized big{};
  big.bytes = sizeof big;
  std::memset(big.payload, 0xaa, sizeof big.payload);
  ring->publish(big);
  Sized small{};
  small.bytes = 8 + 3;
  small.payload[0] = 1;
  small.payload[1] = 2;
  small.payload[2] = 3;
  small.payload[7] = 9;  // in the same word as the last named byte
  small.payload[8] = 9;  // in the next word
  ring->publish(small, small.bytes);

  Sized out{};
  ASSERT_EQ(reader.try_read_prefix(out, sized_bytes).status, SizedRing::ReadStatus::kOk);
  EXPECT_EQ(out.bytes, sizeof big);
  EXPECT_EQ(out.payload[119], 0xaa);
  std::memset(&out, 0x55, sizeof out);
  ASSERT_EQ(reader.try_read_prefix(out, sized_bytes).status, SizedRing::ReadStatus::kOk);
  EXPECT_EQ(out.bytes, 11u);
  EXPECT_EQ(out.payload[0], 1);
  EXPECT_EQ(out.payload[2], 3);
  EXPECT_EQ(out.payload[7], 9) << "whole words are copied: the rest of the last one comes along";
  EXPECT_EQ(out.payload[8], 0x55) << "words past the named size are not copied";
}

TEST(BroadcastRing, ShouldClampAnImpossibleSizeToTheSlot) {
  using SizedRing = BroadcastRing<Sized, 4>;
  auto ring = std::make_unique<SizedRing>();
  SizedRing::Reader reader(*ring);
  Sized liar{};
  liar.bytes = ~std::uint64_t{0};  // a writer that lies: the copy stops at the record
  liar.payload[119] = 7;
  ring->publish(liar, 1u << 30);
  Sized out{};
  ASSERT_EQ(reader.try_read_prefix(out, sized_bytes).status, SizedRing::ReadStatus::kOk);
  EXPECT_EQ(out.bytes, liar.bytes);
  EXPECT_EQ(out.payload[119], 7);
  Sized tiny{};
  tiny.bytes = 0;  // less than its own size word: one word is copied
  ring->publish(tiny, 0);
  ASSERT_EQ(reader.try_read_prefix(out, sized_bytes).status, SizedRing::ReadStatus::kOk);
  EXPECT_EQ(out.bytes, 0u);
}

// The run-time capacity form, in memory the caller owns (as in a shared
// segment): the same numbering, laps and losses as the compile-time form.
TEST(BroadcastRing, ShouldBehaveTheSameWithItsCapacityChosenAtRunTime) {
  using Dynamic = BroadcastRing<std::uint64_t, std::dynamic_extent>;
  const std::size_t bytes = Dynamic::bytes_for(8);
  EXPECT_EQ(bytes, sizeof(Dynamic) + 8 * 64);
  std::unique_ptr<void, decltype(&std::free)> memory(std::aligned_alloc(64, bytes), &std::free);
  ASSERT_NE(memory, nullptr);
  std::memset(memory.get(), 0xee, bytes);  // construction must not rely on zeroed memory
  Dynamic& ring = Dynamic::create_in(memory.get(), 8);
  EXPECT_EQ(ring.slot_count(), 8u);
  Dynamic::Reader reader(ring, 8);
  std::uint64_t v = 0;
  EXPECT_EQ(reader.try_read(v).status, Dynamic::ReadStatus::kEmpty);
  for (std::uint64_t i = 0; i < 30; ++i) EXPECT_EQ(ring.publish(i), i);
  const Dynamic::ReadResult r = reader.try_read(v);
  ASSERT_EQ(r.status, Dynamic::ReadStatus::kLapped);
  EXPECT_EQ(r.lost, 22u);
  for (std::uint64_t i = 22; i < 30; ++i) {
    ASSERT_EQ(reader.try_read(v).status, Dynamic::ReadStatus::kOk);
    EXPECT_EQ(v, i);
  }
  EXPECT_EQ(reader.try_read(v).status, Dynamic::ReadStatus::kEmpty);
  EXPECT_EQ(reader.total_lost(), 22u);
  Dynamic::Reader oldest(ring, 8, Dynamic::StartAt::kOldest);
  ASSERT_EQ(oldest.try_read(v).status, Dynamic::ReadStatus::kOk);
  EXPECT_EQ(v, 22u);
}

}  // namespace
