// MdConsumer against a test venue (md_consumer_fixture.hpp) whose network
// loses packets: only the instruments a lost packet touched recover, from
// snapshots that reach far enough; late joins; snapshot audits; the snapshot
// channel starting over; a recovery buffer that overflowed; a book that
// refuses a message; and random loss, duplication and reordering, after
// which the consumer's books must equal the reference order by order.
#include "client/md_consumer.hpp"

#include <gtest/gtest.h>

#include "unit/client/md_consumer_fixture.hpp"

namespace {

using namespace md_consumer_fixture;

// ---- tests ------------------------------------------------------------------------------

TEST(MdConsumer, ShouldRecoverOnlyTheInstrumentALostPacketTouched) {
  Fixture f(7);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  const Packet lost = f.venue.next_packet(kA);
  ASSERT_EQ(lost.instruments, 1u << kA);
  const std::array<int, kInstruments> updates_at_loss = f.recorder.updates;
  int updates_while_a_stale = 0;
  for (int n = 0; n < 60; ++n) {
    const bool a_stale = !f.consumer.is_live(kA);
    const int before = f.recorder.updates[1] + f.recorder.updates[2] + f.recorder.updates[3];
    f.deliver(f.venue.next_packet());
    if (a_stale)
      updates_while_a_stale += f.recorder.updates[1] + f.recorder.updates[2] + f.recorder.updates[3] - before;
    f.now += 50'000;
    f.consumer.on_timer(f.now);
  }
  EXPECT_FALSE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.stale[kA], 1);
  for (InstrumentId i = 1; i < kInstruments; ++i) {
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
    EXPECT_EQ(f.recorder.stale[i], 0) << "healthy instruments are not paused: " << i;
    EXPECT_GT(f.recorder.updates[i], updates_at_loss[i]) << i;
    EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), i)) << i;
  }
  EXPECT_GT(updates_while_a_stale, 0) << "B, C, D kept receiving updates while A recovered";
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.messages_lost.get(), lost.count);
  EXPECT_EQ(c.instrument_seq_jumps.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kSeqJump)].get(), 1u);
  EXPECT_GT(f.consumer.buffered_messages(), 0u);

  f.now += 1'000'000;
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.lives[kA], 2);
  EXPECT_EQ(c.recoveries_completed[reason(nt::RecoveryReason::kSeqJump)].get(), 1u);
  EXPECT_EQ(f.consumer.buffered_messages(), 0u);
  EXPECT_EQ(f.recorder.order_violations, 0);
  f.expect_books_equal("after A's recovery");
  for (int n = 0; n < 50; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("flowing again");
}

TEST(MdConsumer, ShouldJoinLateAndUseOnlySnapshotsThatReachItsStart) {
  Fixture f(8);
  for (int n = 0; n < 100; ++n) f.venue.next_packet();  // before we joined
  const std::vector<Packet> before_start = f.venue.snapshot(kA);
  const std::vector<Packet> too_old = f.venue.snapshot(1);
  for (int n = 0; n < 5; ++n) f.venue.next_packet(1);  // instrument 1 moves on, unseen
  f.venue.flush();                                      // packed, never delivered

  f.deliver(before_start);  // the incremental channel has not started: unusable
  EXPECT_EQ(f.consumer.counters().snapshots_before_start.get(), 1u);
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(too_old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(1));
  EXPECT_EQ(f.recorder.total_stale(), 0);
  for (int u : f.recorder.updates) EXPECT_EQ(u, 0) << "no update for a stale instrument";

  for (InstrumentId i = 0; i < kInstruments; ++i) {
    for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet());
    f.now += 10'000;
    f.deliver(f.venue.snapshot(i));
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
  }
  f.expect_books_equal("after the late join");
  for (int n = 0; n < 50; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("flowing");
  for (InstrumentId i = 0; i < kInstruments; ++i) EXPECT_EQ(f.recorder.lives[i], 1);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
  EXPECT_EQ(f.consumer.recovery_ns().count(), kInstruments);
  EXPECT_GT(f.consumer.recovery_ns().max(), 0u);
}

