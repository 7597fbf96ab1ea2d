// Concurrency stress for core::BroadcastRing: one writer thread publishes
// NANOTICK_STRESS_ITEMS messages (default 5,000,000; 1,000,000 under a sanitizer: CI-sized; --stress N for the long
// form) at full speed while three reader threads of different speeds read. Each reader checks that every message it
// receives is exactly the next one it is owed (so the sequence is strictly increasing and every reported loss was
// exact), that no copy is torn (all payload words derive from the sequence
// number), and at the end that received + reported lost == published.
#include "core/broadcast_ring.hpp"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "support/stress.hpp"

namespace {

using nanotick::core::BroadcastRing;

using nanotick::test::mix;

std::uint64_t stress_items() { return nanotick::test::stress_items(5'000'000, 1'000'000); }

// 32 copy words (the last one half padding): a copy long enough that a reader
// is regularly caught mid-copy by the writer. All checked fields derive from seq.
constexpr std::size_t kWords = 30;
struct Message {
  std::uint64_t seq;
  std::uint64_t words[kWords];
  std::uint32_t tail;
};
static_assert(sizeof(Message) == 256);  // 252 bytes of fields + 4 of tail padding

Message make(std::uint64_t seq) {
  Message m{};
  m.seq = seq;
  for (std::size_t i = 0; i < kWords; ++i) {
    m.words[i] = mix(seq * 64 + i);
  }
  m.tail = static_cast<std::uint32_t>(mix(seq * 64 + kWords));
  return m;
}

bool intact(const Message& m) {
  for (std::size_t i = 0; i < kWords; ++i) {
    if (m.words[i] != mix(m.seq * 64 + i)) {
      return false;
    }
  }
  return m.tail == static_cast<std::uint32_t>(mix(m.seq * 64 + kWords));
}

struct ReaderStats {
  std::uint64_t received = 0;
  std::uint64_t lost = 0;
  std::uint64_t lapped_events = 0;
  std::uint64_t order_errors = 0;
  std::uint64_t torn = 0;
  std::uint64_t position = 0;
};

// Reader speeds: work per message (busy iterations) and how often to yield.
struct Pace {
  int work;
  int yield_every;
};

// writer_yield_every: 0 = publish flat out; k = yield the CPU every k messages,
// so that on a machine with fewer cores than threads the readers get to run
// while the writer is mid-publish instead of only between its time slices.
template <std::size_t Capacity>
void run(const std::array<Pace, 3>& paces, std::uint64_t writer_yield_every) {
  using Ring = BroadcastRing<Message, Capacity>;
  const std::uint64_t n = stress_items();
  auto ring = std::make_unique<Ring>();
  std::atomic<bool> writer_done{false};
  std::atomic<int> readers_ready{0};
  std::array<ReaderStats, 3> stats{};

  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < paces.size(); ++r) {
    readers.emplace_back([&, r] {
      typename Ring::Reader reader(*ring);  // joins before the first publish
      readers_ready.fetch_add(1, std::memory_order_release);
      ReaderStats& s = stats[r];
      const Pace pace = paces[r];
      std::uint64_t expected = 0;
      int idle = 0;
      for (;;) {
        const bool done = writer_done.load(std::memory_order_acquire);
        Message m{};
        const auto result = reader.try_read(m);
        if (result.status == Ring::ReadStatus::kOk) {
          if (m.seq != expected) {
            ++s.order_errors;
          }
          if (!intact(m)) {
            ++s.torn;
          }
          expected = m.seq + 1;
          ++s.received;
          for (int i = 0; i < pace.work; ++i) {
            asm volatile("" ::: "memory");  // a busy loop the compiler keeps
          }
          if (pace.yield_every != 0 && s.received % static_cast<std::uint64_t>(pace.yield_every) == 0) {
            std::this_thread::yield();
          }
        } else if (result.status == Ring::ReadStatus::kLapped) {
          s.lost += result.lost;
          ++s.lapped_events;
          expected += result.lost;
        } else if (done) {
          break;  // everything was published before `done`: we are at the end
        } else if (++idle % 64 == 0) {
          std::this_thread::yield();
        } else {
          _mm_pause();
        }
      }
      s.position = reader.position();
    });
  }
  while (readers_ready.load(std::memory_order_acquire) != static_cast<int>(paces.size())) {
    std::this_thread::yield();
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    ring->publish(make(i));
    if (writer_yield_every != 0 && i % writer_yield_every == 0) {
      std::this_thread::yield();
    }
  }
  writer_done.store(true, std::memory_order_release);
  for (std::thread& t : readers) {
    t.join();
  }

