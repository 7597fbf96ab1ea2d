// Recovery from snapshot + journal tail: an engine processes random requests
// while they are journaled and the snapshotter follows the journal; a fresh
// engine loaded from the newest snapshot plus the journal records after it
// has exactly the live engine's books and counters.
#include "exchange/snapshots/snapshotter.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "engine/book_state.hpp"
#include "exchange/ledger/trade_ledger.hpp"
#include "exchange/ledger/trade_tap.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/snapshots/engine_snapshot.hpp"
#include "reference/random_requests.hpp"
#include "reference/recording_sink.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;
namespace fs = std::filesystem;
using nanotick::reference::RandomRequests;
using nanotick::reference::RecordingSink;

namespace {

struct NullSink {
  void on_report(const ne::ExecReport&) noexcept {}
  void on_market_data(const ne::MdEvent&) noexcept {}
};

TEST(Snapshotter, SnapshotPlusJournalTailRecoversTheLiveState) {
  const std::string dir = (fs::temp_directory_path() / ("nanotick-snapshotter-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  const auto shape = nanotick::reference::differential_shapes()[1];
  nx::ExchangeConfig config;
  config.engine = shape.config;
  config.journal.dir = dir;
  config.journal.segment_bytes = 64 * 1024;
  config.journal.snapshot_every = 700;

  NullSink sink;
  ne::MatchingEngine<NullSink> live(config.engine, sink);
  {
    nx::JournalWriter journal(dir, config.journal.segment_bytes, config.engine_fingerprint(), nx::JournalTail{});
    ne::MatchingEngine<NullSink> fresh(config.engine, sink);
    nx::Snapshotter snap(config, journal, fresh.export_state(), {}, 0);
    RandomRequests gen(config.engine, 99, shape.clients, shape.new_percent);
    for (int i = 0; i < 5000; ++i) {
      const ne::Request r = gen.next();
      ASSERT_TRUE(journal.append(r));
      live.process(r);
      if (i % 97 == 0) snap.do_work();  // the auxiliary thread lags behind, as it may
    }
    ASSERT_TRUE(journal.flush());  // the journal thread's step: the snapshotter reads the files
    while (snap.applied_seq() < journal.written_seq()) snap.do_work();
    EXPECT_EQ(snap.error(), "");
    // At least 700 records apart, taken when the follower has caught up that far.
    EXPECT_GE(snap.snapshots_written(), 5u);
    EXPECT_GE(snap.last_snapshot_seq(), 5000u - 2 * 700);
  }
  std::vector<std::string> problems;
  const auto loaded = nx::load_latest_snapshot(dir, config.engine_fingerprint(), problems);
  ASSERT_TRUE(loaded) << (problems.empty() ? "" : problems[0]);
  ASSERT_GT(loaded->journal_seq, 0u);
  ne::MatchingEngine<NullSink> recovered(config.engine, sink);
  recovered.import_state(loaded->state);
  const auto rec = nx::recover_journal(dir, config.engine_fingerprint(), loaded->journal_seq,
                                       [&](const nx::JournalRecord& r) { recovered.process(r.request); });
  EXPECT_EQ(rec.records_replayed, 5000 - loaded->journal_seq);
  EXPECT_EQ(ne::compare_books(live, recovered), "");
  EXPECT_EQ(ne::state_hash(live), ne::state_hash(recovered));
  fs::remove_all(dir);
}

// The live engine's fills go through the ledger's tap into its ring, as in
// the exchange.
struct TapSink {
  nx::TradeTap* tap;
  void on_report(const ne::ExecReport& r) noexcept { tap->on_report(r); }
  void on_market_data(const ne::MdEvent&) noexcept {}
};

TEST(Snapshotter, ShouldWaitForTheLedgerToHoldEveryTradeTheSnapshotHolds) {
  const std::string dir =
      (fs::temp_directory_path() / ("nanotick-snapshotter-ledger-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto shape = nanotick::reference::differential_shapes()[1];
  nx::ExchangeConfig config;
  config.engine = shape.config;
  config.journal.dir = dir;
  config.journal.segment_bytes = 64 * 1024;
  config.journal.snapshot_every = 500;
  auto ring = std::make_unique<nx::LedgerRing>();
  nx::TradeLedger ledger(dir + "/trades.ledger", config.engine_fingerprint(), *ring);
  nx::TradeTap tap(*ring, 1, 0);
  tap.end_replay();
  TapSink sink{&tap};
  ne::MatchingEngine<TapSink> live(config.engine, sink);
  NullSink null;
  nx::JournalWriter journal(dir, config.journal.segment_bytes, config.engine_fingerprint(), nx::JournalTail{});
  ne::MatchingEngine<NullSink> fresh(config.engine, null);
  nx::Snapshotter snap(config, journal, fresh.export_state(), {}, 0);
  snap.hold_for_ledger(&ledger);
  RandomRequests gen(config.engine, 7, shape.clients, shape.new_percent);
  for (int i = 0; i < 2000; ++i) {
    const ne::Request r = gen.next();
    ASSERT_TRUE(journal.append(r));
    live.process(r);
  }
  ASSERT_GT(tap.trades(), 0u) << "no trade: the test would not test the wait";
  // The ledger's writer has not run: the engine made trades the file lacks, so no snapshot.
  for (int i = 0; i < 10; ++i) snap.do_work();
  EXPECT_EQ(snap.snapshots_written(), 0u);
  EXPECT_LE(snap.applied_seq(), 2000u);
  // Once it has written them, the snapshot goes out, and every trade its state holds is in the file.
  (void)ledger.do_work();
  ASSERT_TRUE(journal.flush());
  while (snap.applied_seq() < journal.written_seq()) snap.do_work();
  EXPECT_GE(snap.snapshots_written(), 1u);
  EXPECT_EQ(snap.error(), "");
  // The snapshot's state ends at a fill the file holds.
  std::vector<std::string> problems;
  const auto loaded = nx::load_latest_snapshot(dir, config.engine_fingerprint(), problems);
  ASSERT_TRUE(loaded);
  const nx::LedgerContents c = nx::read_trade_ledger(dir + "/trades.ledger");
  ASSERT_FALSE(c.trades.empty());
  EXPECT_EQ(c.trades.size(), tap.trades());
  fs::remove_all(dir);
}

}  // namespace
