#include "core/object_pool.hpp"

#include "support/allocation_counter.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace nanotick::core {
namespace {

// Tracks constructions and destructions so tests can see the pool run them.
struct Tracked {
  static inline int constructed = 0;
  static inline int destroyed = 0;
  static void reset() { constructed = destroyed = 0; }

  Tracked(std::uint64_t id_, std::int64_t price_) : id(id_), price(price_) { ++constructed; }
  ~Tracked() { ++destroyed; }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;

  std::uint64_t id;
  std::int64_t price;
  char pad[48] = {};
};

struct alignas(128) OverAligned {
  std::uint64_t x = 7;
};

struct ThrowsOnNegative {
  explicit ThrowsOnNegative(int v) : value(v) {
    if (v < 0) throw std::runtime_error("negative");
  }
  int value;
};

TEST(ObjectPool, ShouldReportCapacityAndStartEmpty) {
  ObjectPool<Tracked> pool(8);
  EXPECT_EQ(pool.capacity(), 8u);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.available(), 8u);
  EXPECT_EQ(pool.exhausted_count(), 0u);
}

TEST(ObjectPool, ShouldRejectZeroCapacityAtConstruction) { EXPECT_THROW(ObjectPool<int>(0), std::invalid_argument); }

TEST(ObjectPool, ShouldConstructInPlaceWithForwardedArguments) {
  Tracked::reset();
  ObjectPool<Tracked> pool(4);
  Tracked* t = pool.allocate(42u, -7);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->id, 42u);
  EXPECT_EQ(t->price, -7);
  EXPECT_EQ(Tracked::constructed, 1);
  EXPECT_EQ(Tracked::destroyed, 0);
  pool.release(t);
}

TEST(ObjectPool, ShouldRunDestructorOnRelease) {
  Tracked::reset();
  ObjectPool<Tracked> pool(4);
  Tracked* a = pool.allocate(1u, 1);
  Tracked* b = pool.allocate(2u, 2);
  pool.release(a);
  EXPECT_EQ(Tracked::destroyed, 1);
  pool.release(b);
  EXPECT_EQ(Tracked::destroyed, 2);
  EXPECT_EQ(Tracked::constructed, 2);
}

TEST(ObjectPool, ShouldReturnNullAndCountWhenExhausted) {
  ObjectPool<Tracked> pool(3);
  std::vector<Tracked*> live;
  for (int i = 0; i < 3; ++i) {
    live.push_back(pool.allocate(static_cast<std::uint64_t>(i), 0));
    ASSERT_NE(live.back(), nullptr);
  }
  Tracked::reset();
  EXPECT_EQ(pool.allocate(9u, 9), nullptr);
  EXPECT_EQ(pool.allocate(9u, 9), nullptr);
  EXPECT_EQ(pool.exhausted_count(), 2u);
  EXPECT_EQ(Tracked::constructed, 0) << "no object is constructed on exhaustion";
  EXPECT_EQ(pool.in_use(), 3u);
  EXPECT_EQ(pool.available(), 0u);
  // A release makes room again; the exhaustion count is history, not state.
  pool.release(live[1]);
  Tracked* again = pool.allocate(5u, 5);
  EXPECT_NE(again, nullptr);
  EXPECT_EQ(pool.exhausted_count(), 2u);
  pool.release(again);
  pool.release(live[0]);
  pool.release(live[2]);
}

TEST(ObjectPool, ShouldReuseReleasedSlotFirst) {
  ObjectPool<Tracked> pool(4);
  Tracked* a = pool.allocate(1u, 1);
  Tracked* b = pool.allocate(2u, 2);
  pool.release(a);
  Tracked* c = pool.allocate(3u, 3);
  EXPECT_EQ(c, a) << "the most recently released (cache-hot) slot is reused first";
  EXPECT_EQ(c->id, 3u);
  pool.release(b);
  pool.release(c);
}

