// MdRingFeed: the trader's incremental channel read from the exchange's
// market data ring (a real ipc::MdRingServer: memfd segment, UNIX socket),
// straight into an MdConsumer as the trader's engine thread does. Packets
// published into the ring build the book; a reader lapped by a tiny ring
// counts what it lost, and the consumer recovers the instrument through a
// snapshot exactly as after a UDP gap; an exchange killed with SIGKILL (a
// child process) is noticed and the feed reconnects to the next one on the
// same path; no exchange, or one that never answers, is retried with
// back-off. Time is passed in (`now`), so the schedule is tested exactly;
// every real wait is bounded (2 s).
#include "client/md_ring_feed.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/md_consumer.hpp"
#include "ipc/md_ring_server.hpp"
#include "ipc/unix_listener.hpp"
#include "proto/md_packet.hpp"
#include "support/md_messages.hpp"

namespace nt = nanotick::client;
namespace np = nanotick::proto;
namespace nb = nanotick::book;
namespace ni = nanotick::ipc;
using namespace std::chrono_literals;

namespace {

using nt::InstrumentId;
using nt::Side;
using Reason = nt::RecoveryReason;

std::string socket_path(const char* tag) {
  static int serial = 0;
  return "/tmp/nt-mdfeed-" + std::to_string(::getpid()) + "-" + tag + "-" + std::to_string(++serial) + ".sock";
}

struct Handler {
  int updates = 0;
  int lives = 0;
  int stales = 0;
  std::uint64_t last_rx_tsc = 0;
  void on_trade(const nt::TradeEvent&, std::uint64_t) {}
  void on_book_update(InstrumentId, std::uint64_t rx_tsc) {
    ++updates;
    last_rx_tsc = rx_tsc;
  }
  void on_instrument_stale(InstrumentId) { ++stales; }
  void on_instrument_live(InstrumentId, nt::TimeNs) { ++lives; }
};

nt::MdRingFeedConfig fast_config(const std::string& path) {
  nt::MdRingFeedConfig c;
  c.path = path;
  c.connect_timeout_ms = 50;
  c.reconnect_initial_ms = 1;
  c.reconnect_max_ms = 4;
  return c;
}

using nanotick::testing::md_bound;

// A resting buy of qty 1 (an AddOrder, or a SnapshotOrder).
np::MdOrder add(std::uint64_t id, std::int64_t price, std::uint64_t iseq,
                np::MdMsgType type = np::MdMsgType::kAddOrder) {
  return nanotick::testing::md_order(id, Side::kBuy, price, 1, iseq, type);
}

// One incremental packet holding one add: global seq `seq`, instrument seq `seq` too.
std::vector<std::uint8_t> add_packet(std::uint64_t seq) {
  np::PacketWriter w(np::Channel::kIncremental, 200);
  EXPECT_TRUE(w.append(add(seq, 100 - static_cast<std::int64_t>(seq % 50), seq), seq));
  const auto p = w.finish();
  return {p.begin(), p.end()};
}

// A complete snapshot of instrument 0 as of global seq `last_seq`: one order.
std::vector<std::vector<std::uint8_t>> snapshot(std::uint64_t last_seq, std::uint64_t iseq, std::uint64_t snap_seq) {
  np::PacketWriter w(np::Channel::kSnapshot, 400);
  EXPECT_TRUE(w.append(md_bound(np::MdMsgType::kSnapshotStart, last_seq, 1, iseq), snap_seq));
  EXPECT_TRUE(w.append(add(1000, 10, iseq, np::MdMsgType::kSnapshotOrder), snap_seq + 1));
  EXPECT_TRUE(w.append(md_bound(np::MdMsgType::kSnapshotEnd, last_seq, 1, iseq), snap_seq + 2));
  const auto p = w.finish();
  return {{p.begin(), p.end()}};
}

// The trader's pass, by hand: the ring into the consumer; the server's timer
// (when given) lets readers in.
struct Rig {
  explicit Rig(const nt::MdRingFeedConfig& c) : feed(c), consumer(caps, nt::MdConsumerConfig{}, handler) {}
  std::vector<nb::InstrumentCapacity> caps{{64, 16}};
  Handler handler;
  nt::MdRingFeed feed;
  nt::MdConsumer<Handler> consumer;
  nt::TimeNs now = 1'000'000'000;

