// Engine snapshot files: exact round trip, every defect refused with a reason,
// the newest good file chosen, old ones pruned.
#include "exchange/snapshots/engine_snapshot.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;
namespace fs = std::filesystem;

namespace {

ne::EngineState sample_state(std::uint64_t salt) {
  ne::EngineState s;
  s.requests = 1000 + salt;
  s.report_seq = 2000 + salt;
  s.next_order_id = 400 + salt;
  for (int b = 0; b < 3; ++b) {
    ne::EngineState::Book book;
    book.has_last_trade = b != 1;
    book.last_trade = -5 + b;
    book.md_seq = 1000 * static_cast<std::uint64_t>(b) + salt;  // distinct per book: a swap would show
    s.md_seq += book.md_seq;  // the engine's is their sum
    for (int i = 0; i < 5 * b; ++i)
      book.orders.push_back({static_cast<ne::OrderId>(10 + i), static_cast<ne::ClientId>(1 + i % 3),
                             static_cast<ne::ClientOrderId>(100 + i), i % 2 ? ne::Side::kSell : ne::Side::kBuy,
                             static_cast<ne::StpMode>(i % 4), 100 + i, 10 + i, i});
    for (int i = 0; i < 7 * b; ++i) book.finished_previous.push_back(0xabc0000ull + static_cast<std::uint64_t>(i));
    for (int i = 0; i < 3 * b; ++i) book.finished_current.push_back(0xdef0000ull + static_cast<std::uint64_t>(i));
    book.finished_current_adds = static_cast<std::uint32_t>(4 * b + salt);
    s.books.push_back(book);
  }
  return s;
}

TEST(EngineSnapshot, RoundTripIsExact) {
  const ne::EngineState s = sample_state(1);
  const auto bytes = nx::encode_engine_snapshot(77, 5, s);
  const nx::LoadedSnapshot back = nx::decode_engine_snapshot(bytes, 5);
  EXPECT_EQ(back.journal_seq, 77u);
  EXPECT_TRUE(back.state == s);
}

TEST(EngineSnapshot, TheControlsStateRoundTripsExactly) {
  nanotick::controls::ControlsState c;
  c.accounts.push_back({7, -(nanotick::controls::Money{1} << 70), {5, -3, 0}});
  c.accounts.push_back({9, 123, {0, 0, 1}});
  c.halted = {0, 2};
  c.blocked = {3, 65'535};
  const auto bytes = nx::encode_engine_snapshot(78, 5, sample_state(2), c);
  const nx::LoadedSnapshot back = nx::decode_engine_snapshot(bytes, 5);
  EXPECT_TRUE(back.controls == c) << "balances (128-bit cash), halts and blocks";
}

TEST(EngineSnapshot, EveryDefectIsRefused) {
  const auto good = nx::encode_engine_snapshot(77, 5, sample_state(1));
  auto expect_refused = [](const std::vector<std::uint8_t>& b, std::uint64_t fp, const std::string& words) {
    try {
      (void)nx::decode_engine_snapshot(b, fp);
      ADD_FAILURE() << "accepted; wanted: " << words;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_refused(good, 6, "another instrument table");
  for (std::size_t i = 0; i < good.size(); i += 13) {
    auto b = good;
    b[i] ^= 0x40;
    expect_refused(b, 5, "CRC mismatch");
  }
  auto truncated = std::vector<std::uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
  expect_refused(truncated, 5, "CRC mismatch");
  expect_refused({1, 2, 3}, 5, "too short");
}

// Issue 30: a snapshot holds every client's working orders and balances.
// Under the usual umask 022 it would be 0644 without the explicit mode; a
// .tmp a crash left behind (0644) does not pass its mode on.
TEST(EngineSnapshot, FilesAreTheOwnersAlone) {
  const mode_t old_umask = ::umask(022);
  const std::string dir = (fs::temp_directory_path() / ("nanotick-snap-mode-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string stale = dir + "/" + nx::snapshot_file_name(20) + ".tmp";
  std::ofstream(stale) << "left by a crash";
  ASSERT_EQ(::chmod(stale.c_str(), 0644), 0);
  nx::write_engine_snapshot(dir, 10, 5, sample_state(10));
  nx::write_engine_snapshot(dir, 20, 5, sample_state(20));
  for (const std::uint64_t seq : {10u, 20u}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/" + nx::snapshot_file_name(seq)).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << seq;
  }
  fs::remove_all(dir);
  ::umask(old_umask);
}

TEST(EngineSnapshot, NewestGoodFileWinsAndOldOnesArePruned) {
  const std::string dir = (fs::temp_directory_path() / ("nanotick-snap-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  nx::write_engine_snapshot(dir, 10, 5, sample_state(10));
  nx::write_engine_snapshot(dir, 20, 5, sample_state(20));
  nx::write_engine_snapshot(dir, 30, 5, sample_state(30));
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".snap";
  EXPECT_EQ(files, 2u);  // the newest two
  std::vector<std::string> problems;
  auto s = nx::load_latest_snapshot(dir, 5, problems);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->journal_seq, 30u);
  EXPECT_TRUE(s->state == sample_state(30));
  EXPECT_TRUE(problems.empty());
  // Corrupt the newest: the previous one is used and the problem reported.
  {
    std::fstream f(dir + "/" + nx::snapshot_file_name(30), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  s = nx::load_latest_snapshot(dir, 5, problems);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->journal_seq, 20u);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("CRC mismatch"), std::string::npos);
  problems.clear();
  EXPECT_FALSE(nx::load_latest_snapshot(dir, 6, problems).has_value());  // other instrument table
  EXPECT_EQ(problems.size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
