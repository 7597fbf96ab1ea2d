// Unit tests for core::SpscRing (single thread, plus one two-process test of the
// shared-memory claim). Concurrency is in tests/concurrency/spsc_ring_stress_test.cpp.
#include "core/spsc_ring.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace {

using nanotick::core::SpscRing;

template <typename T, std::size_t N>
concept ValidRing = requires { typename SpscRing<T, N>; };

struct NotTriviallyCopyable {
  NotTriviallyCopyable(const NotTriviallyCopyable&) {}
};

// Payloads of awkward sizes: 3 bytes (no padding), 24 and 100 bytes.
struct Tiny {
  std::uint8_t b[3];
};
struct Order {
  std::uint64_t id;
  std::int64_t price;
  std::uint32_t qty;
  std::uint16_t side;
  std::uint16_t flags;
};
struct Big {
  std::uint32_t seq;
  std::uint8_t bytes[96];
};
static_assert(sizeof(Tiny) == 3 && sizeof(Order) == 24 && sizeof(Big) == 100);

TEST(SpscRing, ShouldRejectCapacityNotPowerOfTwo) {
  static_assert(ValidRing<std::uint64_t, 1>);
  static_assert(ValidRing<std::uint64_t, 2>);
  static_assert(ValidRing<std::uint64_t, 1024>);
  static_assert(!ValidRing<std::uint64_t, 0>);
  static_assert(!ValidRing<std::uint64_t, 3>);
  static_assert(!ValidRing<std::uint64_t, 1000>);
  SUCCEED();
}

TEST(SpscRing, ShouldRejectPayloadThatIsNotTriviallyCopyable) {
  static_assert(!ValidRing<NotTriviallyCopyable, 8>);
  static_assert(ValidRing<Order, 8>);
  SUCCEED();
}

TEST(SpscRing, ShouldHaveFixedPointerFreeLayoutWithIndicesOnSeparateCacheLines) {
  using Ring = SpscRing<std::uint64_t, 8>;
  static_assert(std::is_standard_layout_v<Ring>);
  static_assert(alignof(Ring) == nanotick::core::kCacheLine);
  static_assert(sizeof(Ring) % nanotick::core::kCacheLine == 0);
  // Producer line + consumer line + 8 slots of {seq, value} = 64 + 64 + 128.
  static_assert(sizeof(Ring) == 256);
  EXPECT_EQ(Ring::capacity(), 8u);
}

TEST(SpscRing, ShouldReportEmptyWhenNothingWasPushed) {
  SpscRing<std::uint64_t, 4> ring;
  std::uint64_t out = 42;
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_EQ(out, 42u);
  EXPECT_EQ(ring.front(), nullptr);
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.size(), 0u);
}

TEST(SpscRing, ShouldReportFullInsteadOfOverwriting) {
  SpscRing<std::uint64_t, 4> ring;
  for (std::uint64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.try_push(i));
  }
  EXPECT_FALSE(ring.try_push(99));
  EXPECT_EQ(ring.try_claim(), nullptr);
  EXPECT_EQ(ring.size(), 4u);
  // The oldest value is intact: nothing was overwritten.
  for (std::uint64_t i = 0; i < 4; ++i) {
    std::uint64_t out = 0;
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
  std::uint64_t out = 0;
  EXPECT_FALSE(ring.try_pop(out));
}

TEST(SpscRing, ShouldAcceptPushAgainOnceConsumerFreesASlot) {
  SpscRing<std::uint64_t, 2> ring;
  ASSERT_TRUE(ring.try_push(1));
  ASSERT_TRUE(ring.try_push(2));
  ASSERT_FALSE(ring.try_push(3));
  std::uint64_t out = 0;
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_TRUE(ring.try_push(3));
  EXPECT_FALSE(ring.try_push(4));
}

TEST(SpscRing, ShouldResumeAfterFullOnlyOnceTwoCacheLinesOfSlotsAreFree) {
  // 8-byte values live in 16-byte slots: two cache lines hold 8 of them. After
  // finding the ring full the producer waits for 8 free slots, so it never
  // writes the line the consumer is about to read.
  auto ring = std::make_unique<SpscRing<std::uint64_t, 64>>();
  std::uint64_t next = 0;
  while (ring->try_push(next)) {
    ++next;
  }
  ASSERT_EQ(next, 64u);
  std::uint64_t out = 0;
  for (std::uint64_t freed = 1; freed < 8; ++freed) {
    ASSERT_TRUE(ring->try_pop(out));
    EXPECT_FALSE(ring->try_push(next)) << freed << " free slots";
    EXPECT_EQ(ring->try_claim(), nullptr);
  }
  ASSERT_TRUE(ring->try_pop(out));
  EXPECT_EQ(out, 7u);
  for (int i = 0; i < 8; ++i) {  // then it refills all 8 in a burst
    EXPECT_TRUE(ring->try_push(next++));
  }
  EXPECT_FALSE(ring->try_push(next));
  for (std::uint64_t expected = 8; expected < next; ++expected) {
    ASSERT_TRUE(ring->try_pop(out));
    ASSERT_EQ(out, expected);  // hysteresis never reorders or drops
  }
}

