// The journal: what is appended comes back in order after a reopen, a torn
// tail is cut at the last good record and reported, damage followed by records
// that pass their CRC refuses recovery and changes nothing, a journal of
// another instrument table is refused, and a process killed with SIGKILL
// while appending loses nothing it had appended; the directory has one owner.
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

ne::Request request_for(std::uint64_t seq) {
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
void lose_staging_ring(const std::string& dir) {
  if (const std::string ring = nx::staging_ring_path(dir); !ring.empty()) fs::remove(ring);
}

void expect_records(const std::vector<nx::JournalRecord>& got, std::uint64_t first, std::uint64_t last) {
  ASSERT_EQ(got.size(), last - first + 1);
  for (std::uint64_t i = 0; i < got.size(); ++i) {
    const std::uint64_t seq = first + i;
    ASSERT_EQ(got[i].seq, seq);
    const ne::Request want = request_for(seq);
    ASSERT_EQ(std::memcmp(&got[i].request, &want, sizeof want), 0) << "seq " << seq;
  }
}

TEST_F(JournalTest, EmptyDirectoryIsAnEmptyJournal) {
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(rec.tail.next_seq, 1u);
  EXPECT_TRUE(rec.tail.segment_path.empty());
  EXPECT_TRUE(rec.truncation.empty());
}

TEST_F(JournalTest, RecordsComeBackInOrderAcrossSegmentsAndReopens) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 2500);
    EXPECT_EQ(w.segments_created(), 3u);
  }
  EXPECT_EQ(segments().size(), 3u);
  std::vector<nx::JournalRecord> got;
  auto rec = recover(got);
  expect_records(got, 1, 2500);
  EXPECT_TRUE(rec.truncation.empty()) << rec.truncation;
  EXPECT_EQ(rec.tail.next_seq, 2501u);
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);  // continue where it ended
    append(w, 2501, 4000);
    EXPECT_TRUE(w.sync());
    EXPECT_EQ(w.durable_seq(), 4000u);
  }
  got.clear();
  rec = recover(got);
  expect_records(got, 1, 4000);
  EXPECT_EQ(rec.records_scanned, 4000u);
}

TEST_F(JournalTest, SegmentFilledExactlyContinuesInANewOne) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, kRecordsPerSegment);
  }
  std::vector<nx::JournalRecord> got;
  auto rec = recover(got);
  EXPECT_EQ(rec.tail.offset, kSmallSegment);
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);
    append(w, kRecordsPerSegment + 1, kRecordsPerSegment + 10);
  }
  got.clear();
  rec = recover(got);
  expect_records(got, 1, kRecordsPerSegment + 10);
  EXPECT_EQ(segments().size(), 2u);
}

TEST_F(JournalTest, RecordsUpToTheSnapshotAreCheckedNotReplayed) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 1500);
  }
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got, 1200);
  expect_records(got, 1201, 1500);
  EXPECT_EQ(rec.records_scanned, 1500u);
  EXPECT_EQ(rec.records_replayed, 300u);
}

TEST_F(JournalTest, SnapshotAheadOfTheJournalIsRefused) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 10);
  }
  std::vector<nx::JournalRecord> got;
  EXPECT_THROW(recover(got, 50), nx::JournalError);
}

TEST_F(JournalTest, OtherInstrumentTableIsRefused) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 3);
  }
  std::vector<nx::JournalRecord> got;
  try {
    recover(got, 0, kFingerprint + 1);
    ADD_FAILURE() << "accepted";
  } catch (const nx::JournalError& e) {
    EXPECT_NE(std::string(e.what()).find("another instrument table"), std::string::npos) << e.what();
  }
}

// Damages the record with `seq` in the first segment with `damage(bytes)`.
template <typename F>
void damage_record(const std::string& dir, std::uint64_t seq, F&& damage) {
  const std::string path = dir + "/" + nx::segment_file_name(1);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  const auto off = static_cast<std::streamoff>(64 + (seq - 1) * 64);
  unsigned char rec[64];
  f.seekg(off);
  f.read(reinterpret_cast<char*>(rec), 64);
  damage(rec);
  f.seekp(off);
  f.write(reinterpret_cast<const char*>(rec), 64);
}