// An instrument in recovery that has buffered nothing cannot tell from its
// own seq what it missed: a snapshot must reach past the channel's start
// and past every hole since, or messages lost there are silently missing.
TEST(MdConsumer, ShouldNotUseASnapshotOlderThanTheJoinOfAnInstrumentWithNothingBuffered) {
  Fixture f(14);
  constexpr InstrumentId kX = 3;
  for (int n = 0; n < 10; ++n) f.venue.next_packet();
  const std::vector<Packet> old = f.venue.snapshot(kX);
  for (int n = 0; n < 2; ++n) f.venue.next_packet(kX);  // missed: before we joined
  f.venue.flush();
  for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet(0));  // nothing of X's
  f.deliver(f.venue.flush());
  f.deliver(old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

TEST(MdConsumer, ShouldNotUseASnapshotOlderThanAHoleWhileNothingIsBuffered) {
  Fixture f(15);
  constexpr InstrumentId kX = 3;
  f.deliver(f.venue.next_packet(0));  // the channel starts at seq 1: nothing missed yet
  f.deliver(f.venue.flush());
  const std::vector<Packet> old = f.venue.snapshot(kX);
  f.venue.next_packet(kX);  // lost: X's messages, while X buffers nothing
  f.venue.flush();
  f.deliver(f.venue.next_packet(0));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(f.consumer.counters().snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

// The buffer must continue the snapshot without a hole: a recovering
// instrument that lost messages in a gap restarts its buffer after them,
// and a snapshot from before the loss no longer fits.
TEST(MdConsumer, ShouldRestartTheBufferAfterAHoleInTheInstrumentsOwnSeq) {
  Fixture f(16);
  constexpr InstrumentId kX = 2;
  f.deliver(f.venue.next_packet(kX));
  f.deliver(f.venue.flush());
  const std::vector<Packet> old = f.venue.snapshot(kX);
  f.venue.next_packet(kX);  // lost
  f.venue.flush();
  f.deliver(f.venue.next_packet(kX));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.buffer_restarts.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(c.snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kX));
  f.deliver(f.venue.snapshot(kX));
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
}

// A snapshot may overtake the incremental packets it reflects (two
// channels, two paths): those packets, arriving after it, are skipped.
TEST(MdConsumer, ShouldSkipIncrementalsTheLoadedSnapshotAlreadyReflects) {
  Fixture f(17);
  constexpr InstrumentId kX = 2;
  f.deliver(f.venue.next_packet(kX));  // late join: X buffers
  std::vector<Packet> behind;
  for (int n = 0; n < 3; ++n) behind.push_back(f.venue.next_packet(kX));
  for (Packet& p : f.venue.flush()) behind.push_back(std::move(p));
  f.deliver(f.venue.snapshot(kX));
  ASSERT_TRUE(f.consumer.is_live(kX));
  f.deliver(behind);
  EXPECT_TRUE(f.consumer.is_live(kX));
  EXPECT_EQ(f.recorder.stale[kX], 0);
  EXPECT_GT(f.consumer.counters().skipped_in_snapshot.get(), 0u);
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet(kX));
  EXPECT_TRUE(same_book(f.consumer.books(), f.venue.reference(), kX));
  EXPECT_EQ(f.recorder.stale[kX], 0);
}

TEST(MdConsumer, ShouldCatchALostLastPacketBeforeAQuietPeriodWithTheSnapshotAudit) {
  Fixture f(9);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  std::uint64_t lost = f.venue.next_packet(kA).count;
  for (const Packet& p : f.venue.flush()) lost += p.count;  // the rest of A's request: lost too
  // Quiet: only a heartbeat, which shows the hole but not whose it was.
  f.deliver(f.venue.heartbeat());
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.gaps.get(), 1u);
  EXPECT_EQ(c.messages_lost.get(), lost);
  EXPECT_TRUE(f.consumer.is_live(kA)) << "nothing of A's arrived since: its seq alone cannot tell";

  f.deliver(f.venue.snapshot(1));  // B agrees with its snapshot
  EXPECT_EQ(c.audits.get(), 1u);
  EXPECT_EQ(c.audit_mismatches.get(), 0u);
  f.deliver(f.venue.snapshot(kA));
  EXPECT_EQ(c.audit_mismatches.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kAuditMismatch)].get(), 1u);
  EXPECT_EQ(c.recoveries_completed[reason(nt::RecoveryReason::kAuditMismatch)].get(), 1u)
      << "recovered from the very snapshot that caught it";
  EXPECT_EQ(f.recorder.stale[kA], 1);
  EXPECT_EQ(f.recorder.lives[kA], 2);
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(f.recorder.order_violations, 0);
  f.expect_books_equal("after the audit");
}