TEST(ObjectPool, ShouldHandOutEverySlotExactlyOnceUntilReleased) {
  constexpr std::size_t kCap = 1000;
  ObjectPool<Tracked> pool(kCap);
  std::set<Tracked*> seen;
  std::vector<Tracked*> live;
  for (std::size_t i = 0; i < kCap; ++i) {
    Tracked* t = pool.allocate(i, 0);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(pool.owns(t));
    EXPECT_TRUE(seen.insert(t).second) << "slot handed out twice";
    live.push_back(t);
  }
  EXPECT_EQ(pool.allocate(0u, 0), nullptr);
  // Objects do not overlap and keep their contents.
  for (std::size_t i = 0; i < kCap; ++i) EXPECT_EQ(live[i]->id, i);
  for (Tracked* t : live) pool.release(t);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(ObjectPool, ShouldAccountInUseUnderRandomAllocateAndRelease) {
  Tracked::reset();
  constexpr std::size_t kCap = 257;
  ObjectPool<Tracked> pool(kCap);
  std::mt19937_64 rng(12345);
  std::vector<Tracked*> live;
  std::uint64_t expected_exhausted = 0;
  for (int step = 0; step < 200'000; ++step) {
    const bool do_alloc = live.empty() || (rng() % 100) < 55;
    if (do_alloc) {
      Tracked* t = pool.allocate(static_cast<std::uint64_t>(step), step);
      if (live.size() == kCap) {
        ASSERT_EQ(t, nullptr);
        ++expected_exhausted;
      } else {
        ASSERT_NE(t, nullptr);
        live.push_back(t);
      }
    } else {
      const std::size_t k = rng() % live.size();
      std::swap(live[k], live.back());
      ASSERT_EQ(live.back()->price, static_cast<std::int64_t>(live.back()->id));
      pool.release(live.back());
      live.pop_back();
    }
    ASSERT_EQ(pool.in_use(), live.size());
    ASSERT_EQ(pool.available(), kCap - live.size());
  }
  EXPECT_EQ(pool.exhausted_count(), expected_exhausted);
  EXPECT_GT(expected_exhausted, 0u) << "the walk should have hit the capacity limit";
  EXPECT_EQ(Tracked::constructed - Tracked::destroyed, static_cast<int>(live.size()));
  for (Tracked* t : live) pool.release(t);
}

TEST(ObjectPool, ShouldDestroyObjectsStillLiveWhenPoolIsDestroyed) {
  Tracked::reset();
  {
    ObjectPool<Tracked> pool(16);
    Tracked* a = pool.allocate(1u, 1);
    (void)pool.allocate(2u, 2);
    (void)pool.allocate(3u, 3);
    pool.release(a);
    EXPECT_EQ(Tracked::destroyed, 1);
  }
  EXPECT_EQ(Tracked::constructed, 3);
  EXPECT_EQ(Tracked::destroyed, 3) << "the two live objects are destroyed with the pool";
}

TEST(ObjectPool, ShouldReturnSlotToPoolWhenConstructorThrows) {
  ObjectPool<ThrowsOnNegative> pool(2);
  EXPECT_THROW((void)pool.allocate(-1), std::runtime_error);
  EXPECT_EQ(pool.in_use(), 0u);
  ThrowsOnNegative* a = pool.allocate(1);
  ThrowsOnNegative* b = pool.allocate(2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(pool.allocate(3), nullptr);
  pool.release(a);
  pool.release(b);
}

TEST(ObjectPool, ShouldHonourOverAlignedTypes) {
  ObjectPool<OverAligned> pool(5);
  std::vector<OverAligned*> live;
  for (int i = 0; i < 5; ++i) {
    OverAligned* p = pool.allocate();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(OverAligned), 0u);
    EXPECT_EQ(p->x, 7u);
    live.push_back(p);
  }
  for (OverAligned* p : live) pool.release(p);
}

TEST(ObjectPool, ShouldWorkForTypesSmallerThanALink) {
  ObjectPool<std::uint8_t> pool(3);
  std::uint8_t* a = pool.allocate(std::uint8_t{1});
  std::uint8_t* b = pool.allocate(std::uint8_t{2});
  std::uint8_t* c = pool.allocate(std::uint8_t{3});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a + *b + *c, 6);
  pool.release(b);
  pool.release(a);
  pool.release(c);
  EXPECT_EQ(pool.available(), 3u);
}

