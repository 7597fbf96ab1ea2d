// MdSockets over real multicast on loopback (interface 127.0.0.1, TTL 0:
// never leaves the host), read straight into an MdConsumer as the trader's
// compact layout does: packets sent with net::UdpMulticastSender to the
// sockets' two groups (own groups in 239.255.93.0/24, kernel-picked ports)
// reach the consumer, which builds the book; a datagram larger than the
// receive buffer is counted as truncated, garbage as invalid; bad configs
// are refused by name. Every wait is bounded (2 s), so a failing test ends.
#include "client/md_feed.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/md_consumer.hpp"
#include "core/tsc_clock.hpp"
#include "net/udp_multicast.hpp"
#include "proto/md_packet.hpp"
#include "support/md_messages.hpp"

namespace nt = nanotick::client;
namespace np = nanotick::proto;
namespace nb = nanotick::book;
namespace nn = nanotick::net;

namespace {

using nt::InstrumentId;
using nt::Side;

const nn::Ipv4Address kLoopback = nn::parse_ipv4("127.0.0.1");

struct Handler {
  int updates = 0;
  int lives = 0;
  int stales = 0;
  int trades = 0;
  std::uint64_t last_rx_tsc = 0;
  void on_trade(const nt::TradeEvent&, std::uint64_t) { ++trades; }
  void on_book_update(InstrumentId, std::uint64_t rx_tsc) {
    ++updates;
    last_rx_tsc = rx_tsc;
  }
  void on_instrument_stale(InstrumentId) { ++stales; }
  void on_instrument_live(InstrumentId, nt::TimeNs) { ++lives; }
};

// The trader's compact pass (trader.hpp) without the rest of the trader:
// the sockets read into the consumer, then its reorder timer runs.
class Feed {
 public:
  Feed(const nt::MdFeedConfig& config, std::span<const nb::InstrumentCapacity> instruments,
       const nt::MdConsumerConfig& consumer_config, Handler& handler)
      : sockets_(config), consumer_(instruments, consumer_config, handler) {}

  int poll(nt::TimeNs now) {
    const int work = sockets_.poll(consumer_, now);
    consumer_.on_timer(now);
    return work;
  }
  // poll() at the TSC clock's time.
  int do_work() {
    const nanotick::core::TscClock& clock = nanotick::core::TscClock::global();
    return poll(static_cast<nt::TimeNs>(clock.to_ns(static_cast<std::int64_t>(clock.now()))));
  }

  const nt::MdConsumer<Handler>& consumer() const { return consumer_; }
  const nt::MdFeedCounters& counters() const { return sockets_.counters(); }
  const nn::SocketAddress& incremental_address() const { return sockets_.incremental_address(); }
  const nn::SocketAddress& snapshot_address() const { return sockets_.snapshot_address(); }