TEST(SpscRing, ShouldKeepFifoOrderAcrossManyWrapArounds) {
  SpscRing<std::uint64_t, 8> ring;
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  // Varying fill levels so that wrap-around happens at every slot offset.
  for (int round = 0; round < 10000; ++round) {
    const int burst = 1 + round % 8;
    for (int i = 0; i < burst; ++i) {
      ASSERT_TRUE(ring.try_push(next_in++));
    }
    EXPECT_EQ(ring.size(), static_cast<std::size_t>(burst));
    for (int i = 0; i < burst; ++i) {
      std::uint64_t out = 0;
      ASSERT_TRUE(ring.try_pop(out));
      ASSERT_EQ(out, next_out++);
    }
    ASSERT_TRUE(ring.empty());
  }
  EXPECT_GT(next_in, 8u * 1000u);  // wrapped thousands of times
}

TEST(SpscRing, ShouldKeepFifoOrderForEveryBurstSizeAndPartialPop) {
  // The consumer learns about several values at once (look-ahead); pushes and
  // pops of every size, interleaved, must still come out exactly in order.
  auto ring = std::make_unique<SpscRing<std::uint64_t, 64>>();
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  for (int round = 0; round < 5000; ++round) {
    const std::size_t push = 1 + static_cast<std::size_t>(round * 7) % 64;
    for (std::size_t i = 0; i < push && ring->try_push(next_in); ++i) {
      ++next_in;
    }
    const std::size_t pop = 1 + static_cast<std::size_t>(round * 13) % 64;
    for (std::size_t i = 0; i < pop; ++i) {
      std::uint64_t out = 0;
      if (!ring->try_pop(out)) {
        ASSERT_EQ(next_out, next_in);  // empty exactly when everything was popped
        break;
      }
      ASSERT_EQ(out, next_out++);
    }
  }
  EXPECT_GT(next_out, 64u * 1000u);
}

TEST(SpscRing, ShouldNotPublishClaimedSlotBeforeCommit) {
  SpscRing<Order, 4> ring;
  Order* slot = ring.try_claim();
  ASSERT_NE(slot, nullptr);
  slot->id = 7;
  slot->price = -125;
  slot->qty = 300;
  EXPECT_EQ(ring.front(), nullptr);
  EXPECT_TRUE(ring.empty());
  // A second claim before commit hands out the same slot.
  EXPECT_EQ(ring.try_claim(), slot);
  ring.commit();
  const Order* got = ring.front();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->id, 7u);
  EXPECT_EQ(got->price, -125);
  EXPECT_EQ(got->qty, 300u);
}

TEST(SpscRing, ShouldNotPublishWrittenValuesBeforePublish) {
  SpscRing<std::uint64_t, 8> ring;
  ASSERT_TRUE(ring.try_write(10));
  ASSERT_TRUE(ring.try_write(11));
  std::uint64_t out = 0;
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_TRUE(ring.empty());
  ring.publish();
  EXPECT_EQ(ring.size(), 2u);
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 10u);
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 11u);
  ring.publish();  // nothing new: publishes nothing
  EXPECT_FALSE(ring.try_pop(out));
}

TEST(SpscRing, ShouldKeepOneOrderAcrossPublishedBurstsPushesAndClaims) {
  SpscRing<std::uint64_t, 8> ring;
  ASSERT_TRUE(ring.try_write(1));
  ASSERT_TRUE(ring.try_write(2));
  ring.publish();
  ASSERT_TRUE(ring.try_push(3));
  std::uint64_t* slot = ring.try_claim();
  ASSERT_NE(slot, nullptr);
  *slot = 4;
  ring.commit();
  ASSERT_TRUE(ring.try_write(5));
  ring.publish();
  std::vector<std::uint64_t> got;
  EXPECT_EQ(ring.drain([&](std::uint64_t v) { got.push_back(v); }), 5u);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
}

