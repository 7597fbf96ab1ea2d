// The journal's staging ring (src/exchange/sequencing/journal_staging.hpp): what a
// killed run left in it comes back at the next start, a ring that is not
// this journal's is never replayed, a ring that proves records missing is
// refused, and the appending thread takes no page fault and makes no system
// call in steady state.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/request.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/sequencing/journal_staging.hpp"
#include "exchange/sequencing/journal_writer.hpp"

namespace {

namespace fs = std::filesystem;
namespace ne = nanotick::engine;
namespace nx = nanotick::exchange;

constexpr std::uint64_t kFingerprint = 0x5eedf00d;
constexpr std::uint64_t kSegment = 64 * 1024;

ne::Request request_for(std::uint64_t seq) {
  ne::Request r =
      ne::make_new(0, static_cast<ne::ClientId>(1 + seq % 5), seq, seq % 2 ? ne::Side::kBuy : ne::Side::kSell,
                   ne::OrderType::kLimit, static_cast<ne::Price>(1000 + seq % 97), 1);
  r.event_id = seq;
  return r;
}

class JournalStagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("nanotick-staging-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name()))
              .string();
    fs::remove_all(dir);
  }
  void TearDown() override {
    if (const std::string ring = nx::staging_ring_path(dir); !ring.empty()) fs::remove(ring);
    fs::remove_all(dir);
  }
  nx::JournalRecovery recover(std::vector<std::uint64_t>& seqs) {
    return nx::recover_journal(dir, kFingerprint, 0, [&](const nx::JournalRecord& r) {
      const ne::Request want = request_for(r.seq);
      EXPECT_EQ(std::memcmp(&r.request, &want, sizeof want), 0) << "seq " << r.seq;
      seqs.push_back(r.seq);
    });
  }
  static void expect_run(const std::vector<std::uint64_t>& seqs, std::uint64_t first, std::uint64_t last) {
    ASSERT_EQ(seqs.size(), last - first + 1);
    for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], first + i);
  }
  std::string dir;
};

TEST_F(JournalStagingTest, RecordsAppendedButNeverWrittenComeBackAndReachTheFiles) {
  {
    nx::JournalWriter w(dir, kSegment, kFingerprint, nx::JournalTail{});
    for (std::uint64_t s = 1; s <= 300; ++s) ASSERT_TRUE(w.append(request_for(s)));
    ASSERT_TRUE(w.flush());
    for (std::uint64_t s = 301; s <= 1500; ++s) ASSERT_TRUE(w.append(request_for(s)));
    EXPECT_EQ(w.written_seq(), 300u);
    EXPECT_EQ(w.appended_seq(), 1500u);
    // Destroyed without finish(): as a kill -9 leaves it.
  }
  ASSERT_TRUE(fs::exists(nx::staging_ring_path(dir)));
  std::vector<std::uint64_t> seqs;
  auto rec =
      nx::plan_journal_recovery(dir, kFingerprint, 0, [&](const nx::JournalRecord& r) { seqs.push_back(r.seq); });
  expect_run(seqs, 1, 1500);
  EXPECT_EQ(rec.tail.next_seq, 301u);
  EXPECT_EQ(rec.records_staged, 1200u);
  EXPECT_EQ(rec.next_seq, 1501u);
  EXPECT_EQ(rec.staging_path, nx::staging_ring_path(dir));
  {
    // Opening writes them into the files; appending continues after them.
    nx::JournalWriter w(dir, kSegment, kFingerprint, rec.tail);
    EXPECT_EQ(w.next_seq(), 1501u);
    EXPECT_EQ(w.written_seq(), 1500u);
    EXPECT_GE(w.durable_seq(), 1500u);
    ASSERT_TRUE(w.append(request_for(1501)));
    ASSERT_TRUE(w.finish(true));
  }
  EXPECT_FALSE(fs::exists(nx::staging_ring_path(dir))) << "a clean finish removes the ring";
  // The files alone now hold everything.
  seqs.clear();
  rec = recover(seqs);
  expect_run(seqs, 1, 1501);
  EXPECT_EQ(rec.records_staged, 0u);
  EXPECT_EQ(rec.tail.next_seq, 1502u);
}

TEST_F(JournalStagingTest, ARingOfAnotherJournalIsNeverReplayed) {
  {
    nx::JournalWriter w(dir, kSegment, kFingerprint, nx::JournalTail{});
    for (std::uint64_t s = 1; s <= 50; ++s) ASSERT_TRUE(w.append(request_for(s)));
  }
  // The directory is deleted and made again (its inode may well be reused):
  // its ring is another journal's. Played here by a new id in a new directory
  // at the same place, the old ring moved to the new directory's name.
  const std::string old_ring = nx::staging_ring_path(dir);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string new_ring = nx::staging_ring_path(dir);
  if (new_ring != old_ring) fs::rename(old_ring, new_ring);
  std::vector<std::uint64_t> seqs;
  auto rec = recover(seqs);
  EXPECT_TRUE(seqs.empty());
  EXPECT_EQ(rec.records_staged, 0u);
  EXPECT_NE(rec.staging_ignored.find("another journal"), std::string::npos) << rec.staging_ignored;
  {
    nx::JournalWriter w(dir, kSegment, kFingerprint, rec.tail);
    EXPECT_EQ(w.next_seq(), 1u) << "the foreign ring's records were taken";
    ASSERT_TRUE(w.append(request_for(1)));
    ASSERT_TRUE(w.finish(true));
  }
  seqs.clear();
  rec = recover(seqs);
  expect_run(seqs, 1, 1);
}

