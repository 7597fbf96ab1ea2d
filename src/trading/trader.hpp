// One trading client (docs/TRADER.md "Pipeline"): the market data sockets
// and consumer, the trade engine with its strategy, and the order gateway.
//
// The agent graph, wired here (runners from [threads]: core::ThreadLayout):
//
//   UDP -> [MdSockets] --------+
//   shm -> [MdRingFeed] -------+-> [MdConsumer -> TradeEngine -> Strategy -> OrderEntryClient] -> TCP / shm
//   compact:   runner "engine" = all of it (TradeEngineAgent on the caller's thread, run())
//   dedicated: runner "receiver" = MdSockets -> DatagramRing (ReceiverAgent on a
//              core::ConfiguredAgentRunner) | runner "engine" = the rest
//
// Transport ([trader] transport, docs/TRADER.md "Transport"): "tcp" reads
// both market data channels from their multicast groups (MdSockets) and
// trades over TCP; "shm" reads the incremental channel from the exchange's
// shared-memory ring (MdRingFeed, on the engine thread in both layouts: a
// ring read is no system call worth a thread hop), the snapshot channel
// still from its group, and trades over a shared-memory session. Both hand
// their packets to the same sink, so the consumer and everything after it
// run one code whichever transport fed them.
//
// Compact layout (one thread): a pass reads the sockets straight into the
// consumer (book events reach the engine and its strategy at once), then
// polls the gateway (execution reports; orders the strategy sent are
// already written), then runs the engine's timers. Every call between the
// parts is a direct, static one.
//
// Dedicated layout (two threads): a receiver thread only reads the sockets
// and copies each datagram, stamped with its receive TSC, into an SPSC ring
// (DatagramRing); the caller's thread runs the same pass with the ring in
// place of the sockets. The socket reads (system calls) leave the engine's
// core; the price is one cache-line hand-off per datagram. The consumer, the
// engine and the gateway stay on one thread: the engine reads the books the
// consumer writes, and the order manager needs each order's session seq as
// it is sent, so splitting them would mean copies of the book or of the
// session state for no gain.
//
// run() loops until its stop predicate says so (or the gateway gives up for
// good: a logon reject the config must fix), then winds down: cancels
// every open order, waits (bounded) for the answers, logs out. summary()
// prints what a user checks after a run: positions and PnL per instrument,
// orders, risk blocks, market data recovery, tick-to-trade percentiles.
//
// Telemetry (docs/TELEMETRY.md): given recorders (TraderTelemetry), run()
// binds the engine's on the calling thread and the receiver's on the
// receiver thread. Datagrams then reach the consumer through a sink that
// stamps each incremental packet -- tr_udp_read at its receive TSC (compact,
// and the shm ring in both layouts: the engine thread read it; dedicated
// multicast: the receiver thread stamps it as it reads; the key is the same
// for both transports, the packet's first seq), tr_engine_dequeue as the
// engine thread takes it, right before the
// consumer applies it -- and tells the trade engine the packet's md key for
// its tr_decision stamps. The engine and the gateway record the rest.
//
// Not thread-safe: run() and everything it calls happen on the caller's
// thread; status_figures(), status_line() and summary() read counters and are
// meant for the same thread (between passes) or after run() returned.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "book/book_replica.hpp"
#include "client/datagram_ring.hpp"
#include "client/md_consumer.hpp"
#include "client/md_feed.hpp"
#include "client/md_ring_feed.hpp"
#include "client/order_entry_client.hpp"
#include "core/agent_runner.hpp"
#include "core/counters_file.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "net/socket_address.hpp"
#include "telemetry/instrument.hpp"
#include "trading/trade_engine.hpp"
#include "trading/trader_config.hpp"
#include "trading/trader_gauges.hpp"
#include "trading/trader_part_configs.hpp"
#include "trading/trader_status.hpp"

