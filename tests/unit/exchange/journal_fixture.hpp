// The journal tests' fixture (journal_test.cpp, journal_damage_test.cpp): a
// journal directory of their own with small segments, the records a test
// appends (request_for: one per seq, each different), and the checks of
// what comes back. For one test file per executable (an unnamed namespace).
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exchange/sequencing/journal_lock.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/sequencing/journal_repair.hpp"
#include "exchange/sequencing/journal_scan.hpp"
#include "exchange/sequencing/journal_writer.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kFingerprint = 0x1234'5678'9abc'def0ULL;
constexpr std::uint64_t kSmallSegment = 64 * 1024;  // 1023 records per segment
constexpr std::uint64_t kRecordsPerSegment = (kSmallSegment - 64) / 64;

inline ne::Request request_for(std::uint64_t seq) {
  ne::Request r = ne::make_new(static_cast<ne::InstrumentId>(seq % 3), static_cast<ne::ClientId>(1 + seq % 5), seq,
                               seq % 2 ? ne::Side::kBuy : ne::Side::kSell, ne::OrderType::kLimit,
                               static_cast<ne::Price>(1000 + seq % 97), static_cast<ne::Qty>(1 + seq % 13));
  r.event_id = seq * 7919;
  return r;
}

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = (fs::temp_directory_path() / ("nanotick-journal-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name()))
              .string();
    fs::remove_all(dir);
  }
  void TearDown() override {
    // The staging ring is named after the directory: gone with it.
    if (const std::string ring = nx::staging_ring_path(dir); !ring.empty()) fs::remove(ring);
    fs::remove_all(dir);
  }

  // Recovers from `after`, collecting the replayed records.
  nx::JournalRecovery recover(std::vector<nx::JournalRecord>& got, std::uint64_t after = 0,
                              std::uint64_t fingerprint = kFingerprint) {
    return nx::recover_journal(dir, fingerprint, after, [&](const nx::JournalRecord& r) { got.push_back(r); });
  }
  void append(nx::JournalWriter& w, std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t s = from; s <= to; ++s) {
      ASSERT_EQ(w.next_seq(), s);
      ASSERT_TRUE(w.append(request_for(s)));
    }
    ASSERT_TRUE(w.flush());  // the journal thread's step: the records into the files
  }
  std::vector<std::string> segments() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename() != "journal.id") out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string dir;
};

// A machine crash: the staging ring (tmpfs) is gone, the files hold what
// they hold. Tests that damage files play that, so that what they check is
// what the files alone give.
inline void lose_staging_ring(const std::string& dir) {
  if (const std::string ring = nx::staging_ring_path(dir); !ring.empty()) fs::remove(ring);
}

inline void expect_records(const std::vector<nx::JournalRecord>& got, std::uint64_t first, std::uint64_t last) {
  ASSERT_EQ(got.size(), last - first + 1);
  for (std::uint64_t i = 0; i < got.size(); ++i) {
    const std::uint64_t seq = first + i;
    ASSERT_EQ(got[i].seq, seq);
    const ne::Request want = request_for(seq);
    ASSERT_EQ(std::memcmp(&got[i].request, &want, sizeof want), 0) << "seq " << seq;
  }
}
}  // namespace