TEST_F(JournalTest, TornLastRecordIsCutAndReported) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 100);
  }
  // A write that stopped half way: the record's second half never arrived.
  damage_record(dir, 100, [](unsigned char* r) { std::memset(r + 32, 0, 32); });
  lose_staging_ring(dir);
  std::vector<nx::JournalRecord> got;
  auto rec = recover(got);
  expect_records(got, 1, 99);
  EXPECT_NE(rec.truncation.find("offset " + std::to_string(64 + 99 * 64)), std::string::npos) << rec.truncation;
  EXPECT_NE(rec.truncation.find("CRC mismatch"), std::string::npos) << rec.truncation;
  EXPECT_EQ(rec.truncated_bytes, kSmallSegment - (64 + 99 * 64));
  EXPECT_EQ(rec.tail.next_seq, 100u);
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);
    append(w, 100, 120);  // seq 100 again, this time whole
  }
  got.clear();
  rec = recover(got);
  EXPECT_TRUE(rec.truncation.empty()) << rec.truncation;
  expect_records(got, 1, 120);
}

// The bytes of every file in `dir` (name -> content): what "changed nothing" compares.
std::map<std::string, std::string> snapshot_files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    out[e.path().filename().string()] = std::string(std::istreambuf_iterator<char>(f), {});
  }
  return out;
}

// Recovery must refuse with a JournalError whose text contains `needle`, and change no file.
void expect_refused_unchanged(const std::string& dir, std::uint64_t after, const std::string& needle) {
  const auto before = snapshot_files(dir);
  std::size_t replayed_anyway = 0;
  try {
    nx::recover_journal(dir, kFingerprint, after, [&](const nx::JournalRecord&) { ++replayed_anyway; });
    ADD_FAILURE() << "recovery accepted a journal with valid records after damage";
  } catch (const nx::JournalError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("journal repair"), std::string::npos) << e.what();
  }
  EXPECT_EQ(snapshot_files(dir), before) << "recovery changed the journal it refused";
}

// The same, for a refusal whose way on is not only `journal repair`.
void expect_refused_not_repairable_unchanged(const std::string& dir, std::uint64_t after, const std::string& needle) {
  const auto before = snapshot_files(dir);
  try {
    nx::recover_journal(dir, kFingerprint, after, [](const nx::JournalRecord&) {});
    ADD_FAILURE() << "recovery accepted it";
  } catch (const nx::JournalError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has changed nothing"), std::string::npos) << e.what();
  }
  EXPECT_EQ(snapshot_files(dir), before) << "recovery changed the journal it refused";
}

TEST_F(JournalTest, CorruptRecordFollowedByValidRecordsRefusesAndChangesNothing) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 2100);  // three segments
  }
  damage_record(dir, 500, [](unsigned char* r) { r[40] ^= 0x01; });  // one bit in the payload
  expect_refused_unchanged(dir, 0, "CRC mismatch");
  const auto scan = nx::scan_journal(dir, kFingerprint);
  EXPECT_EQ(scan.damage, nx::JournalDamage::kCorrupt);
  EXPECT_EQ(scan.good_records, 499u);
  EXPECT_EQ(scan.first_break.expected_seq, 500u);
  EXPECT_EQ(scan.valid_after_break, 1600u);  // 501..2100
  EXPECT_EQ(scan.valid_after_min_seq, 501u);
  EXPECT_EQ(scan.valid_after_max_seq, 2100u);
  // Also when a snapshot already holds the damaged record: the journal is the record of what was acknowledged.
  expect_refused_unchanged(dir, 800, "CRC mismatch");
}

TEST_F(JournalTest, WrongSeqInAValidRecordRefuses) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 1000);
  }
  // A seq rewritten with a matching CRC (a second writer's record, say): it passes its CRC, out of order.
  damage_record(dir, 700, [](unsigned char* r) {
    nx::JournalRecord rec;
    std::memcpy(&rec, r, sizeof rec);
    rec.seq = 7000;
    rec.crc = nx::record_crc(rec);
    std::memcpy(r, &rec, sizeof rec);
  });
  expect_refused_unchanged(dir, 0, "holds seq 7000, expected 700");
}