  EXPECT_EQ(ring->published(), n);
  for (std::size_t r = 0; r < stats.size(); ++r) {
    const ReaderStats& s = stats[r];
    std::printf("  reader %zu: received %llu, lost %llu in %llu laps\n", r, static_cast<unsigned long long>(s.received),
                static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.lapped_events));
    EXPECT_EQ(s.order_errors, 0u) << "reader " << r;
    EXPECT_EQ(s.torn, 0u) << "reader " << r;
    EXPECT_EQ(s.received + s.lost, n) << "reader " << r;
    EXPECT_EQ(s.position, n) << "reader " << r;
  }
}

TEST(BroadcastRingStress, ShouldNeverDeliverTornOrMisorderedMessagesOnATinyRing) {
  // 2 slots: a reader at the live edge copies message n while the writer is
  // already overwriting its slot with n + 2, so torn copies happen constantly
  // and must all be rejected (verified: dropping the seqlock re-check makes
  // this test fail).
  run<2>({Pace{0, 0}, Pace{20, 0}, Pace{0, 1000}}, 256);
}

TEST(BroadcastRingStress, ShouldAccountForEveryMessageWithReadersOfMixedSpeed) {
  // 4096 slots: the fast reader mostly keeps up, the slow ones are lapped.
  run<4096>({Pace{0, 0}, Pace{50, 0}, Pace{200, 100}}, 0);
}

// The form the market data ring uses: capacity chosen at run time (slots after
// the object, in memory the test owns) and messages that say their own size,
// published and read as only that many bytes. The length itself races with
// the writer here: a torn length must only ever bound a copy the re-check
// then rejects.
struct SizedMessage {
  std::uint64_t head;  // low 16 bits: bytes of the message (16..256); high 48: seq
  std::uint64_t words[31];
};
static_assert(sizeof(SizedMessage) == 256);

std::uint64_t sized_length(std::uint64_t seq) { return 16 + (mix(seq) % 31) * 8; }

TEST(BroadcastRingStress, ShouldNeverDeliverATornSizedMessageFromARunTimeRing) {
  using Ring = BroadcastRing<SizedMessage, std::dynamic_extent>;
  constexpr std::size_t kSlots = 4;
  const std::uint64_t n = stress_items() / 5;
  std::unique_ptr<void, decltype(&std::free)> memory(std::aligned_alloc(64, Ring::bytes_for(kSlots)), &std::free);
  ASSERT_NE(memory, nullptr);
  Ring& ring = Ring::create_in(memory.get(), kSlots);
  std::atomic<bool> done{false};
  std::atomic<int> ready{0};
  std::array<ReaderStats, 2> stats{};
  std::vector<std::thread> readers;
  for (std::size_t r = 0; r < stats.size(); ++r) {
    readers.emplace_back([&, r] {
      Ring::Reader reader(ring, kSlots);
      ready.fetch_add(1, std::memory_order_release);
      ReaderStats& st = stats[r];
      std::uint64_t expected = 0;
      for (;;) {
        const bool finished = done.load(std::memory_order_acquire);
        SizedMessage m{};
        const auto result = reader.try_read_prefix(m, [](std::uint64_t head) { return head & 0xffff; });
        if (result.status == Ring::ReadStatus::kOk) {
          const std::uint64_t seq = m.head >> 16;
          const std::uint64_t length = m.head & 0xffff;
          if (seq != (expected & ((std::uint64_t{1} << 48) - 1))) ++st.order_errors;
          bool whole = length == sized_length(expected);
          for (std::size_t i = 0; whole && i < (length - 8) / 8; ++i) whole = m.words[i] == mix(expected * 64 + i);
          if (!whole) ++st.torn;
          ++expected;
          ++st.received;
        } else if (result.status == Ring::ReadStatus::kLapped) {
          st.lost += result.lost;
          expected += result.lost;
        } else if (finished) {
          break;
        } else if (r == 1) {
          std::this_thread::yield();  // the slow reader
        } else {
          _mm_pause();
        }
      }
      st.position = reader.position();
    });
  }
  while (ready.load(std::memory_order_acquire) != static_cast<int>(stats.size())) std::this_thread::yield();
  for (std::uint64_t i = 0; i < n; ++i) {
    SizedMessage m{};
    const std::uint64_t length = sized_length(i);
    m.head = (i << 16) | length;
    for (std::size_t k = 0; k < (length - 8) / 8; ++k) m.words[k] = mix(i * 64 + k);
    ring.publish(m, length);
    if (i % 256 == 0) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  for (std::size_t r = 0; r < stats.size(); ++r) {
    EXPECT_EQ(stats[r].order_errors, 0u) << "reader " << r;
    EXPECT_EQ(stats[r].torn, 0u) << "reader " << r;
    EXPECT_EQ(stats[r].received + stats[r].lost, n) << "reader " << r;
    EXPECT_EQ(stats[r].position, n) << "reader " << r;
  }
}

}  // namespace