 private:
  nt::MdSockets sockets_;
  nt::MdConsumer<Handler> consumer_;
};

nt::MdFeedConfig config_for(const char* incremental, const char* snapshot) {
  nt::MdFeedConfig c;
  c.interface = kLoopback;
  c.incremental = {nn::parse_ipv4(incremental), 0};
  c.snapshot = {nn::parse_ipv4(snapshot), 0};
  c.receive_buffer_bytes = 1 << 20;
  return c;
}

std::vector<nb::InstrumentCapacity> one_instrument() { return {{64, 16}}; }

using nanotick::testing::md_bound;
using nanotick::testing::md_order;

void send(nn::UdpMulticastSender& s, std::span<const std::uint8_t> datagram) {
  ASSERT_TRUE(s.send(datagram)) << "errno " << s.last_error();
}

// Polls until `done` or 2 s; returns whether `done` became true.
template <typename Pred>
bool poll_until(Feed& feed, Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    (void)feed.do_work();
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

TEST(MdSockets, ShouldBuildTheBookFromBothChannelsOverLoopbackMulticast) {
  Handler h;
  const auto caps = one_instrument();
  Feed feed(config_for("239.255.93.1", "239.255.93.2"), caps, nt::MdConsumerConfig{}, h);
  ASSERT_NE(feed.incremental_address().port, 0);
  ASSERT_NE(feed.snapshot_address().port, 0);
  nn::UdpMulticastSender inc({kLoopback, feed.incremental_address(), 0});
  nn::UdpMulticastSender snap({kLoopback, feed.snapshot_address(), 0});
  EXPECT_EQ(feed.poll(0), 0) << "nothing sent yet";

  // Late join: seqs 1-2 were missed; the first packet starts the channel.
  np::PacketWriter iw(np::Channel::kIncremental, 200);
  ASSERT_TRUE(iw.append(md_order(3, Side::kSell, 105, 7, 3), 3));
  send(inc, iw.finish());
  ASSERT_TRUE(poll_until(feed, [&] { return feed.consumer().counters().packets[0].get() == 1; }));
  EXPECT_FALSE(feed.consumer().is_live(0));

  // A snapshot as of seq 2 (two bids), then the buffered seq 3 applies on top.
  np::PacketWriter sw(np::Channel::kSnapshot, 200);
  ASSERT_TRUE(sw.append(md_bound(np::MdMsgType::kSnapshotStart, 2, 2, 2), 1));
  ASSERT_TRUE(sw.append(md_order(1, Side::kBuy, 100, 10, 2, np::MdMsgType::kSnapshotOrder), 2));
  ASSERT_TRUE(sw.append(md_order(2, Side::kBuy, 99, 5, 2, np::MdMsgType::kSnapshotOrder), 3));
  send(snap, sw.finish());
  ASSERT_TRUE(sw.append(md_bound(np::MdMsgType::kSnapshotEnd, 2, 2, 2), 4));
  send(snap, sw.finish());
  ASSERT_TRUE(poll_until(feed, [&] { return feed.consumer().is_live(0); }));
  EXPECT_EQ(h.lives, 1);
  EXPECT_EQ(feed.consumer().books().order_count(0), 3u);

  // Live: a trade against the best bid, then a delete.
  np::MdTrade t{};
  t.header = {sizeof t, np::MdMsgType::kTrade, static_cast<std::uint8_t>(Side::kSell)};
  t.instrument = 0;
  t.maker_order_id = 1;
  t.taker_order_id = 50;
  t.price = 100;
  t.qty = 4;
  t.instrument_seq = 4;
  np::MdDeleteOrder d{};
  d.header = {sizeof d, np::MdMsgType::kDeleteOrder, 0};
  d.instrument = 0;
  d.order_id = 2;
  d.instrument_seq = 5;
  ASSERT_TRUE(iw.append(t, 4));
  ASSERT_TRUE(iw.append(d, 5));
  send(inc, iw.finish());
  ASSERT_TRUE(poll_until(feed, [&] { return feed.consumer().next_seq() == 6; }));
  const auto bid = feed.consumer().books().best(0, Side::kBuy);
  ASSERT_TRUE(bid.has_value());
  EXPECT_EQ(bid->price, 100);
  EXPECT_EQ(bid->qty, 6);
  EXPECT_EQ(feed.consumer().books().order_count(0), 2u);
  EXPECT_EQ(h.trades, 1);
  EXPECT_EQ(h.stales, 0);
  EXPECT_GT(h.last_rx_tsc, 0u) << "each datagram is stamped with the TSC when read";
  EXPECT_EQ(feed.counters().datagrams[0].get(), 2u);
  EXPECT_EQ(feed.counters().datagrams[1].get(), 2u);
}

TEST(MdSockets, ShouldCountTruncatedAndInvalidDatagrams) {
  Handler h;
  const auto caps = one_instrument();
  nt::MdFeedConfig config = config_for("239.255.93.3", "239.255.93.4");
  config.max_datagram_bytes = 256;
  Feed feed(config, caps, nt::MdConsumerConfig{}, h);
  nn::UdpMulticastSender inc({kLoopback, feed.incremental_address(), 0});
  nn::UdpMulticastSender snap({kLoopback, feed.snapshot_address(), 0});

  const std::vector<std::uint8_t> big(1000, 0x11);
  const std::vector<std::uint8_t> junk(40, 0x22);
  send(inc, big);
  send(snap, junk);
  np::PacketWriter iw(np::Channel::kIncremental, 200);
  send(inc, iw.heartbeat(1));
  ASSERT_TRUE(poll_until(feed, [&] {
    return feed.counters().truncated[0].get() == 1 && feed.consumer().counters().heartbeats[0].get() == 1 &&
           feed.counters().datagrams[1].get() == 1;
  }));
  std::uint64_t invalid = 0;
  for (const auto& c : feed.consumer().counters().invalid) invalid += c.get();
  EXPECT_EQ(invalid, 1u) << "the junk on the snapshot channel";
  EXPECT_EQ(feed.consumer().counters().packets[0].get(), 1u) << "the truncated datagram never reached the consumer";
  EXPECT_EQ(feed.consumer().next_seq(), 1u);
  EXPECT_EQ(h.updates + h.lives + h.stales, 0);
}

TEST(MdSockets, ShouldReadAtMostItsBudgetPerPoll) {
  Handler h;
  const auto caps = one_instrument();
  nt::MdFeedConfig config = config_for("239.255.93.5", "239.255.93.6");
  config.poll_budget = 2;
  Feed feed(config, caps, nt::MdConsumerConfig{}, h);
  nn::UdpMulticastSender inc({kLoopback, feed.incremental_address(), 0});
  np::PacketWriter iw(np::Channel::kIncremental, 200);
  for (int i = 0; i < 5; ++i) send(inc, iw.heartbeat(1));
  ASSERT_TRUE(poll_until(feed, [&] { return feed.counters().datagrams[0].get() >= 2; }));
  // Whatever arrived, one poll never took more than two.
  std::uint64_t seen = feed.counters().datagrams[0].get();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (seen < 5 && std::chrono::steady_clock::now() < deadline) {
    const int work = feed.poll(0);
    EXPECT_LE(work, 2);
    const std::uint64_t now_seen = feed.counters().datagrams[0].get();
    if (now_seen == seen) std::this_thread::sleep_for(std::chrono::microseconds(200));
    seen = now_seen;
  }
  EXPECT_EQ(seen, 5u);
}

TEST(MdFeedConfig, ShouldRejectEachBadFieldByName) {
  const auto message = [](const nt::MdFeedConfig& c) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  nt::MdFeedConfig c = config_for("239.255.93.7", "239.255.93.8");
  EXPECT_EQ(message(c), "");
  c.max_datagram_bytes = 100;
  EXPECT_NE(message(c).find("max_datagram_bytes"), std::string::npos);
  c = config_for("239.255.93.7", "239.255.93.8");
  c.poll_budget = 0;
  EXPECT_NE(message(c).find("poll_budget"), std::string::npos);
  c = config_for("239.255.93.7", "239.255.93.8");
  c.receive_buffer_bytes = 0;
  EXPECT_NE(message(c).find("receive_buffer_bytes"), std::string::npos);
  c = config_for("239.255.93.7", "239.255.93.7");
  c.incremental.port = c.snapshot.port = 19000;
  EXPECT_NE(message(c).find("snapshot"), std::string::npos);

  Handler h;
  const auto caps = one_instrument();
  c = config_for("239.255.93.7", "239.255.93.8");
  c.poll_budget = 0;
  EXPECT_THROW({ Feed bad(c, caps, nt::MdConsumerConfig{}, h); }, std::invalid_argument);
  c = config_for("127.0.0.9", "239.255.93.8");  // not a multicast group: the receiver says so
  EXPECT_THROW({ Feed bad(c, caps, nt::MdConsumerConfig{}, h); }, std::invalid_argument);
}

}  // namespace