namespace nanotick::trading {

// The recorders a trader's threads record into (both may be nullptr: no
// telemetry). `receiver` is used by the dedicated layout's receiver thread only.
struct TraderTelemetry {
  telemetry::Recorder* engine = nullptr;
  telemetry::Recorder* receiver = nullptr;
};

template <typename Strategy>
class Trader {
  // The order manager's sender: the gateway (a member declared below).
  struct GatewaySender {
    Trader* trader;
    client::SendResult send_new_order(ClientOrderId id, InstrumentId in, Side side, OrderType type, market::StpMode stp,
                                      Price price, Qty qty) noexcept {
      return trader->gateway_.send_new_order(id, in, side, type, stp, price, qty);
    }
    client::SendResult send_cancel(ClientOrderId id, InstrumentId in) noexcept {
      return trader->gateway_.send_cancel(id, in);
    }
    client::SendResult send_modify(ClientOrderId id, InstrumentId in, Price price, Qty qty) noexcept {
      return trader->gateway_.send_modify(id, in, price, qty);
    }
    void cork() noexcept { trader->gateway_.cork(); }
    void uncork() noexcept { trader->gateway_.uncork(); }
  };

 public:
  using Engine = TradeEngine<Strategy, GatewaySender>;

  // `counters_path`: the counters file (core/counters_file.hpp) `./nanotick
  // stat` and the demo read while the trader runs; empty keeps the counters
  // in memory only (summary() reads them either way).
  Trader(const TraderConfig& config, Strategy& strategy, TraderTelemetry telemetry = {},
         const std::string& counters_path = "")
      : config_(config),
        telemetry_(telemetry),
        counters_(
            core::CountersFile::Options{.path = counters_path, .process = ("trader-" + config.name).substr(0, 63)}),
        capacities_(book::capacities_of(config.instruments)),
        sender_{this},
        sockets_(feed_config(config)),
        md_ring_(config.transport == ipc::Transport::kShm ? std::make_unique<client::MdRingFeed>(ring_config(config))
                                                          : nullptr),
        consumer_(capacities_, consumer_config(config), engine_),
        engine_(engine_config(config), strategy, sender_, consumer_.books()),
        gateway_(config.session, engine_) {
    if (config.threads.mode == core::ThreadMode::kDedicated) {
      if (config.market_data.max_datagram_bytes > client::kMaxDatagramBytes)
        throw std::invalid_argument(config.source +
                                    ": threads.mode: dedicated needs market data datagrams of at most " +
                                    std::to_string(client::kMaxDatagramBytes) + " bytes (the exchange's md mtu is " +
                                    std::to_string(config.market_data.max_datagram_bytes) + "); use compact");
      ring_ = std::make_unique<client::DatagramRing>();
    }
    place_counters();
  }

  Trader(const Trader&) = delete;
  Trader& operator=(const Trader&) = delete;

  // One pass of the engine's loop; returns the work done (0: idle).
  int poll() noexcept {
    const TimeNs now = engine_.now_ns();
    // The shared-memory incremental channel first: it moves the books the strategy trades on.
    int work = md_ring_ ? md_ring_->poll(read_sink_, now) : 0;
    if (ring_) {
      work += ring_->pop_into(dequeue_sink_, now, kRingBatch);
    } else if (!md_ring_ || now >= next_socket_poll_ns_) {
      // With the ring, the sockets hold only the snapshot channel: a system
      // call per look, so they are looked at every kSnapshotSocketPeriodNs,
      // not every pass (their kernel buffer holds far more than that brings).
      next_socket_poll_ns_ = now + kSnapshotSocketPeriodNs;
      work += sockets_.poll(read_sink_, now);
    }
    consumer_.on_timer(now);
    work += gateway_.poll();
    work += engine_.on_timer(now);
    return work;
  }

