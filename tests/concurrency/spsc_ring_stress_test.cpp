// Concurrency stress for core::SpscRing: a real producer thread and a real
// consumer thread move NANOTICK_STRESS_ITEMS items (default 5,000,000;
// 1,000,000 under a sanitizer: CI-sized; --stress N for the long form) through the ring with every API pairing, and the
// consumer checks strict order (sequence numbers), payload integrity (a check
// word derived from the sequence number) and, at the end, that nothing was lost
// or duplicated (count and checksum against the producer's).
#include "core/spsc_ring.hpp"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <cstdint>
#include <memory>
#include <thread>

#include "support/stress.hpp"

namespace {

using nanotick::core::SpscRing;

using nanotick::test::mix;

std::uint64_t stress_items() { return nanotick::test::stress_items(5'000'000, 1'000'000); }

struct Item {
  std::uint64_t seq;
  std::uint64_t check;  // mix(seq)
};

// Spin briefly, then yield: the test machines have fewer cores than threads.
class Backoff {
 public:
  void pause() {
    if (++spins_ < 64) {
      _mm_pause();
    } else {
      spins_ = 0;
      std::this_thread::yield();
    }
  }
  void reset() { spins_ = 0; }

 private:
  int spins_ = 0;
};

// What the consumer saw; compared with the producer's numbers at the end.
struct Tally {
  std::uint64_t received = 0;
  std::uint64_t checksum = 0;
  std::uint64_t order_errors = 0;
  std::uint64_t payload_errors = 0;
  std::uint64_t next = 0;

  void see(const Item& item) {
    if (item.seq != next) {
      ++order_errors;
    }
    if (item.check != mix(item.seq)) {
      ++payload_errors;
    }
    next = item.seq + 1;
    ++received;
    checksum += item.check;
  }
};

// kWriteBursts: try_write() bursts of 1..37 values, each ended by publish()
// (a full ring publishes by itself, so the waits cannot deadlock); every
// third value is written in place (try_write_slot + end_write) instead.
enum class Produce { kTryPush, kClaimCommit, kWriteBursts };

template <std::size_t Capacity, typename Consume>
void run(Produce how, Consume consume, std::uint64_t n = stress_items()) {
  using Ring = SpscRing<Item, Capacity>;
  auto ring = std::make_unique<Ring>();
  std::uint64_t produced_checksum = 0;

  std::thread producer([&] {
    Backoff backoff;
    for (std::uint64_t i = 0; i < n; ++i) {
      const Item item{i, mix(i)};
      produced_checksum += item.check;
      if (how == Produce::kTryPush) {
        while (!ring->try_push(item)) {
          backoff.pause();
        }
      } else if (how == Produce::kWriteBursts) {
        if (i % 3 == 0) {
          Item* slot;
          while ((slot = ring->try_write_slot()) == nullptr) {
            backoff.pause();
          }
          slot->seq = item.seq;
          slot->check = item.check;
          ring->end_write();
        } else {
          while (!ring->try_write(item)) {
            backoff.pause();
          }
        }
        if (mix(i) % 37 == 0 || i + 1 == n) {
          ring->publish();
        }
      } else {
        Item* slot;
        while ((slot = ring->try_claim()) == nullptr) {
          backoff.pause();
        }
        slot->seq = item.seq;
        slot->check = item.check;
        ring->commit();
      }
      backoff.reset();
    }
  });

  Tally tally;
  Backoff backoff;
  while (tally.received < n) {
    if (consume(*ring, tally) == 0) {
      backoff.pause();
    } else {
      backoff.reset();
    }
  }
  producer.join();

  EXPECT_EQ(tally.received, n);
  EXPECT_EQ(tally.order_errors, 0u);
  EXPECT_EQ(tally.payload_errors, 0u);
  EXPECT_EQ(tally.checksum, produced_checksum);
  EXPECT_EQ(tally.next, n);
  EXPECT_TRUE(ring->empty());
  Item extra{};
  EXPECT_FALSE(ring->try_pop(extra));  // nothing duplicated at the end either
}

template <typename Ring>
std::size_t consume_try_pop(Ring& ring, Tally& tally) {
  Item item{};
  if (!ring.try_pop(item)) {
    return 0;
  }
  tally.see(item);
  return 1;
}

template <typename Ring>
std::size_t consume_front_pop(Ring& ring, Tally& tally) {
  const Item* item = ring.front();
  if (item == nullptr) {
    return 0;
  }
  tally.see(*item);
  ring.pop();
  return 1;
}

template <typename Ring>
std::size_t consume_pop_batch(Ring& ring, Tally& tally) {
  Item batch[64];
  const std::size_t got = ring.pop_batch(batch, 64);
  for (std::size_t i = 0; i < got; ++i) {
    tally.see(batch[i]);
  }
  return got;
}

template <typename Ring>
std::size_t consume_drain(Ring& ring, Tally& tally) {
  return ring.drain([&](const Item& item) { tally.see(item); }, 32);
}

TEST(SpscRingStress, ShouldDeliverEveryItemOnceInOrderWithTryPushTryPop) {
  run<1024>(Produce::kTryPush, consume_try_pop<SpscRing<Item, 1024>>);
}

TEST(SpscRingStress, ShouldDeliverEveryItemOnceInOrderWithClaimCommitAndFrontPop) {
  run<256>(Produce::kClaimCommit, consume_front_pop<SpscRing<Item, 256>>);
}

TEST(SpscRingStress, ShouldDeliverEveryItemOnceInOrderWithPopBatch) {
  run<1024>(Produce::kTryPush, consume_pop_batch<SpscRing<Item, 1024>>);
}

TEST(SpscRingStress, ShouldDeliverEveryItemOnceInOrderWithBurstsPublishedTogether) {
  // Bursts up to ~4x the ring: many of them fill it before their publish().
  run<16>(Produce::kWriteBursts, consume_drain<SpscRing<Item, 16>>, stress_items() / 2);
}

TEST(SpscRingStress, ShouldDeliverEveryItemOnceInOrderWithDrainOnATinyRing) {
  // Capacity 4: the ring is full or empty most of the time, so the producer's
  // cached-head refresh and the consumer's empty check race constantly. Every
  // item crosses a full/empty hand-over (often through a yield), so a quarter
  // of the items keeps the run time in line with the other tests.
  run<4>(Produce::kClaimCommit, consume_drain<SpscRing<Item, 4>>, stress_items() / 4);
}

}  // namespace
