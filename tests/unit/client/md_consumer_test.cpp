// MdConsumer against a test venue (md_consumer_fixture.hpp): packets in
// order, twice, reordered inside the window, garbage; its config; no
// allocation after construction; the venue's trading state. The consumer's
// books must end equal to the reference order by order. Loss and recovery:
// md_consumer_recovery_test.cpp.
#include "client/md_consumer.hpp"

#include <gtest/gtest.h>

#include "support/allocation_counter.hpp"
#include "unit/client/md_consumer_fixture.hpp"

namespace {

using namespace md_consumer_fixture;

// ---- tests ------------------------------------------------------------------------------

TEST(MdConsumer, ShouldStartWithEveryInstrumentStaleAndGoLiveFromSnapshots) {
  Fixture f(1);
  for (InstrumentId i = 0; i < kInstruments; ++i) EXPECT_FALSE(f.consumer.is_live(i));
  EXPECT_EQ(f.consumer.stale_count(), kInstruments);
  f.bootstrap();
  for (InstrumentId i = 0; i < kInstruments; ++i) {
    EXPECT_TRUE(f.consumer.is_live(i)) << i;
    EXPECT_EQ(f.recorder.lives[i], 1);
    EXPECT_EQ(f.recorder.stale[i], 0) << "start stale: no stale callback";
  }
  EXPECT_EQ(f.consumer.stale_count(), 0u);
  EXPECT_EQ(f.consumer.counters().recoveries_completed[reason(nt::RecoveryReason::kLateJoin)].get(), kInstruments);
  EXPECT_EQ(f.consumer.recovery_ns().count(), kInstruments);
  f.expect_books_equal("after bootstrap");
}

TEST(MdConsumer, ShouldMatchTheReferenceAfterEveryPacketInOrder) {
  Fixture f(2);
  f.bootstrap();
  f.recorder.expected = &f.venue.reference();
  const std::uint64_t trades_before = f.venue.trades_packed();
  for (int n = 0; n < 400; ++n) {
    const Packet p = f.venue.next_packet();
    int updates_before = 0, updates_after = 0;
    for (int u : f.recorder.updates) updates_before += u;
    f.deliver(p);
    for (int u : f.recorder.updates) updates_after += u;
    ASSERT_EQ(updates_after - updates_before, __builtin_popcount(p.instruments)) << "one update per instrument touched";
    for (InstrumentId i = 0; i < kInstruments; ++i)
      ASSERT_TRUE(same_book(f.consumer.books(), f.venue.reference(), i)) << "packet " << n << " instrument " << i;
    if (n % 37 == 0) f.deliver(f.venue.snapshot(static_cast<InstrumentId>(n % kInstruments)));  // audited, ignored
  }
  const auto& c = f.consumer.counters();
  EXPECT_EQ(f.recorder.update_mismatches, 0) << "the handler only ever sees whole packets";
  EXPECT_EQ(f.recorder.trades, f.venue.trades_packed() - trades_before);
  EXPECT_GT(f.recorder.trades, 0u);
  EXPECT_EQ(f.recorder.trades_after_book, 0) << "on_trade comes before the book applies the trade";
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
  EXPECT_EQ(c.gaps.get(), 0u);
  EXPECT_EQ(c.duplicates.get(), 0u);
  EXPECT_EQ(c.book_rejects.get(), 0u);
  EXPECT_EQ(c.top_of_book_mismatches.get(), 0u);
  EXPECT_GT(c.audits.get(), 0u);
  EXPECT_EQ(c.audit_mismatches.get(), 0u);
  EXPECT_GT(c.snapshots_ignored_live.get(), 0u);
}

TEST(MdConsumer, ShouldDropDuplicatePackets) {
  Fixture f(3);
  f.bootstrap();
  std::vector<Packet> sent;
  std::uint64_t dups = 0;
  for (int n = 0; n < 200; ++n) {
    sent.push_back(f.venue.next_packet());
    f.deliver(sent.back());
    f.deliver(sent.back());
    ++dups;
    if (n >= 5 && n % 10 == 0) {
      f.deliver(sent[sent.size() - 5]);
      ++dups;
    }
  }
  f.expect_books_equal("duplicates");
  EXPECT_EQ(f.consumer.counters().duplicates.get(), dups);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
}

TEST(MdConsumer, ShouldApplyPacketsReorderedInsideTheWindowWithoutRecovery) {
  Fixture f(4);
  f.bootstrap();
  std::mt19937_64 rng(44);
  for (int block = 0; block < 40; ++block) {
    std::vector<Packet> ps;
    const int size = 2 + static_cast<int>(rng() % 7);  // up to 8: the first stays the hole, 7 held
    for (int i = 0; i < size; ++i) ps.push_back(f.venue.next_packet());
    if (block % 5 == 0) ps.push_back(f.venue.heartbeat());
    std::shuffle(ps.begin(), ps.end(), rng);
    for (const Packet& p : ps) {
      f.deliver(p);
      f.now += 1000;
      f.consumer.on_timer(f.now);  // well inside 200 us
    }
    f.expect_books_equal("after a shuffled block");
    EXPECT_EQ(f.consumer.held_packets(), 0u);
  }
  const auto& c = f.consumer.counters();
  EXPECT_GT(c.reordered.get(), 0u);
  EXPECT_EQ(c.gaps.get(), 0u);
  EXPECT_EQ(c.messages_lost.get(), 0u);
  EXPECT_EQ(f.recorder.total_stale(), 0);
  EXPECT_EQ(f.recorder.order_violations, 0);
}

TEST(MdConsumer, ShouldWaitReorderNsBeforeGivingUpAHole) {
  Fixture f(5);
  f.bootstrap();
  f.venue.next_packet();  // lost
  f.deliver(f.venue.next_packet());
  EXPECT_EQ(f.consumer.held_packets(), 1u);
  f.consumer.on_timer(f.now + 199'999);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
  f.consumer.on_timer(f.now + 200'000);
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  EXPECT_EQ(f.consumer.held_packets(), 0u);
}

TEST(MdConsumer, ShouldGiveUpTheHoleWhenTheWindowIsFull) {
  nt::MdConsumerConfig config;
  config.reorder_packets = 2;
  Fixture f(6, config);
  f.bootstrap();
  const Packet lost = f.venue.next_packet();
  f.deliver(f.venue.next_packet());
  f.deliver(f.venue.next_packet());
  EXPECT_EQ(f.consumer.counters().gaps.get(), 0u);
  f.deliver(f.venue.next_packet());  // no timer at all: the full window gives up the hole
  EXPECT_EQ(f.consumer.counters().gaps.get(), 1u);
  EXPECT_EQ(f.consumer.counters().messages_lost.get(), lost.count);
  EXPECT_EQ(f.consumer.next_seq(), f.venue.packed_seq() + 1);
}

TEST(MdConsumer, ShouldCountGarbageAndTruncatedDatagramsAndStayUnharmed) {
  Fixture f(12);
  f.bootstrap();
  for (int n = 0; n < 10; ++n) f.deliver(f.venue.next_packet());
  const auto& c = f.consumer.counters();
  const auto invalid = [&](np::PacketError e) { return c.invalid[static_cast<std::size_t>(e)].get(); };
  const Packet good = f.venue.next_packet();
  ASSERT_GE(good.count, 2u);
  const std::array<int, kInstruments> updates = f.recorder.updates;

  const std::vector<std::uint8_t> tiny(5, 0xAB);
  f.consumer.on_datagram(np::Channel::kIncremental, tiny, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTooShort), 1u);

  std::vector<std::uint8_t> cut(good.bytes.begin(), good.bytes.end() - 10);
  f.consumer.on_datagram(np::Channel::kIncremental, cut, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kLengthMismatch), 1u);
  const auto cut_length = static_cast<std::uint16_t>(cut.size());
  std::memcpy(cut.data(), &cut_length, 2);  // a consistent header over a cut last message
  f.consumer.on_datagram(np::Channel::kIncremental, cut, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTruncatedMessage), 1u);