TEST_F(JournalTest, LaterSegmentMissingRefuses) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 2100);
  }
  fs::remove(dir + "/" + nx::segment_file_name(kRecordsPerSegment + 1));  // records 1024..2046 gone
  expect_refused_unchanged(dir, 0, "records missing between segments");
}

TEST_F(JournalTest, TornTailSpanningRecordsIsStillCut) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 100);
  }
  // A machine crash lost the page holding 90..100 except garbage: nothing after 89 passes its CRC.
  for (std::uint64_t seq = 90; seq <= 100; ++seq) damage_record(dir, seq, [](unsigned char* r) { r[20] ^= 0x40; });
  lose_staging_ring(dir);
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  expect_records(got, 1, 89);
  EXPECT_NE(rec.truncation.find("nothing after it passes its CRC"), std::string::npos) << rec.truncation;
  EXPECT_EQ(rec.tail.next_seq, 90u);
}

TEST_F(JournalTest, SegmentCutShortIsDamageNotATornTail) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 1000);  // all acknowledged, say
  }
  const std::string path = dir + "/" + nx::segment_file_name(1);
  // Cut after record 599 (a disk or an operator: the writer preallocates every segment whole).
  fs::resize_file(path, 64 + 599 * 64);
  lose_staging_ring(dir);
  const auto scan = nx::scan_journal(dir, kFingerprint);
  EXPECT_EQ(scan.damage, nx::JournalDamage::kCorrupt);
  EXPECT_TRUE(scan.segments[0].cut_short);
  EXPECT_EQ(scan.first_break.expected_seq, 600u);
  expect_refused_unchanged(dir, 0, "cut short");
  // Inside a record too, and to nothing at all.
  fs::resize_file(path, 64 + 599 * 64 + 30);
  lose_staging_ring(dir);
  expect_refused_unchanged(dir, 0, "cut short");
  fs::resize_file(path, 0);
  lose_staging_ring(dir);
  expect_refused_unchanged(dir, 0, "segment's name had its header once");
}

TEST_F(JournalTest, RepairOfASegmentCutShortGivesItItsSizeBack) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 1000);
  }
  const std::string path = dir + "/" + nx::segment_file_name(1);
  fs::resize_file(path, 64 + 599 * 64 + 30);
  lose_staging_ring(dir);
  const nx::JournalRepair r = nx::repair_journal(nx::scan_journal(dir, kFingerprint), false);
  EXPECT_EQ(r.cut_seq, 600u);
  EXPECT_EQ(fs::file_size(path), kSmallSegment);
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  EXPECT_TRUE(rec.truncation.empty()) << rec.truncation;
  expect_records(got, 1, 599);
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);
    append(w, 600, 1100);  // fills it and goes on into a second segment
  }
  got.clear();
  (void)recover(got);
  expect_records(got, 1, 1100);
  fs::remove_all(r.backup_dir);
}

TEST_F(JournalTest, SegmentBeforeTheCutShortOneStillRefuses) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 2100);
  }
  fs::resize_file(dir + "/" + nx::segment_file_name(1), 64 + 599 * 64 + 30);  // 600..1023 gone, later ones intact
  expect_refused_unchanged(dir, 0, "cut short");
}

// Segments written before the header recorded their size: a short last
// segment keeps the old rule (its complete records stay, the rest is a tail).
TEST_F(JournalTest, ShortSegmentOfUnknownSizeKeepsItsCompleteRecords) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 599);
  }
  const std::string path = dir + "/" + nx::segment_file_name(1);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint64_t unknown = 0;
    f.seekp(offsetof(nx::SegmentHeader, segment_bytes));
    f.write(reinterpret_cast<const char*>(&unknown), sizeof unknown);
  }
  damage_record(dir, 600, [](unsigned char* r) { std::memset(r, 0x5a, 64); });
  lose_staging_ring(dir);
  fs::resize_file(path, 64 + 599 * 64 + 30);
  lose_staging_ring(dir);
  const auto scan = nx::scan_journal(dir, kFingerprint);
  EXPECT_EQ(scan.damage, nx::JournalDamage::kTornTail);
  EXPECT_NE(scan.first_break.what.find("partial record of 30 bytes"), std::string::npos) << scan.first_break.what;
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  expect_records(got, 1, 599);
  EXPECT_EQ(rec.truncated_bytes, 30u);
}