TEST(MdConsumer, ShouldFollowTheSnapshotChannelAfterItStartsOverAtAnExchangeRestart) {
  Fixture f(23);
  f.bootstrap();
  for (int n = 0; n < 20; ++n) f.deliver(f.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i) f.deliver(f.venue.snapshot(i));  // the channel's seq is well past 1
  f.deliver(f.venue.flush());
  (void)f.venue.next_packet(kA);  // lost, then quiet
  (void)f.venue.flush();
  f.deliver(f.venue.heartbeat());
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  f.venue.restart_snapshot_channel();
  f.deliver(f.venue.snapshot(kA));  // seq 1 again: not a duplicate
  const auto& c = f.consumer.counters();
  EXPECT_EQ(c.snapshot_channel_restarts.get(), 1u);
  EXPECT_EQ(c.audit_mismatches.get(), 1u) << "the restarted channel's snapshot still audits";
  EXPECT_TRUE(f.consumer.is_live(kA));
  f.expect_books_equal("after the restart");
}

TEST(MdConsumer, ShouldWaitForALaterSnapshotAfterTheBufferOverflowed) {
  nt::MdConsumerConfig config;
  config.buffer_messages = 8;
  Fixture f(10, config);
  f.bootstrap(1);
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  f.venue.next_packet(kA);  // lost
  f.deliver(f.venue.next_packet(kA));
  f.now += 300'000;
  f.consumer.on_timer(f.now);
  ASSERT_FALSE(f.consumer.is_live(kA));
  const std::vector<Packet> old = f.venue.snapshot(kA);  // delivered too late: the buffer overflows first
  for (int n = 0; n < 6; ++n) f.deliver(f.venue.next_packet(kA));
  const auto& c = f.consumer.counters();
  EXPECT_GE(c.buffer_overflows.get(), 1u);
  f.deliver(old);
  EXPECT_EQ(c.snapshots_too_old.get(), 1u);
  EXPECT_FALSE(f.consumer.is_live(kA)) << "the buffer lost messages after that snapshot";
  for (int n = 0; n < 3; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));
  EXPECT_EQ(c.snapshots_used.get(), kInstruments + 1u);
  f.expect_books_equal("after the later snapshot");
  EXPECT_EQ(f.recorder.order_violations, 0);
}

TEST(MdConsumer, ShouldRecoverAnInstrumentWhoseBookRefusesAMessageOrDisagreesWithTopOfBook) {
  Fixture f(11);
  f.bootstrap();
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.flush());
  f.venue.inject_unknown_delete(kA);
  f.deliver(f.venue.flush());
  const auto& c = f.consumer.counters();
  EXPECT_FALSE(f.consumer.is_live(kA));
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kBookReject)].get(), 1u);
  EXPECT_EQ(f.consumer.books().rejected(nb::BookResult::kUnknownOrder), 1u);
  for (int n = 0; n < 5; ++n) f.deliver(f.venue.next_packet());
  f.deliver(f.venue.snapshot(kA));
  EXPECT_TRUE(f.consumer.is_live(kA));

  f.deliver(f.venue.flush());
  f.venue.inject_wrong_top(2);
  f.deliver(f.venue.flush());
  EXPECT_FALSE(f.consumer.is_live(2));
  EXPECT_EQ(c.top_of_book_mismatches.get(), 1u);
  EXPECT_EQ(c.recoveries_started[reason(nt::RecoveryReason::kTopOfBookMismatch)].get(), 1u);
  f.deliver(f.venue.snapshot(2));
  EXPECT_TRUE(f.consumer.is_live(2));
  EXPECT_EQ(f.recorder.stale[1] + f.recorder.stale[3], 0);
  f.expect_books_equal("after both recoveries");
}