  std::vector<std::uint8_t> bad = good.bytes;
  bad[3] = 2;
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kBadVersion), 1u);
  bad = good.bytes;
  bad[16 + 2] = 99;  // first message's type
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kUnknownMessageType), 1u);
  bad = good.bytes;
  bad[16] = static_cast<std::uint8_t>(bad[16] + 8);  // first message's length
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kBadMessageLength), 1u);
  bad = good.bytes;
  bad[4] = static_cast<std::uint8_t>(bad[4] + 1);  // count
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kTruncatedMessage), 2u);
  f.consumer.on_datagram(np::Channel::kSnapshot, good.bytes, f.now, 0);
  f.consumer.on_datagram(static_cast<np::Channel>(7), good.bytes, f.now, 0);
  EXPECT_EQ(invalid(np::PacketError::kWrongChannel), 2u);
  bad = good.bytes;
  std::memset(bad.data() + 8, 0, 8);  // first_seq 0
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  std::memset(bad.data() + 8, 0xFF, 8);  // first_seq + count overflows
  f.consumer.on_datagram(np::Channel::kIncremental, bad, f.now, 0);
  EXPECT_EQ(c.bad_seq.get(), 2u);

  std::mt19937_64 rng(1212);
  std::uint64_t random_garbage = 0;
  for (int n = 0; n < 300; ++n) {
    std::vector<std::uint8_t> junk(1 + rng() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
    f.consumer.on_datagram(n % 2 == 0 ? np::Channel::kIncremental : np::Channel::kSnapshot, junk, f.now, 0);
    ++random_garbage;
  }
  std::uint64_t total_invalid = 0;
  for (const auto& x : c.invalid) total_invalid += x.get();
  EXPECT_EQ(total_invalid, 9u + random_garbage);
  EXPECT_EQ(f.recorder.updates, updates) << "garbage reaches no handler";
  EXPECT_EQ(f.recorder.total_stale(), 0);

  f.deliver(good);
  for (int n = 0; n < 30; ++n) f.deliver(f.venue.next_packet());
  f.expect_books_equal("after the garbage");
  EXPECT_EQ(c.gaps.get(), 0u);
}