TEST(SpscRing, ShouldPublishWrittenValuesWhenFullSoTheConsumerCanMakeRoom) {
  // A producer waiting on a full ring of unpublished values would wait
  // forever; the failed write publishes them instead.
  SpscRing<std::uint64_t, 4> ring;
  for (std::uint64_t i = 0; i < 4; ++i) ASSERT_TRUE(ring.try_write(i));
  std::uint64_t out = 0;
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_FALSE(ring.try_write(4));
  EXPECT_EQ(ring.size(), 4u);
  for (std::uint64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
  EXPECT_TRUE(ring.try_write(4));
  ring.publish();
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 4u);
}

TEST(SpscRing, ShouldWriteInPlaceUnpublishedUntilPublish) {
  SpscRing<Order, 4> ring;
  Order* slot = ring.try_write_slot();
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(ring.try_write_slot(), slot);  // same slot until end_write()
  slot->id = 7;
  slot->qty = 70;
  ring.end_write();
  ASSERT_TRUE(ring.try_write(Order{8, 0, 80, 0, 0}));
  Order* next = ring.try_write_slot();
  ASSERT_NE(next, nullptr);
  EXPECT_NE(next, slot);
  next->id = 9;
  next->qty = 90;
  ring.end_write();
  EXPECT_EQ(ring.front(), nullptr);
  ring.publish();
  std::vector<std::uint64_t> got;
  EXPECT_EQ(ring.drain([&](const Order& o) { got.push_back(o.id * 1000 + o.qty); }), 3u);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{7070, 8080, 9090}));
}

TEST(SpscRing, ShouldPublishWhenNoSlotToWriteInPlaceSoTheConsumerCanMakeRoom) {
  SpscRing<std::uint64_t, 4> ring;
  for (std::uint64_t i = 0; i < 4; ++i) {
    std::uint64_t* slot = ring.try_write_slot();
    ASSERT_NE(slot, nullptr);
    *slot = i;
    ring.end_write();
  }
  EXPECT_EQ(ring.size(), 0u);
  EXPECT_EQ(ring.try_write_slot(), nullptr);
  EXPECT_EQ(ring.size(), 4u);
  std::vector<std::uint64_t> got;
  EXPECT_EQ(ring.drain([&](std::uint64_t v) { got.push_back(v); }), 4u);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_NE(ring.try_write_slot(), nullptr);
}

TEST(SpscRing, ShouldWriteAndReadInPlaceWithClaimCommitFrontPop) {
  SpscRing<Order, 4> ring;
  for (std::uint64_t i = 0; i < 100; ++i) {
    Order* slot = ring.try_claim();
    ASSERT_NE(slot, nullptr);
    slot->id = i;
    slot->qty = static_cast<std::uint32_t>(i * 3);
    ring.commit();
    const Order* got = ring.front();
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->id, i);
    EXPECT_EQ(got->qty, i * 3);
    // front() does not consume: the producer still sees the slot as taken.
    EXPECT_EQ(ring.front(), got);
    EXPECT_EQ(ring.size(), 1u);
    ring.pop();
    EXPECT_EQ(ring.front(), nullptr);
  }
}

TEST(SpscRing, ShouldKeepFrontSlotOwnedByConsumerUntilPop) {
  SpscRing<std::uint64_t, 2> ring;
  ASSERT_TRUE(ring.try_push(10));
  ASSERT_TRUE(ring.try_push(11));
  const std::uint64_t* front = ring.front();
  ASSERT_NE(front, nullptr);
  EXPECT_FALSE(ring.try_push(12));  // the slot under `front` is not reusable
  EXPECT_EQ(*front, 10u);
  ring.pop();
  EXPECT_TRUE(ring.try_push(12));
}

TEST(SpscRing, ShouldPopBatchNoMoreThanAvailable) {
  SpscRing<std::uint64_t, 16> ring;
  for (std::uint64_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(ring.try_push(i));
  }
  std::array<std::uint64_t, 16> out{};
  ASSERT_EQ(ring.pop_batch(out.data(), out.size()), 5u);
  for (std::uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(out[i], i);
  }
  EXPECT_EQ(ring.pop_batch(out.data(), out.size()), 0u);
  EXPECT_TRUE(ring.empty());
}

TEST(SpscRing, ShouldPopBatchNoMoreThanMaxAndKeepTheRest) {
  SpscRing<std::uint64_t, 16> ring;
  for (std::uint64_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(ring.try_push(i));
  }
  std::array<std::uint64_t, 4> out{};
  ASSERT_EQ(ring.pop_batch(out.data(), out.size()), 4u);
  EXPECT_EQ(out[3], 3u);
  EXPECT_EQ(ring.size(), 6u);
  std::uint64_t next = 0;
  ASSERT_TRUE(ring.try_pop(next));
  EXPECT_EQ(next, 4u);
}

