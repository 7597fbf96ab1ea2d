// MdPublisher over real multicast on 127.0.0.1, TTL 0: each engine event
// becomes its wire message with the event's seq (in the header) and
// instrument_seq (in the message), bursts split at the MTU in
// order, partial packets wait for flush(), heartbeats announce the next seq
// when idle, a seq jump starts a new packet, every event is forwarded to the
// snapshot ring (waiting, counted, when it is full), config errors name the
// key, and the hot path does not allocate. Each test uses its own group in
// 239.255.78.0/25 and a kernel-picked port.
#include "exchange/marketdata/md_publisher.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ipc/md_ring_server.hpp"
#include "ipc/md_ring_subscriber.hpp"
#include "net/udp_multicast.hpp"
#include "proto/md_packet.hpp"
#include "support/allocation_counter.hpp"

namespace nx = nanotick::exchange;
namespace ne = nanotick::engine;
namespace nn = nanotick::net;
namespace np = nanotick::proto;
namespace ni = nanotick::ipc;

namespace {

const nn::Ipv4Address kLoopback = nn::parse_ipv4("127.0.0.1");

struct Message {
  np::MdMsgType type;
  std::uint64_t seq;
  std::vector<std::uint8_t> bytes;
  template <typename M>
  M as() const {
    return np::read_md<M>(bytes.data());
  }
};

struct Packet {
  np::PacketHeader header;
  std::size_t size;
  std::vector<Message> messages;
};

// A receiver joined to `group` on loopback, and the config of a publisher that sends to it.
struct Feed {
  explicit Feed(const char* group, std::uint32_t mtu = 1400, std::uint32_t heartbeat_ms = 60'000)
      : receiver({kLoopback, {nn::parse_ipv4(group), 0}, 1 << 20}) {
    config.interface = "127.0.0.1";
    config.incremental = receiver.local_address().to_string();
    config.ttl = 0;
    config.mtu = mtu;
    config.heartbeat_ms = heartbeat_ms;
  }

  // The next packet, validated, waiting up to 2 s (a failing test must end).
  std::optional<Packet> next(int timeout_ms = 2000) {
    pollfd p{receiver.fd(), POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    std::vector<std::uint8_t> buf(65536);
    const nn::RecvResult r = receiver.recv(buf);
    EXPECT_EQ(r.status, nn::RecvStatus::kDatagram);
    if (r.status != nn::RecvStatus::kDatagram) return std::nullopt;
    buf.resize(r.bytes);
    Packet out{};
    out.size = r.bytes;
    const np::PacketError e = np::parse_packet(buf, np::Channel::kIncremental, out.header);
    EXPECT_EQ(e, np::PacketError::kNone) << np::to_string(e);
    if (e != np::PacketError::kNone) return std::nullopt;
    np::for_each_message(buf, out.header, [&](np::MdMsgType t, const std::uint8_t* m, std::uint64_t seq) {
      out.messages.push_back({t, seq, std::vector<std::uint8_t>(m, m + np::md_message_length(t))});
    });
    return out;
  }
  bool nothing_waiting() {
    pollfd p{receiver.fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

  nn::UdpMulticastReceiver receiver;
  nx::MarketDataConfig config;
};

ne::MdEvent add(ne::Seq seq, ne::OrderId id, ne::Side side = ne::Side::kBuy, ne::Price price = 100, ne::Qty qty = 10) {
  ne::MdEvent e{};
  e.seq = seq;
  e.instrument_seq = 500 + seq;  // any value: the publisher copies it, never computes it
  e.instrument = 3;
  e.type = ne::MdType::kAdd;
  e.side = side;
  e.order_id = id;
  e.price = price;
  e.qty = qty;
  return e;
}

std::unique_ptr<nx::MdRing> make_ring() { return std::make_unique<nx::MdRing>(); }

std::vector<ne::MdEvent> drain(nx::MdRing& ring) {
  std::vector<ne::MdEvent> out;
  ring.drain([&](const ne::MdEvent& e) { out.push_back(e); });
  return out;
}

TEST(MdPublisher, ShouldEncodeEachEventAsItsWireMessageWithTheEventSeq) {
  Feed feed("239.255.78.1");
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring, 41);

  std::vector<ne::MdEvent> events;
  events.push_back(add(41, 7, ne::Side::kSell, 105, 30));
  ne::MdEvent mod{};
  mod.seq = 42, mod.instrument = 3, mod.type = ne::MdType::kModify, mod.side = ne::Side::kSell, mod.order_id = 7;
  mod.price = 105, mod.qty = 20;
  events.push_back(mod);
  ne::MdEvent trade{};
  trade.seq = 43, trade.instrument = 3, trade.type = ne::MdType::kTrade, trade.side = ne::Side::kBuy;
  trade.order_id = 7, trade.contra_order_id = 9, trade.price = 105, trade.qty = 5;
  events.push_back(trade);
  ne::MdEvent del{};
  del.seq = 44, del.instrument = 3, del.type = ne::MdType::kDelete, del.side = ne::Side::kSell, del.order_id = 7;
  del.price = 105, del.qty = 15;
  events.push_back(del);
  ne::MdEvent top{};
  top.seq = 45, top.instrument = 3, top.type = ne::MdType::kTopOfBook;
  top.bid_price = 99, top.bid_qty = 4, top.ask_price = 0, top.ask_qty = 0;
  events.push_back(top);
  for (std::size_t i = 1; i < events.size(); ++i) events[i].instrument_seq = 900 + i;
  for (const ne::MdEvent& e : events) pub.on_md(e);
  EXPECT_EQ(pub.packets(), 0u) << "a partial packet waits for flush()";
  pub.flush();

  const std::optional<Packet> p = feed.next();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->header.first_seq, 41u);
  EXPECT_EQ(p->header.channel, np::Channel::kIncremental);
  ASSERT_EQ(p->messages.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(p->messages[i].seq, 41 + i);

  ASSERT_EQ(p->messages[0].type, np::MdMsgType::kAddOrder);
  const auto a = p->messages[0].as<np::MdOrder>();
  EXPECT_EQ(a.header.side, 2);
  EXPECT_EQ(a.instrument, 3u);
  EXPECT_EQ(a.order_id, 7u);
  EXPECT_EQ(a.price, 105);
  EXPECT_EQ(a.qty, 30);
  EXPECT_EQ(a.instrument_seq, 541u);

  ASSERT_EQ(p->messages[1].type, np::MdMsgType::kModifyOrder);
  const auto m = p->messages[1].as<np::MdModifyOrder>();
  EXPECT_EQ(m.instrument, 3u);
  EXPECT_EQ(m.order_id, 7u);
  EXPECT_EQ(m.qty, 20);
  EXPECT_EQ(m.header.side, 2) << "the order's side";
  EXPECT_EQ(m.instrument_seq, 901u);

  ASSERT_EQ(p->messages[2].type, np::MdMsgType::kTrade);
  const auto t = p->messages[2].as<np::MdTrade>();
  EXPECT_EQ(t.header.side, 1) << "side = aggressor";
  EXPECT_EQ(t.instrument, 3u);
  EXPECT_EQ(t.maker_order_id, 7u);
  EXPECT_EQ(t.taker_order_id, 9u);
  EXPECT_EQ(t.price, 105);
  EXPECT_EQ(t.qty, 5);
  EXPECT_EQ(t.instrument_seq, 902u);

  ASSERT_EQ(p->messages[3].type, np::MdMsgType::kDeleteOrder);
  const auto d = p->messages[3].as<np::MdDeleteOrder>();
  EXPECT_EQ(d.instrument, 3u);
  EXPECT_EQ(d.order_id, 7u);
  EXPECT_EQ(d.instrument_seq, 903u);

  ASSERT_EQ(p->messages[4].type, np::MdMsgType::kTopOfBook);
  const auto b = p->messages[4].as<np::MdTopOfBook>();
  EXPECT_EQ(b.header.side, 0);
  EXPECT_EQ(b.instrument, 3u);
  EXPECT_EQ(b.bid_price, 99);
  EXPECT_EQ(b.bid_qty, 4);
  EXPECT_EQ(b.ask_price, 0);
  EXPECT_EQ(b.ask_qty, 0);
  EXPECT_EQ(b.instrument_seq, 904u);

  EXPECT_EQ(pub.packets(), 1u);
  EXPECT_EQ(pub.messages(), 5u);
  EXPECT_EQ(pub.bytes(), p->size);
  EXPECT_EQ(pub.heartbeats(), 0u);
  EXPECT_EQ(pub.send_drops(), 0u);

  const std::vector<ne::MdEvent> forwarded = drain(*ring);
  ASSERT_EQ(forwarded.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(std::memcmp(&forwarded[i], &events[i], sizeof(ne::MdEvent)), 0) << "event " << i;
}

TEST(MdPublisher, ShouldSplitABurstAtTheMtuInOrder) {
  Feed feed("239.255.78.2", 136);
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  // 16-byte header + 3 x 40-byte AddOrder = 136: the 4th add does not fit.
  for (ne::Seq s = 1; s <= 10; ++s) pub.on_md(add(s, s));
  EXPECT_EQ(pub.packets(), 3u) << "full packets go out without waiting for flush()";
  pub.flush();
  std::vector<std::uint16_t> counts;
  ne::Seq expect_seq = 1;
  for (int i = 0; i < 4; ++i) {
    const std::optional<Packet> p = feed.next();
    ASSERT_TRUE(p.has_value()) << "packet " << i;
    EXPECT_LE(p->size, 136u);
    EXPECT_EQ(p->header.first_seq, expect_seq);
    for (const Message& m : p->messages) {
      EXPECT_EQ(m.seq, expect_seq);
      EXPECT_EQ(m.as<np::MdOrder>().order_id, expect_seq) << "never reordered";
      EXPECT_EQ(m.as<np::MdOrder>().instrument_seq, 500 + expect_seq);
      ++expect_seq;
    }
    counts.push_back(p->header.count);
  }
  EXPECT_EQ(counts, (std::vector<std::uint16_t>{3, 3, 3, 1}));
  EXPECT_TRUE(feed.nothing_waiting());
  EXPECT_EQ(pub.packets(), 4u);
  EXPECT_EQ(pub.messages(), 10u);
  EXPECT_EQ(pub.bytes(), 3u * 136 + 56);

  // Mixed sizes fill a packet exactly: 16 + 48 (Trade) + 48 (TopOfBook) + 24 (DeleteOrder) = 136.
  ne::MdEvent trade = add(11, 1);
  trade.type = ne::MdType::kTrade;
  ne::MdEvent top = add(12, 0);
  top.type = ne::MdType::kTopOfBook;
  ne::MdEvent del = add(13, 1);
  del.type = ne::MdType::kDelete;
  pub.on_md(trade);
  pub.on_md(top);
  pub.on_md(del);
  pub.on_md(add(14, 14));
  pub.flush();
  const std::optional<Packet> full = feed.next();
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->size, 136u);
  EXPECT_EQ(full->header.count, 3);
  const std::optional<Packet> rest = feed.next();
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->header.first_seq, 14u);
  EXPECT_EQ(rest->header.count, 1);
}

TEST(MdPublisher, ShouldSendHeartbeatsAnnouncingTheNextSeqWhenIdle) {
  Feed feed("239.255.78.3", 1400, 20);
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring, 7);
  auto heartbeat = [&]() -> std::optional<Packet> {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    const std::uint64_t before = pub.heartbeats();
    while (pub.heartbeats() == before && std::chrono::steady_clock::now() < deadline) {
      (void)pub.do_work();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return feed.next();
  };
  const std::optional<Packet> first = heartbeat();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->header.count, 0);
  EXPECT_EQ(first->header.first_seq, 7u) << "nothing sent yet: the seq given at construction";
  EXPECT_EQ(first->size, sizeof(np::PacketHeader));

  pub.on_md(add(7, 1));
  pub.on_md(add(8, 2));
  pub.flush();
  const std::optional<Packet> data = feed.next();
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(data->header.count, 2);
  const std::optional<Packet> second = heartbeat();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->header.count, 0);
  EXPECT_EQ(second->header.first_seq, 9u);
  EXPECT_GE(pub.heartbeats(), 2u);
  EXPECT_EQ(pub.packets(), pub.heartbeats() + 1);
}

TEST(MdPublisher, ShouldNotSendAHeartbeatBeforeTheIntervalHasPassed) {
  Feed feed("239.255.78.4", 1400, 60'000);
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(pub.do_work(), 0);
  EXPECT_EQ(pub.packets(), 0u);
  EXPECT_TRUE(feed.nothing_waiting());
}

TEST(MdPublisher, ShouldSendAPartialPacketLeftOverFromDoWork) {
  Feed feed("239.255.78.5");
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  pub.on_md(add(1, 1));
  EXPECT_EQ(pub.do_work(), 1);
  const std::optional<Packet> p = feed.next();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->header.count, 1);
  EXPECT_EQ(pub.do_work(), 0);
}

TEST(MdPublisher, ShouldStartANewPacketWhenTheSeqJumps) {
  Feed feed("239.255.78.6");
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  pub.on_md(add(1, 1));
  pub.on_md(add(2, 2));
  pub.on_md(add(5, 5));
  pub.flush();
  const std::optional<Packet> a = feed.next();
  const std::optional<Packet> b = feed.next();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->header.first_seq, 1u);
  EXPECT_EQ(a->header.count, 2);
  EXPECT_EQ(b->header.first_seq, 5u) << "a packet's numbers are consecutive: 5 is not 3";
  EXPECT_EQ(b->header.count, 1);
  EXPECT_EQ(pub.channel().seq_jumps(), 1u);
}

