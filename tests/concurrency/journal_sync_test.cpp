// The journal's three threads at once, as with the batch fsync policy: the
// sequencer appends into the staging ring, the journal thread writes the
// files across segment switches (flush), and a third syncs (the snapshotter
// may call sync() while the journal thread does). durable_seq only moves
// forward, never past what was written, and a final sync covers everything.
// Run under TSan by `./nanotick test`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/sequencing/journal_writer.hpp"

namespace nx = nanotick::exchange;
namespace fs = std::filesystem;

TEST(JournalSync, SyncOnAnotherThreadWhileAppending) {
  const std::string dir =
      (fs::temp_directory_path() / ("nanotick-journal-sync-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  constexpr std::uint64_t kRecords = 20'000;
  {
    nx::JournalWriter w(dir, 64 * 1024, 7, nx::JournalTail{});
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> appended{0};  // highest seq handed to append() so far
    std::thread journal_thread([&] {
      while (!done.load(std::memory_order_acquire)) ASSERT_TRUE(w.flush());
    });
    std::thread syncer([&] {
      std::uint64_t last = 0;
      while (!done.load(std::memory_order_acquire)) {
        ASSERT_TRUE(w.sync());
        const std::uint64_t d = w.durable_seq();
        ASSERT_GE(d, last);
        ASSERT_LE(d, w.written_seq());
        ASSERT_LE(d, appended.load(std::memory_order_acquire));
        last = d;
      }
    });
    for (std::uint64_t s = 1; s <= kRecords; ++s) {
      nanotick::engine::Request r = nanotick::engine::make_cancel(0, 1, s);
      // Announced before the append: a sync may see the record as soon as
      // append() publishes it, before append() returns.
      appended.store(s, std::memory_order_release);
      while (!w.append(r)) ASSERT_FALSE(w.failed());  // the ring full: the journal thread catches up
    }
    done.store(true, std::memory_order_release);
    journal_thread.join();
    syncer.join();
    ASSERT_TRUE(w.finish(true));
    EXPECT_EQ(w.durable_seq(), kRecords);
    EXPECT_GT(w.segments_created(), 10u);
  }
  std::uint64_t n = 0;
  const auto rec = nx::recover_journal(dir, 7, 0, [&](const nx::JournalRecord& r) { EXPECT_EQ(r.seq, ++n); });
  EXPECT_EQ(n, kRecords);
  EXPECT_TRUE(rec.truncation.empty());
  fs::remove_all(dir);
}