TEST(SpscRing, ShouldPopBatchAcrossTheWrapPoint) {
  SpscRing<std::uint64_t, 8> ring;
  std::uint64_t sink = 0;
  for (std::uint64_t i = 0; i < 6; ++i) {  // move the indices near the end
    ASSERT_TRUE(ring.try_push(i));
    ASSERT_TRUE(ring.try_pop(sink));
  }
  for (std::uint64_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(ring.try_push(100 + i));
  }
  std::array<std::uint64_t, 32> out{};
  ASSERT_EQ(ring.pop_batch(out.data(), out.size()), 8u);  // never more than capacity
  for (std::uint64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i], 100 + i);
  }
}

TEST(SpscRing, ShouldDrainInOrderAndFreeAllDrainedSlots) {
  SpscRing<std::uint64_t, 8> ring;
  for (std::uint64_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(ring.try_push(i));
  }
  std::vector<std::uint64_t> seen;
  EXPECT_EQ(ring.drain([&](const std::uint64_t& v) { seen.push_back(v); }, 5), 5u);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  // Exactly the 5 drained slots are free again.
  for (std::uint64_t i = 8; i < 13; ++i) {
    EXPECT_TRUE(ring.try_push(i));
  }
  EXPECT_FALSE(ring.try_push(13));
  seen.clear();
  EXPECT_EQ(ring.drain([&](const std::uint64_t& v) { seen.push_back(v); }), 8u);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(ring.drain([&](const std::uint64_t& v) { seen.push_back(v); }), 0u);
}

TEST(SpscRing, ShouldCarryThreeBytePayloads) {
  SpscRing<Tiny, 4> ring;
  for (std::uint8_t i = 0; i < 200; ++i) {
    const Tiny in{{i, static_cast<std::uint8_t>(i + 1), static_cast<std::uint8_t>(~i)}};
    ASSERT_TRUE(ring.try_push(in));
    Tiny out{};
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out.b[0], i);
    EXPECT_EQ(out.b[1], static_cast<std::uint8_t>(i + 1));
    EXPECT_EQ(out.b[2], static_cast<std::uint8_t>(~i));
  }
}

TEST(SpscRing, ShouldCarryHundredBytePayloadsIntact) {
  auto ring = std::make_unique<SpscRing<Big, 64>>();
  for (std::uint32_t round = 0; round < 10; ++round) {
    for (std::uint32_t i = 0; i < 64; ++i) {
      Big b{};
      b.seq = round * 64 + i;
      for (std::size_t k = 0; k < sizeof(b.bytes); ++k) {
        b.bytes[k] = static_cast<std::uint8_t>(b.seq * 31 + k);
      }
      ASSERT_TRUE(ring->try_push(b));
    }
    std::array<Big, 64> out{};
    ASSERT_EQ(ring->pop_batch(out.data(), out.size()), 64u);
    for (std::uint32_t i = 0; i < 64; ++i) {
      ASSERT_EQ(out[i].seq, round * 64 + i);
      for (std::size_t k = 0; k < sizeof(Big::bytes); ++k) {
        ASSERT_EQ(out[i].bytes[k], static_cast<std::uint8_t>(out[i].seq * 31 + k));
      }
    }
  }
}

TEST(SpscRing, ShouldWorkInSharedMemoryBetweenTwoProcesses) {
  using Ring = SpscRing<Order, 64>;
  constexpr std::uint64_t kItems = 100000;
  void* mem = mmap(nullptr, sizeof(Ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  Ring* ring = new (mem) Ring();

  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {  // producer process
    for (std::uint64_t i = 0; i < kItems; ++i) {
      const Order o{i, static_cast<std::int64_t>(i) * -3, static_cast<std::uint32_t>(i), 1, 2};
      while (!ring->try_push(o)) {
        sched_yield();
      }
    }
    _exit(0);
  }
  std::uint64_t expected = 0;
  bool in_order = true;
  while (expected < kItems) {
    Order o{};
    if (!ring->try_pop(o)) {
      sched_yield();
      continue;
    }
    in_order = in_order && o.id == expected && o.price == static_cast<std::int64_t>(expected) * -3;
    ++expected;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(in_order);
  EXPECT_TRUE(ring->empty());
  ring->~Ring();
  munmap(mem, sizeof(Ring));
}

}  // namespace