  // Runs the "engine" runner on the calling thread (TradeEngineAgent on
  // core::run_on_this_thread, idling as `idle` says when a pass found
  // nothing to do) until stop() returns true (checked every pass) or the
  // session failed for good; then winds down. `status` is
  // called on this thread with: a std::string warning at start-up (before the
  // first pass), a SessionEnd when the session ends, and a TraderStatus every
  // [trader] status_interval_ms -- the last two between passes, so it must
  // neither format nor block (apps/trader.cpp logs them with NT_LOG_WITH,
  // dropping when the log ring is full).
  // Throws std::logic_error if a telemetry recorder is bound elsewhere already.
  template <typename Stop, typename Status>
  void run(const core::IdleConfig& idle, Stop&& stop, Status&& status) {
    std::optional<telemetry::ThreadBinding> binding;  // this thread is the engine's until run() returns
    if (telemetry_.engine != nullptr) binding.emplace(*telemetry_.engine);
    // Dedicated: the receiver agent on its runner ([threads.receiver]: cpu,
    // idle), stopped and joined on every exit, exceptions included.
    std::optional<ReceiverAgent> receiver_agent;  // before its runner: outlives it
    std::optional<core::ConfiguredAgentRunner<ReceiverAgent>> receiver;
    if (ring_) {
      receiver_agent.emplace(*this, ReceiverSink{client::DatagramRingSink{*ring_}});
      receiver.emplace(core::make_agent_runner(*receiver_agent, config_.threads.runner("receiver"), "md-receiver"));
      receiver->start();  // throws (naming the CPU) if the thread cannot be pinned where the config says
    }
    TradeEngineAgent<std::remove_reference_t<Status>> engine(*this, status);
    core::run_on_this_thread(engine, idle, [&] { return engine.finished() || stop(); });
    publish_gauges();
    counters_.mark_stopped();  // run() ends here without an exception: the values are final
  }

  // Cancels every open order, waits up to 2 s for the answers (a disconnected
  // session cannot get them: it waits only for the logout), logs out.
  void wind_down() {
    engine_.stop_trading();
    const TimeNs deadline = engine_.now_ns() + core::ns_from_sec(2u);
    // Cancels go out again every pass: one refused (output full) or
    // session-rejected (rate limit) is retried; those in flight are skipped.
    while (engine_.now_ns() < deadline && engine_.logged_on() && engine_.orders().open_orders() != 0) {
      engine_.cancel_all();
      poll_quietly();
    }
    gateway_.logout();
    while (engine_.now_ns() < deadline + core::kNsPerSec && gateway_.state() != client::SessionState::kStopped)
      poll_quietly();
  }

  // The figures of one status line as of now; the rate is over the time since
  // the previous call. Cheap (no text): the engine thread hands them to the
  // status callback every status interval.
  TraderStatus status_figures() {
    const auto& c = engine_.counters();
    const TimeNs now = engine_.now_ns();
    const std::uint64_t orders = c.orders_placed.get() + c.modifies_sent.get() + c.cancels_sent.get();
    const double secs = last_status_ns_ != 0 ? static_cast<double>(now - last_status_ns_) / 1e9 : 0.0;
    const double rate = secs > 0 ? static_cast<double>(orders - last_status_orders_) / secs : 0.0;
    last_status_ns_ = now;
    last_status_orders_ = orders;
    std::uint32_t live = 0;
    for (InstrumentId i = 0; i < engine_.instrument_count(); ++i) live += engine_.is_live(i) ? 1 : 0;
    const core::LatencyHistogram& t2t = engine_.tick_to_trade();
    return TraderStatus{config_.name,
                        engine_.logged_on(),
                        live,
                        engine_.instrument_count(),
                        rate,
                        c.fills.get(),
                        c.risk_blocks.get(),
                        engine_.positions().total_pnl(),
                        static_cast<std::int64_t>(engine_.positions().total_volume()),
                        static_cast<double>(t2t.percentile(50)) / 1e3,
                        static_cast<double>(t2t.percentile(99)) / 1e3,
                        t2t.count()};
  }