TEST_F(JournalTest, SegmentWithItsNameAndNoHeaderIsDamage) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 10);
  }
  // Segments get their name only once their header is durable: zeros under that name were overwritten.
  std::ofstream(dir + "/" + nx::segment_file_name(11), std::ios::binary) << std::string(4096, '\0');
  expect_refused_unchanged(dir, 0, "segment's name had its header once");
}

TEST_F(JournalTest, CreationThatDidNotFinishIsIgnoredAndReplaced) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, kRecordsPerSegment);  // exactly full: the next append makes segment 1024
  }
  // Killed while making the next segment: it never got its name.
  const std::string temp = dir + "/" + nx::segment_file_name(kRecordsPerSegment + 1) + ".tmp";
  std::ofstream(temp, std::ios::binary) << std::string(4096, '\0');
  std::vector<nx::JournalRecord> got;
  auto rec = recover(got);
  EXPECT_TRUE(rec.truncation.empty()) << rec.truncation;
  EXPECT_EQ(rec.tail.next_seq, kRecordsPerSegment + 1);
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);
    append(w, kRecordsPerSegment + 1, kRecordsPerSegment + 10);
  }
  EXPECT_FALSE(fs::exists(temp));
  got.clear();
  (void)recover(got);
  expect_records(got, 1, kRecordsPerSegment + 10);
}

TEST_F(JournalTest, RefusalWhenTheSnapshotHoldsTheTornRecordChangesNothing) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 100);
  }
  damage_record(dir, 100, [](unsigned char* r) { std::memset(r + 32, 0, 32); });
  lose_staging_ring(dir);
  // A snapshot after request 100 exists: the journal lost a record it holds. Decided before any cut.
  expect_refused_not_repairable_unchanged(dir, 100, "lost records the snapshot has");
  EXPECT_EQ(nx::scan_journal(dir, kFingerprint).damage, nx::JournalDamage::kTornTail) << "the record was cut anyway";
}

TEST_F(JournalTest, SegmentsArePrivateToTheirOwner) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, kRecordsPerSegment + 5);
  }
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.status().permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none) << e.path();
}

TEST_F(JournalTest, BytesAfterTheEndOfDataAreACut) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, 10);
  }
  damage_record(dir, 20, [](unsigned char* r) { r[13] = 0x55; });  // garbage past the end
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  expect_records(got, 1, 10);
  EXPECT_NE(rec.truncation.find("data after the end"), std::string::npos) << rec.truncation;
  got.clear();
  EXPECT_TRUE(recover(got).truncation.empty());  // the cut was made once
}

TEST_F(JournalTest, NotAJournalIsRefused) {
  fs::create_directories(dir);
  std::ofstream(dir + "/" + nx::segment_file_name(1)) << "this is not a journal segment, just text";
  std::vector<nx::JournalRecord> got;
  EXPECT_THROW(recover(got), nx::JournalError);
}

