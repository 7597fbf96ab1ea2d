// The journal's damage: a torn tail is cut at the last good record and
// reported, damage followed by records that pass their CRC refuses recovery
// and changes nothing (repaired only explicitly), a segment cut short or
// without its header is damage, a creation that did not finish is replaced.
#include "exchange/sequencing/journal_recovery.hpp"

#include "unit/exchange/journal_fixture.hpp"

namespace {

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

}  // namespace