  // status_figures() as text (TraderStatus::kFormat).
  std::string status_line() {
    return status_figures().apply([](const auto&... v) { return fmt::format(TraderStatus::kFormat, v...); });
  }

  // "key value" lines: every counter of the counters file as of now (the
  // exchange prints its counters the same way) -- position lines only for
  // instruments with fills -- and the few totals summed over counters.
  // Between passes or after run() (the gauges are published by the
  // engine's thread; call publish_gauges() first when outside run()).
  std::string summary() const {
    std::vector<std::string> untraded;  // "position.<symbol>." of instruments without fills
    for (InstrumentId i = 0; i < engine_.instrument_count(); ++i) {
      const InstrumentPosition* p = engine_.positions().position(i);
      if (p == nullptr || p->fills == 0) untraded.push_back("position." + engine_.instrument(i).symbol + ".");
    }
    std::string out;
    counters_.for_each([&](const core::CountersFile::Entry& e) {
      for (const std::string& u : untraded)
        if (e.label.starts_with(u)) return;
      out += e.label;
      out += ' ';
      out += core::CountersFile::format_value(e);
      out += '\n';
    });
    auto line = [&out](const std::string& key, std::uint64_t value) {
      out += key + ' ' + std::to_string(value) + '\n';
    };
    line("orders.open_at_end", engine_.orders().open_orders());
    const client::MdConsumerCounters& mc = consumer_.counters();
    std::uint64_t invalid = 0;
    for (const auto& bad : mc.invalid) invalid += bad.get();
    line("md.packets.invalid", invalid);
    const client::MdFeedCounters& fc = sockets_.counters();
    line("md.datagrams_truncated", fc.truncated[0].get() + fc.truncated[1].get());
    line("md.recv_errors", fc.recv_errors[0].get() + fc.recv_errors[1].get());
    return out;
  }

  // The gauges (PnL, positions, books live, latency summaries...) into the
  // counters file as of now. The engine's thread does it during run(); call
  // it from that thread, or after run() returned.
  void publish_gauges() noexcept { gauges_.publish(engine_, consumer_); }
  const core::CountersFile& counters_file() const noexcept { return counters_; }

  // Every instrument's book, order by order in priority order, after the
  // line "next_seq N" (the first incremental seq the books do not reflect):
  //   instrument order_id side price qty   (side: B or S)
  // A test compares it with the exchange's book at the same seq.
  std::string book_dump() const {
    const auto& consumer = consumer_;
    std::string out = "next_seq " + std::to_string(consumer.next_seq()) + "\n";
    for (InstrumentId i = 0; i < engine_.instrument_count(); ++i) {
      out += "instrument " + std::to_string(i) + (consumer.is_live(i) ? " live\n" : " stale\n");
      consumer.books().for_each_order(i, [&](const book::RestingOrder& o) {
        char b[128];
        std::snprintf(b, sizeof b, "%u %llu %c %lld %lld\n", i, static_cast<unsigned long long>(o.order_id),
                      o.side == Side::kBuy ? 'B' : 'S', static_cast<long long>(o.price), static_cast<long long>(o.qty));
        out += b;
      });
    }
    return out;
  }

  // run() ended because the gateway stopped for good (bad credentials,
  // unknown client, refused heartbeat: the config is wrong).
  bool session_failed() const noexcept { return session_failed_; }

  const Engine& engine() const noexcept { return engine_; }
  const client::OrderEntryClient<Engine>& gateway() const noexcept { return gateway_; }
  const client::MdConsumer<Engine>& consumer() const noexcept { return consumer_; }

 private:
  static constexpr int kRingBatch = 64;  // datagrams taken from the ring per pass
  // Transport "shm", compact layout: how often the snapshot socket is read.
  static constexpr TimeNs kSnapshotSocketPeriodNs = 50 * core::kNsPerUs;