TEST_F(JournalTest, ProcessKilledWhileAppendingLosesNothingItAppended) {
  // A child appends as fast as it can and reports each appended seq through a
  // pipe, while its journal thread writes them to the files; the parent kills
  // it with SIGKILL at a random moment. Every reported seq must be recovered
  // (from the files or the staging ring); the appends continue in the next
  // child. 5 rounds.
  std::mt19937_64 rng(42);
  std::uint64_t next = 1;
  for (int round = 0; round < 5; ++round) {
    std::vector<nx::JournalRecord> got;
    const auto rec = recover(got);
    ASSERT_EQ(rec.next_seq, next) << "round " << round;
    expect_records(got, 1, next - 1);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      nx::JournalWriter w(dir, kSmallSegment, kFingerprint, rec.tail);
      std::thread journal_thread([&w] {
        while (w.flush()) std::this_thread::yield();
      });
      for (std::uint64_t s = w.next_seq();; ++s) {
        while (!w.append(request_for(s)))
          if (w.failed()) ::_exit(3);
        if (::write(fds[1], &s, sizeof s) != sizeof s) ::_exit(4);
      }
    }
    ::close(fds[1]);
    std::uint64_t first = 0;  // wait for the first append (opening syncs, which can take a while)
    ASSERT_EQ(::read(fds[0], &first, sizeof first), static_cast<ssize_t>(sizeof first));
    ::usleep(static_cast<useconds_t>(1000 + rng() % 20000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
    std::uint64_t acked = first;
    std::uint64_t s = 0;
    while (::read(fds[0], &s, sizeof s) == sizeof s) acked = s;
    ::close(fds[0]);
    got.clear();
    const auto after = recover(got);
    EXPECT_GE(after.next_seq, acked + 1) << "round " << round << ": an appended record was lost";
    ASSERT_GT(acked, next - 1) << "the child appended nothing in round " << round;
    next = after.next_seq;
  }
}

TEST_F(JournalTest, FullDiskStopsAppendingWithOneClearErrorAndKeepsWhatWasAppended) {
  // A file-size limit stands in for a full disk: the next segment's
  // preallocation fails (EFBIG) as it would with ENOSPC. In a child, so the
  // limit does not outlive the test.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    for (std::uint64_t s = 1; s <= kRecordsPerSegment; ++s)
      if (!w.append(request_for(s))) ::_exit(11);
    if (!w.flush()) ::_exit(15);
    // The first segment is made and full: no room for another. (A file-size
    // limit also refuses a write past it within a preallocated file: set now.)
    const rlimit limit{kSmallSegment / 2, kSmallSegment / 2};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    // Appended into the staging ring; writing it needs a second segment: refused.
    if (!w.append(request_for(kRecordsPerSegment + 1))) ::_exit(16);
    if (w.flush()) ::_exit(12);
    if (!w.failed()) ::_exit(13);  // the sequencer checks it before each pass and halts
    // One "journal: " is the caller's (ExchangeServer::failure); the writer's text has none.
    if (w.error().rfind("cannot allocate", 0) != 0 ||
        w.error().find("journal-00000000000000001024.log") == std::string::npos)
      ::_exit(14);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "see the child's exit codes above";
  std::vector<nx::JournalRecord> got;
  const auto rec = recover(got);
  // The appended record the disk had no room for is still in the staging
  // ring: the next start writes it (the disk has room again: no limit here).
  expect_records(got, 1, kRecordsPerSegment + 1);
  EXPECT_EQ(rec.records_staged, 1u);
  EXPECT_EQ(segments(), (std::vector<std::string>{nx::segment_file_name(1)})) << "a failed creation left a file";
}

TEST_F(JournalTest, DirectoryLockRefusesASecondOwnerAndNamesTheFirst) {
  auto first = std::make_unique<nx::JournalDirLock>(dir, "test owner one");
  try {
    nx::JournalDirLock second(dir, "test owner two");
    ADD_FAILURE() << "a second owner got the journal directory";
  } catch (const nx::JournalLockError& e) {
    EXPECT_NE(std::string(e.what()).find("test owner one"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
  }
  first.reset();
  nx::JournalDirLock again(dir, "test owner three");  // released with its owner
}

TEST_F(JournalTest, DirectoryLockOfAKilledProcessIsReleased) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    nx::JournalDirLock lock(dir, "child");
    const char ok = 1;
    if (::write(fds[1], &ok, 1) != 1) ::_exit(4);
    ::pause();
    ::_exit(0);
  }
  ::close(fds[1]);
  char ok = 0;
  ASSERT_EQ(::read(fds[0], &ok, 1), 1);
  ::close(fds[0]);
  EXPECT_THROW(nx::JournalDirLock(dir, "parent"), nx::JournalLockError);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  nx::JournalDirLock lock(dir, "parent");  // the kernel released it: no stale lock to clean up
}

}  // namespace