TEST_F(JournalStagingTest, ARingThatNoLongerHoldsWhatTheFilesLackIsRefused) {
  {
    nx::JournalWriter w(dir, 4 * kSegment, kFingerprint, nx::JournalTail{});
    for (std::uint64_t s = 1; s <= 2000; ++s) ASSERT_TRUE(w.append(request_for(s)));
    ASSERT_TRUE(w.flush());
    ASSERT_TRUE(w.append(request_for(2001)));  // killed before writing it: the ring stays
  }
  // The files lose their last records (a disk, an operator), the ring was
  // published past them and, here, one of their slots was overwritten.
  const std::string ring = nx::staging_ring_path(dir);
  {
    std::fstream f(ring, std::ios::in | std::ios::out | std::ios::binary);
    nx::JournalRecord r{};
    const std::streamoff at = static_cast<std::streamoff>(nx::kStagingHeaderBytes + 1990 * sizeof r);
    f.seekg(at);
    f.read(reinterpret_cast<char*>(&r), sizeof r);
    r.seq += nx::kStagingRecords;  // a later lap's record
    r.crc = nx::record_crc(r);
    f.seekp(at);
    f.write(reinterpret_cast<const char*>(&r), sizeof r);
  }
  const std::string seg = dir + "/" + nx::segment_file_name(1);
  fs::resize_file(seg, 64 + 1980 * 64);
  nx::cut_segment_after(seg, 64 + 1980 * 64, 4 * kSegment);  // zeros from 1981 on: a clean end
  try {
    (void)nx::plan_journal_recovery(dir, kFingerprint, 0, nullptr);
    ADD_FAILURE() << "a ring missing seq 1990 was accepted";
  } catch (const nx::JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("no longer holds seq 1990"), std::string::npos) << e.what();
  }
}

TEST_F(JournalStagingTest, AFullRingPushesBackInsteadOfOverwriting) {
  nx::JournalWriter w(dir, kSegment * 64, kFingerprint, nx::JournalTail{});
  std::uint64_t s = 1;
  while (w.append(request_for(s))) ++s;
  EXPECT_EQ(s - 1, nx::kStagingRecords) << "the ring holds exactly its capacity";
  EXPECT_EQ(w.ring_full(), 1u);
  ASSERT_TRUE(w.flush());
  ASSERT_TRUE(w.append(request_for(s)));
  ASSERT_TRUE(w.finish(true));
  std::vector<std::uint64_t> seqs;
  (void)recover(seqs);
  expect_run(seqs, 1, s);
}

// The done-when check of issue 31: in steady state the appending thread
// takes no page fault and makes no system call, however many it appends.
TEST_F(JournalStagingTest, AppendingTakesNoPageFaultAndNoSystemCall) {
  nx::JournalWriter w(dir, 64ull << 20, kFingerprint, nx::JournalTail{});
  std::atomic<bool> stop{false};
  std::thread journal_thread([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (!w.flush() || !w.sync()) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<ne::Request> requests(200'000);
  for (std::size_t i = 0; i < requests.size(); ++i) requests[i] = request_for(i + 1);
  // Warm-up: one lap of the ring.
  std::size_t i = 0;
  for (; i < 70'000; ++i)
    while (!w.append(requests[i])) std::this_thread::yield();
  rusage before{};
  ::getrusage(RUSAGE_THREAD, &before);
  for (; i < requests.size(); ++i)
    while (!w.append(requests[i])) {
      // the journal thread is a ring behind: wait on the CPU, no syscall
    }
  rusage after{};
  ::getrusage(RUSAGE_THREAD, &after);
  stop = true;
  journal_thread.join();
  EXPECT_EQ(after.ru_minflt - before.ru_minflt, 0) << "page faults while appending 130,000 records";
  EXPECT_EQ(after.ru_majflt - before.ru_majflt, 0);
  // No system call: the thread never gave up the CPU on its own (a blocking
  // call would count a voluntary context switch; preemption by the kernel
  // is involuntary and allowed on a busy machine).
  EXPECT_EQ(after.ru_nvcsw - before.ru_nvcsw, 0) << "the appending thread blocked in the kernel";
  ASSERT_TRUE(w.finish(true));
  std::vector<std::uint64_t> seqs;
  (void)recover(seqs);
  expect_run(seqs, 1, requests.size());
}

}  // namespace