// Drops, duplicates, reordering beyond the window, lost snapshot packets
// and heartbeats, over several seeds: after a quiet period and one
// snapshot cycle every instrument is live and equal to the reference.
TEST(MdConsumer, ShouldConvergeUnderRandomLossDuplicationAndReordering) {
  for (std::uint64_t seed = 100; seed < 106; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Fixture f(seed);
    std::mt19937_64 rng(seed * 7919);
    const auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    std::vector<std::pair<int, Packet>> delayed;  // (packets to wait, packet)
    std::deque<std::pair<int, Packet>> snapshots;  // (packet number when due, packet)
    int snapshot_due = 0;
    InstrumentId next_snapshot = 0;
    for (int n = 0; n < 1500; ++n) {
      f.now += 20'000;
      Packet p = f.venue.next_packet();
      if (chance(4)) {
        // lost
      } else if (chance(8)) {
        delayed.emplace_back(1 + static_cast<int>(rng() % 12), p);  // beyond the window sometimes
      } else {
        f.deliver(p);
        if (chance(4)) f.deliver(p);
      }
      for (auto it = delayed.begin(); it != delayed.end();) {
        if (--it->first <= 0) {
          f.deliver(it->second);
          it = delayed.erase(it);
        } else {
          ++it;
        }
      }
      if (n % 25 == 0) f.deliver(f.venue.heartbeat());
      if (n % 9 == 0) {
        // Some snapshots arrive late (behind the incrementals they describe),
        // in the channel's order all the same.
        snapshot_due = std::max(snapshot_due, chance(30) ? n + static_cast<int>(rng() % 30) : n);
        for (Packet& s : f.venue.snapshot(next_snapshot))
          if (!chance(3)) snapshots.emplace_back(snapshot_due, std::move(s));
        next_snapshot = (next_snapshot + 1) % kInstruments;
      }
      while (!snapshots.empty() && snapshots.front().first <= n) {
        f.deliver(snapshots.front().second);
        snapshots.pop_front();
      }
      f.consumer.on_timer(f.now);
    }
    for (const auto& d : delayed) f.deliver(d.second);
    for (const auto& s : snapshots) f.deliver(s.second);
    f.deliver(f.venue.flush());
    f.deliver(f.venue.heartbeat());
    f.now += 1'000'000;
    f.consumer.on_timer(f.now);
    for (InstrumentId i = 0; i < kInstruments; ++i) f.deliver(f.venue.snapshot(i));
    for (InstrumentId i = 0; i < kInstruments; ++i) {
      EXPECT_TRUE(f.consumer.is_live(i)) << i;
      EXPECT_EQ(f.recorder.lives[i], f.recorder.stale[i] + 1) << i;
    }
    f.expect_books_equal("converged");
    const auto& c = f.consumer.counters();
    EXPECT_GT(c.gaps.get(), 0u);
    EXPECT_GT(c.reordered.get(), 0u);
    EXPECT_GT(c.duplicates.get(), 0u);
    EXPECT_GT(c.snapshots_too_old.get(), 0u) << "late snapshots were refused, not loaded";
    EXPECT_GT(c.skipped_in_snapshot.get(), 0u);
    EXPECT_GT(f.recorder.total_stale(), 0);
    EXPECT_EQ(f.recorder.order_violations, 0);
    EXPECT_EQ(f.consumer.held_packets(), 0u);
    for (int n = 0; n < 30; ++n) f.deliver(f.venue.next_packet());
    f.expect_books_equal("flowing after convergence");
  }
}

}  // namespace