  // The engine thread's way from a datagram to the consumer (see the header
  // comment): stamps an incremental packet's hops when telemetry records
  // (tr_udp_read too when this thread read it: kStampsRead) and tells the
  // engine its md key.
  template <bool kStampsRead>
  struct ConsumerSink {
    Trader* trader;
    NT_ALWAYS_INLINE void on_datagram(proto::Channel channel, std::span<const std::uint8_t> bytes, TimeNs now,
                                      std::uint64_t rx_tsc) noexcept {
      const std::uint64_t key = NT_RECORDING() ? client::incremental_md_key(channel, bytes) : 0;
      if (key != 0) [[unlikely]] {
        if constexpr (kStampsRead) NT_HOP_AT(tr_udp_read, rx_tsc, key);
        NT_HOP(tr_engine_dequeue, key);
      }
      trader->engine_.set_md_key(key, rx_tsc);
      trader->consumer_.on_datagram(channel, bytes, now, rx_tsc);
      trader->engine_.set_md_key(0, 0);
    }
  };

  // The receiver thread's sink (dedicated layout): stamps tr_udp_read, then into the ring.
  struct ReceiverSink {
    client::DatagramRingSink ring;
    NT_ALWAYS_INLINE void on_datagram(proto::Channel channel, std::span<const std::uint8_t> bytes, TimeNs now,
                                      std::uint64_t rx_tsc) noexcept {
      if (NT_RECORDING()) {
        if (const std::uint64_t key = client::incremental_md_key(channel, bytes); key != 0)
          NT_HOP_AT(tr_udp_read, rx_tsc, key);
      }
      ring.on_datagram(channel, bytes, now, rx_tsc);
    }
  };

  // The receiver thread's agent (dedicated layout): reads the sockets into the
  // ring; binds the receiver's telemetry recorder on its own thread.
  struct ReceiverAgent {
    ReceiverAgent(Trader& t, ReceiverSink s) : trader(t), sink(s) {}
    Trader& trader;
    ReceiverSink sink;
    std::optional<telemetry::ThreadBinding> binding;
    std::string_view role_name() const noexcept { return "receiver"; }
    // Cannot fail: this recorder is bound nowhere else (one receiver runner per run()).
    void on_start() {
      if (trader.telemetry_.receiver != nullptr) binding.emplace(*trader.telemetry_.receiver);
    }
    int do_work() noexcept { return trader.sockets_.poll(sink, trader.engine_.now_ns()); }
    // A blocking idle sleeps on the sockets it reads.
    void wait_fds(core::WaitFds& out) { trader.sockets_.wait_fds(out); }
    void on_close() noexcept { binding.reset(); }
  };
  // Every owner's counters into the counters file, each thread's on cache
  // lines of their own (start-up, no thread runs yet).
  void place_counters() {
    core::CountersFile& f = counters_;
    engine_.place_counters(f);   // the engine's thread, like everything down to the gateway
    consumer_.place_counters(f);
    if (md_ring_) md_ring_->place_counters(f);
    gateway_.place_counters(f);
    gauges_.place(f, config_.instruments);
    f.begin_group();             // the receiver thread's, in the dedicated layout
    sockets_.place_counters(f);
    if (ring_) {
      ring_->place_counters(f);
      f.begin_group();  // the depth is sampled on the engine's thread
      f.place(ring_depth_, "md.ring_depth", core::CounterKind::kGauge);
    }
  }

  // The "engine" runner's agent: a pass, then the duties between passes
  // (gauges, the session's news, status lines); on close, the wind-down.
  template <typename Status>
  struct TradeEngineAgent {
    TradeEngineAgent(Trader& t, Status& s)
        : trader(t),
          status(s),
          interval(core::ns_from_ms(t.config_.status_interval_ms)),
          next_status(t.engine_.now_ns() + interval),
          next_gauges(t.engine_.now_ns()) {}
    Trader& trader;
    Status& status;
    const TimeNs interval;
    TimeNs next_status;
    TimeNs next_gauges;