TEST(MdConsumer, ShouldNotAllocateAfterConstruction) {
  Fixture f(13, [] {
    nt::MdConsumerConfig c;
    c.buffer_messages = 64;
    return c;
  }());
  // Everything prepared first: a late join, in-order flow, a loss and its
  // recovery, reordering, duplicates, an overflow, garbage.
  std::vector<Packet> script;
  for (int n = 0; n < 3; ++n) script.push_back(f.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i)
    for (Packet& p : f.venue.snapshot(i)) script.push_back(std::move(p));
  for (int n = 0; n < 100; ++n) script.push_back(f.venue.next_packet());
  for (Packet& p : f.venue.flush()) script.push_back(std::move(p));
  f.venue.next_packet(kA);  // lost
  for (int n = 0; n < 30; ++n) script.push_back(f.venue.next_packet(kA));  // holes, overflow
  for (int n = 0; n < 10; ++n) script.push_back(f.venue.next_packet());
  std::swap(script[script.size() - 2], script[script.size() - 4]);
  script.push_back(script[script.size() - 3]);
  for (Packet& p : f.venue.snapshot(kA)) script.push_back(std::move(p));
  Packet junk = script.back();
  junk.bytes[3] = 9;
  script.push_back(junk);

  nanotick::test::AllocationScope scope;
  for (const Packet& p : script) {
    f.deliver(p);
    f.now += 10'000;  // a hole is given up when the window fills, reordering stays inside it
    f.consumer.on_timer(f.now);
  }
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_GE(f.consumer.counters().buffer_overflows.get(), 1u);
  EXPECT_TRUE(f.consumer.is_live(kA));
  f.expect_books_equal("after the script");
}

TEST(MdConsumerConfig, ShouldRejectEachBadFieldByName) {
  const auto message = [](nt::MdConsumerConfig c) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nt::MdConsumerConfig c;
  EXPECT_EQ(message(c), "");
  c.reorder_packets = nt::MdConsumerConfig::kMaxReorderPackets + 1;
  EXPECT_NE(message(c).find("reorder_packets"), std::string::npos);
  c = {};
  c.reorder_ns = nt::MdConsumerConfig::kMaxReorderNs + 1;
  EXPECT_NE(message(c).find("reorder_ns"), std::string::npos);
  c = {};
  c.buffer_messages = 0;
  EXPECT_NE(message(c).find("buffer_messages"), std::string::npos);
  c.buffer_messages = nt::MdConsumerConfig::kMaxBufferMessages + 1;
  EXPECT_NE(message(c).find("buffer_messages"), std::string::npos);

  Recorder r;
  const auto caps = capacities();
  c = {};
  c.buffer_messages = 0;
  EXPECT_THROW({ Consumer bad(caps, c, r); }, std::invalid_argument);
  EXPECT_THROW({ Consumer none(std::span<const nb::InstrumentCapacity>(), nt::MdConsumerConfig{}, r); },
               std::invalid_argument);
  c = {};
  c.reorder_packets = 0;  // no holding: every hole is a gap at once
  Consumer no_window(caps, c, r);
  EXPECT_EQ(no_window.held_packets(), 0u);
}

TEST(MdConsumer, ShouldFollowTheInstrumentsTradingStateFromTheFeedAndFromSnapshots) {
  Fixture f(77);
  f.bootstrap();
  f.venue.set_trading_state(1, true);
  f.deliver(f.venue.flush());
  EXPECT_TRUE(f.consumer.halted(1));
  EXPECT_FALSE(f.consumer.halted(0));
  EXPECT_TRUE(f.consumer.is_live(1)) << "an InstrumentState follows on like any message of its instrument";
  ASSERT_EQ(f.recorder.trading_states.size(), 1u);
  EXPECT_EQ(f.recorder.trading_states[0], (std::pair<InstrumentId, bool>{1, true}));
  for (int i = 0; i < 20; ++i) f.deliver(f.venue.next_packet());
  f.venue.set_trading_state(1, false);
  f.deliver(f.venue.flush());
  EXPECT_FALSE(f.consumer.halted(1));
  EXPECT_EQ(f.recorder.trading_states.size(), 2u);

  // A late joiner learns a halt from the instrument's snapshot.
  Fixture late(78);
  late.venue.set_trading_state(2, true);
  for (int i = 0; i < 5; ++i) late.deliver(late.venue.next_packet());
  for (InstrumentId i = 0; i < kInstruments; ++i) late.deliver(late.venue.snapshot(i));
  EXPECT_TRUE(late.consumer.is_live(2));
  EXPECT_TRUE(late.consumer.halted(2));
  EXPECT_FALSE(late.consumer.halted(3));
}

}  // namespace