  int pass(ni::MdRingServer* server = nullptr) {
    if (server != nullptr) (void)server->poll_connections();
    now += 200'000;  // 200 us a pass: past the hello poll period and the reorder window
    const int work = feed.poll(consumer, now);
    consumer.on_timer(now);
    return work;
  }
  bool until(const std::function<bool()>& done, ni::MdRingServer* server = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) {
      (void)pass(server);
      if (done()) return true;
      std::this_thread::sleep_for(50us);
    }
    return false;
  }
  void snapshot_channel(const std::vector<std::vector<std::uint8_t>>& packets) {
    for (const auto& p : packets) consumer.on_datagram(np::Channel::kSnapshot, p, now, 1);
  }
};

TEST(MdRingFeed, ShouldFeedTheConsumerAndRecoverALapThroughASnapshotAsAfterAUdpGap) {
  const std::string path = socket_path("lap");
  ni::MdRingServer server(path, 16);
  Rig rig(fast_config(path));
  ASSERT_TRUE(rig.until([&] { return rig.feed.connected(); }, &server));
  const auto& mc = rig.consumer.counters();
  const auto& fc = rig.feed.counters();

  // Late join at seq 3; a snapshot as of seq 2 brings the instrument live.
  server.publish(add_packet(3));
  ASSERT_TRUE(rig.until([&] { return mc.packets[0].get() == 1; }));
  rig.snapshot_channel(snapshot(2, 2, 1));
  ASSERT_TRUE(rig.consumer.is_live(0));
  EXPECT_EQ(rig.consumer.next_seq(), 4u);

  // Seqs 4..23 published while the reader sleeps: 16 slots keep 8..23.
  for (std::uint64_t seq = 4; seq <= 23; ++seq) server.publish(add_packet(seq));
  ASSERT_TRUE(rig.until([&] { return rig.consumer.next_seq() == 24; }));
  EXPECT_EQ(fc.laps.get(), 1u);
  EXPECT_EQ(fc.lost_packets.get(), 4u);
  EXPECT_EQ(fc.packets.get(), 1u + 16u);
  // The consumer's own view: a gap of exactly those seqs, the instrument's
  // seq jumped, it went stale and buffers -- as after lost datagrams.
  EXPECT_EQ(mc.gaps.get(), 1u);
  EXPECT_EQ(mc.messages_lost.get(), 4u);
  EXPECT_EQ(mc.instrument_seq_jumps.get(), 1u);
  EXPECT_EQ(mc.recoveries_started[static_cast<std::size_t>(Reason::kSeqJump)].get(), 1u);
  EXPECT_FALSE(rig.consumer.is_live(0));
  EXPECT_EQ(rig.handler.stales, 1);
  // The next snapshot (as of seq 23) ends the recovery.
  rig.snapshot_channel(snapshot(23, 23, 4));
  EXPECT_TRUE(rig.consumer.is_live(0));
  EXPECT_EQ(mc.recoveries_completed[static_cast<std::size_t>(Reason::kSeqJump)].get(), 1u);
  EXPECT_EQ(rig.consumer.books().order_count(0), 1u);
  // And it flows on.
  server.publish(add_packet(24));
  ASSERT_TRUE(rig.until([&] { return rig.consumer.next_seq() == 25; }));
  EXPECT_EQ(rig.consumer.books().order_count(0), 2u);
  EXPECT_TRUE(rig.consumer.is_live(0));
  EXPECT_GT(rig.handler.last_rx_tsc, 1u) << "a packet read from the ring is stamped with the TSC of its read";
}

// The exchange in a child process: serves readers and publishes one packet
// a millisecond (seq from `first`) until it is killed.
pid_t fork_exchange(const std::string& path, std::uint64_t first) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  try {
    ni::MdRingServer server(path, 64);
    for (std::uint64_t seq = first;; ++seq) {
      (void)server.poll_connections();
      if (server.readers() > 0) server.publish(add_packet(seq));
      std::this_thread::sleep_for(1ms);
    }
  } catch (...) {
    ::_exit(7);
  }
}