TEST(MdPublisher, ShouldDropAnEventOfUnknownTypeAndCountIt) {
  Feed feed("239.255.78.7");
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  ne::MdEvent bad = add(1, 1);
  bad.type = static_cast<ne::MdType>(99);
  pub.on_md(bad);
  pub.flush();
  EXPECT_EQ(pub.bad_events(), 1u);
  EXPECT_EQ(pub.packets(), 0u);
  EXPECT_TRUE(drain(*ring).empty());
}

TEST(MdPublisher, ShouldWaitForRoomInAFullSnapshotRingAndLoseNothing) {
  Feed feed("239.255.78.8");
  auto ring = make_ring();
  nx::MdPublisher pub(feed.config, *ring);
  const std::size_t capacity = nx::MdRing::capacity();
  for (ne::Seq s = 1; s <= capacity; ++s) pub.on_md(add(s, s));
  EXPECT_EQ(pub.ring_full_spins(), 0u);
  // The consumer drains only once it has seen the publisher waiting, so the
  // wait is certain, not a matter of scheduling.
  std::vector<ne::MdEvent> consumed;
  std::thread consumer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (pub.ring_full_spins() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    while (consumed.size() < capacity + 1 && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(1))
      ring->drain([&](const ne::MdEvent& e) { consumed.push_back(e); });
  });
  pub.on_md(add(capacity + 1, capacity + 1));
  consumer.join();
  EXPECT_GT(pub.ring_full_spins(), 0u);
  ASSERT_EQ(consumed.size(), capacity + 1);
  for (std::size_t i = 0; i < consumed.size(); ++i) ASSERT_EQ(consumed[i].seq, i + 1);
}