    std::string_view role_name() const noexcept { return "engine"; }
    // A blocking idle sleeps on the order-entry connection and, in the
    // compact layout over multicast, on the market data sockets. Not on what
    // nothing can ring yet -- the receiver thread's ring (dedicated), the
    // shared-memory market data ring, the snapshot socket the ring layout
    // reads on a period only -- whose input waits for the idle's timeout.
    void wait_fds(core::WaitFds& out) {
      trader.gateway_.wait_fds(out);
      if (!trader.ring_ && !trader.md_ring_) trader.sockets_.wait_fds(out);
    }
    // A logon reject retrying cannot cure stopped the gateway: the run ends.
    bool finished() const noexcept { return trader.session_failed_; }
    int do_work() {
      Trader& t = trader;
      const int work = t.poll();
      if (t.engine_.now_ns() >= next_gauges) [[unlikely]] {
        t.publish_gauges();
        if (t.ring_) t.ring_depth_.set(t.ring_->size());
        next_gauges += TraderGauges::kPublishPeriodNs;
      }
      if (t.engine_.disconnect_events() != t.seen_disconnects_) {  // rare: told as it happens
        t.seen_disconnects_ = t.engine_.disconnect_events();
        status(SessionEnd::of(t.engine_.last_disconnect()));
      }
      if (t.gateway_.state() == client::SessionState::kStopped) t.session_failed_ = true;
      if (interval != 0 && t.engine_.now_ns() >= next_status) {
        status(t.status_figures());
        next_status += interval;
      }
      return work;
    }
    void on_close() { trader.wind_down(); }
  };

  void poll_quietly() noexcept {
    if (poll() == 0) BusySpinIdle::pause();
  }
  using BusySpinIdle = core::BusySpinIdle;

  static typename Engine::Config engine_config(const TraderConfig& c) {
    typename Engine::Config e;
    e.instruments = c.instruments;
    e.features = c.features;
    e.risk = c.risk;
    e.global_risk = c.global_risk;
    e.orders.max_orders = c.max_orders;
    e.client_id = c.session.client_id;
    for (const StrategyParams& p : c.strategy_params) e.reference_prices.push_back(p.reference_price);
    return e;
  }

  const TraderConfig& config_;
  const TraderTelemetry telemetry_;
  core::CountersFile counters_;  // before every owner of a counter placed in it: destroyed after them
  TraderGauges gauges_;
  core::Counter ring_depth_;     // dedicated layout: datagrams waiting in the ring (sampled with the gauges)
  std::vector<book::InstrumentCapacity> capacities_;
  GatewaySender sender_;
  client::MdSockets sockets_;
  std::unique_ptr<client::MdRingFeed> md_ring_;  // transport "shm": the incremental channel
  TimeNs next_socket_poll_ns_ = 0;       // transport "shm", compact: the next look at the snapshot socket
  // The consumer calls on_trading_state only when its handler has it: a
  // trade engine that lost it would send orders into halts unnoticed.
  static_assert(
      requires(Engine& e) { e.on_trading_state(InstrumentId{}, true); },
      "the trade engine must hear the venue's halts (client::MdConsumer's optional on_trading_state)");
  client::MdConsumer<Engine> consumer_;
  Engine engine_;
  client::OrderEntryClient<Engine> gateway_;
  std::unique_ptr<client::DatagramRing> ring_;  // dedicated layout only
  ConsumerSink<true> read_sink_{this};      // compact: the sockets feed the consumer on this thread
  ConsumerSink<false> dequeue_sink_{this};  // dedicated: the ring does (the receiver stamped the read)
  bool session_failed_ = false;
  std::uint64_t seen_disconnects_ = 0;
  TimeNs last_status_ns_ = 0;
  std::uint64_t last_status_orders_ = 0;
};

}  // namespace nanotick::trading