TEST(MdRingFeed, ShouldSeeItsExchangeKilledAndReconnectToTheNextOne) {
  const std::string path = socket_path("kill");
  const pid_t exchange = fork_exchange(path, 1);
  ASSERT_GT(exchange, 0);
  Rig rig(fast_config(path));
  const auto& fc = rig.feed.counters();
  const bool read = rig.until([&] { return fc.packets.get() >= 3; });
  ::kill(exchange, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(exchange, &status, 0), exchange);
  ASSERT_TRUE(read) << "connects " << fc.connects.get();
  EXPECT_EQ(fc.connects.get(), 1u);
  ASSERT_TRUE(rig.until([&] { return !rig.feed.connected(); }));
  EXPECT_EQ(fc.exchange_gone.get(), 1u);
  EXPECT_EQ(fc.connected.get(), 0u);
  // Nobody there: attempts fail and back off; the stale file is still there.
  ASSERT_TRUE(rig.until([&] { return fc.connect_failures.get() >= 2; }));
  // The next exchange on the same path (it replaces the stale file).
  ni::MdRingServer next(path, 16);
  ASSERT_TRUE(rig.until([&] { return rig.feed.connected(); }, &next));
  EXPECT_EQ(fc.connects.get(), 2u);
  const std::uint64_t before = rig.consumer.counters().packets[0].get();
  const std::uint64_t seq = rig.consumer.next_seq() + 100;  // packets the restart never sent: a gap
  next.publish(add_packet(seq));
  ASSERT_TRUE(rig.until([&] { return rig.consumer.counters().packets[0].get() == before + 1; }));
  EXPECT_EQ(fc.connected.get(), 1u);
}

TEST(MdRingFeed, ShouldRetryWithBackOffAndGiveUpOnAnExchangeThatNeverAnswers) {
  const std::string path = socket_path("backoff");
  nt::MdRingFeedConfig c = fast_config(path);
  c.reconnect_initial_ms = 10;
  c.reconnect_max_ms = 40;
  Rig rig(c);
  const auto& fc = rig.feed.counters();
  const nt::TimeNs t0 = rig.now;
  // Nobody listens: the first attempt fails at once, the next waits 10 ms,
  // then 20, then 40, 40...
  (void)rig.feed.poll(rig.consumer, t0);
  EXPECT_EQ(fc.connect_attempts.get(), 1u);
  const std::vector<nt::TimeNs> delays_ms = {10, 20, 40, 40};
  nt::TimeNs at = t0;
  for (std::size_t i = 0; i < delays_ms.size(); ++i) {
    at += delays_ms[i] * 1'000'000;
    EXPECT_EQ(rig.feed.poll(rig.consumer, at - 1), 0);
    EXPECT_EQ(fc.connect_attempts.get(), i + 1) << "attempt " << i + 2 << " came early";
    (void)rig.feed.poll(rig.consumer, at);
    EXPECT_EQ(fc.connect_attempts.get(), i + 2) << "attempt " << i + 2;
  }
  EXPECT_EQ(fc.connect_failures.get(), delays_ms.size() + 1);
  EXPECT_NE(rig.feed.last_connect_errno(), 0);
  // A listener that never sends the hello: refused after connect_timeout_ms (50).
  ni::UnixListener silent(path, 4, "test");
  at += 40'000'000;
  (void)rig.feed.poll(rig.consumer, at);
  EXPECT_EQ(fc.connect_attempts.get(), delays_ms.size() + 2);
  EXPECT_EQ(fc.connect_failures.get(), delays_ms.size() + 1) << "the connect itself succeeds";
  (void)rig.feed.poll(rig.consumer, at + 49'000'000);
  EXPECT_EQ(fc.refused[static_cast<std::size_t>(ni::MdRingRefusal::kTimedOut)].get(), 0u);
  (void)rig.feed.poll(rig.consumer, at + 50'000'000);
  EXPECT_EQ(fc.refused[static_cast<std::size_t>(ni::MdRingRefusal::kTimedOut)].get(), 1u);
  EXPECT_FALSE(rig.feed.connected());
}

TEST(MdRingFeedConfig, ShouldRejectEachBadFieldByName) {
  const auto message = [](const nt::MdRingFeedConfig& c) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nt::MdRingFeedConfig c = fast_config("/tmp/x.sock");
  EXPECT_EQ(message(c), "");
  c.path = "";
  EXPECT_NE(message(c).find("md ring: path:"), std::string::npos);
  c.path = std::string(108, 'p');
  EXPECT_NE(message(c).find("md ring: path:"), std::string::npos);
  c = fast_config("/tmp/x.sock");
  c.connect_timeout_ms = 0;
  EXPECT_NE(message(c).find("connect_timeout_ms"), std::string::npos);
  c = fast_config("/tmp/x.sock");
  c.reconnect_max_ms = 0;
  EXPECT_NE(message(c).find("reconnect_initial_ms"), std::string::npos);
  c = fast_config("/tmp/x.sock");
  c.poll_budget = 0;
  EXPECT_NE(message(c).find("poll_budget"), std::string::npos);
  EXPECT_THROW(nt::MdRingFeed{c}, std::invalid_argument);
}

}  // namespace
