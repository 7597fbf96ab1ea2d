// The journal: what is appended comes back in order after a reopen, a
// journal of another instrument table is refused, a process killed with
// SIGKILL while appending loses nothing it had appended, a full disk stops
// appending with one clear error; the directory has one owner. Torn tails
// and damage: journal_damage_test.cpp.
#include "exchange/sequencing/journal_writer.hpp"

#include "unit/exchange/journal_fixture.hpp"

namespace {

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

TEST_F(JournalTest, SegmentsArePrivateToTheirOwner) {
  {
    nx::JournalWriter w(dir, kSmallSegment, kFingerprint, nx::JournalTail{});
    append(w, 1, kRecordsPerSegment + 5);
  }
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.status().permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none) << e.path();
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