TEST(ObjectPool, ShouldNotOwnForeignPointers) {
  ObjectPool<Tracked> pool(4);
  Tracked* t = pool.allocate(1u, 1);
  Tracked outside(2u, 2);
  EXPECT_TRUE(pool.owns(t));
  EXPECT_FALSE(pool.owns(&outside));
  EXPECT_FALSE(pool.owns(nullptr));
  EXPECT_FALSE(pool.owns(reinterpret_cast<Tracked*>(reinterpret_cast<char*>(t) + 8)));
  pool.release(t);
}

TEST(ObjectPool, ShouldNotAllocateAfterConstruction) {
  ObjectPool<Tracked> pool(1024);
  std::vector<Tracked*> live(1024);
  const nanotick::test::AllocationScope allocations;
  for (int round = 0; round < 50; ++round) {
    for (std::size_t i = 0; i < live.size(); ++i) live[i] = pool.allocate(i, 1);
    (void)pool.allocate(0u, 0);  // exhausted
    for (Tracked* t : live) pool.release(t);
  }
  EXPECT_EQ(allocations.count(), 0u);
}

// The constructor writes all storage, so filling the pool must not fault a
// single page in (the hot path never page-faults). Minor faults are counted
// for this thread only.
TEST(ObjectPool, ShouldNotPageFaultOnHotPathAfterConstruction) {
  constexpr std::size_t kCap = 1 << 18;  // 16 MiB of 64-byte slots
  ObjectPool<Tracked> pool(kCap);
  std::vector<Tracked*> live(kCap);  // value-initialised: already touched
  // One allocate/release first: the code path's own first-run costs (under
  // the asan preset, libFuzzer's coverage counters live in pages the first
  // call writes) are not the pool's. It takes the first slot, which the
  // constructor touched, and gives it back.
  pool.release(pool.allocate(std::size_t{0}, 0));
  rusage before{};
  rusage after{};
  getrusage(RUSAGE_THREAD, &before);
  for (std::size_t i = 0; i < kCap; ++i) live[i] = pool.allocate(i, 0);
  getrusage(RUSAGE_THREAD, &after);
  // A pool that did not fault its slots in at construction takes one fault per
  // page here: 4096. The allowance of 2 is the machine's, not the pool's: this
  // VM runs DAMON (kdamond), which may reclaim a page the constructor touched
  // before the loop reaches it, and the sanitizer runtime maps pages of its own
  // lazily; either made single faults show up in one CI run in a few (a fault
  // count of 1 and of 2 has each been seen, under the asan preset).
  EXPECT_LE(after.ru_minflt - before.ru_minflt, 2) << "allocate() touched pages not faulted in";
  EXPECT_EQ(after.ru_majflt - before.ru_majflt, 0);
  for (Tracked* t : live) pool.release(t);
}

#if !defined(NDEBUG)
TEST(ObjectPoolDeathTest, ShouldAbortOnDoubleReleaseInDebugBuilds) {
  ObjectPool<Tracked> pool(4);
  Tracked* t = pool.allocate(1u, 1);
  Tracked* keep = pool.allocate(2u, 2);
  pool.release(t);
  EXPECT_DEATH(pool.release(t), "double release");
  pool.release(keep);
}

TEST(ObjectPoolDeathTest, ShouldAbortOnForeignPointerInDebugBuilds) {
  ObjectPool<Tracked> pool(4);
  ObjectPool<Tracked> other(4);
  Tracked* t = other.allocate(1u, 1);
  EXPECT_DEATH(pool.release(t), "does not belong to this pool");
  Tracked* misaligned = reinterpret_cast<Tracked*>(reinterpret_cast<char*>(pool.allocate(2u, 2)) + 8);
  EXPECT_DEATH(pool.release(misaligned), "does not belong to this pool");
  other.release(t);
}
#endif

#if defined(__SANITIZE_ADDRESS__)
TEST(ObjectPoolDeathTest, ShouldReportUseAfterReleaseUnderAddressSanitizer) {
  ObjectPool<Tracked> pool(4);
  Tracked* t = pool.allocate(1u, 1);
  Tracked* keep = pool.allocate(2u, 2);
  pool.release(t);
  volatile std::uint64_t* id = &t->id;
  EXPECT_DEATH((void)*id, "use-after-poison");
  pool.release(keep);
}
#endif

}  // namespace
}  // namespace nanotick::core