TEST(MdPublisher, ShouldNotAllocateWhilePublishing) {
  for (const bool shared : {false, true}) {  // multicast only, and mirrored into the shared-memory ring
    SCOPED_TRACE(shared ? "with the ring" : "multicast only");
    Feed feed(shared ? "239.255.78.12" : "239.255.78.9", 256, 1);
    auto ring = make_ring();
    const std::string path = "/tmp/nt-mdpub-alloc-" + std::to_string(::getpid()) + ".sock";
    std::optional<ni::MdRingServer> shm;
    nx::MdPublisher pub(feed.config, *ring);
    if (shared) pub.share_in(shm.emplace(path, 64));
    const nanotick::test::AllocationScope scope;
    for (ne::Seq s = 1; s <= 200; ++s) {
      pub.on_md(add(s, s));
      if (s % 7 == 0) pub.flush();
      (void)pub.do_work();
    }
    EXPECT_EQ(scope.count(), 0u);
    EXPECT_EQ(drain(*ring).size(), 200u);
    if (shm) {
      EXPECT_GT(shm->packets(), 0u);
      EXPECT_EQ(shm->packets(), pub.packets());
    }
  }
}

TEST(MdPublisher, ShouldMirrorEveryPacketItSendsIntoTheSharedMemoryRing) {
  Feed feed("239.255.78.11", 1400, 5);
  auto ring = make_ring();
  const std::string path = "/tmp/nt-mdpub-" + std::to_string(::getpid()) + ".sock";
  ni::MdRingServer shm(path, 256);
  nx::MdPublisher pub(feed.config, *ring, 7);
  pub.share_in(shm);
  ni::MdRingSubscriber sub(path);
  ASSERT_EQ(sub.start_connect(), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  ni::MdRingSubscriber::Step step = ni::MdRingSubscriber::Step::kWaiting;
  while (step == ni::MdRingSubscriber::Step::kWaiting && std::chrono::steady_clock::now() < deadline) {
    (void)pub.do_work();  // at most once a millisecond it looks at the ring's socket
    step = sub.poll_connect();
  }
  ASSERT_EQ(step, ni::MdRingSubscriber::Step::kConnected);
  EXPECT_EQ(shm.readers(), 1u);
  const std::uint64_t sent_before = pub.packets();

  for (ne::Seq s = 7; s < 107; ++s) {
    pub.on_md(add(s, s));
    if (s % 10 == 0) pub.flush();
  }
  pub.flush();
  const std::uint64_t beats = pub.heartbeats();
  while (pub.heartbeats() < beats + 2 && std::chrono::steady_clock::now() < deadline) (void)pub.do_work();
  ASSERT_GE(pub.heartbeats(), beats + 2);

  std::vector<std::vector<std::uint8_t>> udp;
  std::vector<std::uint8_t> buf(65536);
  for (;;) {
    pollfd p{feed.receiver.fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) != 1) break;
    const nn::RecvResult r = feed.receiver.recv(buf);
    ASSERT_EQ(r.status, nn::RecvStatus::kDatagram);
    udp.emplace_back(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(r.bytes));
  }
  std::vector<std::vector<std::uint8_t>> shm_packets;
  for (ni::MdRingSubscriber::Read r = sub.read(); r != ni::MdRingSubscriber::Read::kEmpty; r = sub.read()) {
    ASSERT_EQ(r, ni::MdRingSubscriber::Read::kPacket);
    shm_packets.emplace_back(sub.packet().begin(), sub.packet().end());
  }
  ASSERT_EQ(udp.size(), pub.packets());
  ASSERT_EQ(shm.packets(), pub.packets()) << "every packet sent went into the ring";
  ASSERT_EQ(shm_packets.size(), pub.packets() - sent_before) << "the reader has all those sent since it joined";
  const std::size_t skip = udp.size() - shm_packets.size();
  std::size_t heartbeats = 0;
  for (std::size_t i = 0; i < shm_packets.size(); ++i) {
    EXPECT_EQ(shm_packets[i], udp[skip + i]) << "packet " << i;
    np::PacketHeader h{};
    ASSERT_EQ(np::parse_packet(shm_packets[i], np::Channel::kIncremental, h), np::PacketError::kNone);
    heartbeats += h.count == 0 ? 1 : 0;
  }
  EXPECT_GE(heartbeats, 2u) << "heartbeats go into the ring too";
}

TEST(MdPublisher, ShouldRejectABadConfigNamingTheKey) {
  auto ring = make_ring();
  auto expect_error = [&](nx::MarketDataConfig c, const std::string& key) {
    try {
      nx::MdPublisher pub(c, *ring);
      ADD_FAILURE() << "accepted a bad " << key;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  nx::MarketDataConfig good;
  good.incremental = "239.255.78.10:39210";
  nx::MarketDataConfig c = good;
  c.incremental = "10.0.0.1:9201";
  expect_error(c, "market_data.incremental");
  c = good;
  c.incremental = "239.255.78.10";
  expect_error(c, "market_data.incremental");
  c = good;
  c.interface = "not-an-ip";
  expect_error(c, "market_data.interface");
  c = good;
  c.mtu = 127;
  expect_error(c, "market_data.mtu");
  c = good;
  c.mtu = 65001;
  expect_error(c, "market_data.mtu");
  c = good;
  c.heartbeat_ms = 0;
  expect_error(c, "market_data.heartbeat_ms");
  c = good;
  c.ttl = 256;
  expect_error(c, "market_data.ttl");
  EXPECT_THROW(nx::MdPublisher(good, *ring, 0), std::invalid_argument) << "sequence numbers start at 1";
}

}  // namespace
