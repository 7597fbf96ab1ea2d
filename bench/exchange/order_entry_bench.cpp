// The exchange end to end (issue 4, "Performance"): the real nanotick-exchange
// process on loopback, driven by a busy-polling client, beside a raw TCP
// ping-pong of the same message sizes measured in the same run.
//
// Subject: build/<preset>/bin/nanotick-exchange (found from this binary's
// directory), one fresh process per measurement with a generated config
// (bench/exchange/exchange_process.hpp): compact thread mode, idle spin, the
// critical thread pinned on cpu_b, the background threads (auxiliary and
// snapshotter) on cpu_a with the client (the critical core stays the critical
// thread's alone), journal in a temp dir under $TMPDIR, its own multicast
// groups 239.255.91.x, one instrument, rate limits out of the way. Stopped
// with SIGTERM; its printed counters give the exchange-internal ack latency
// (gateway: order message read -> its first answer written) and are checked
// (every order message sequenced, no rejects). The client runs on a thread pinned on cpu_a; the
// main thread stays unpinned (a spawned process inherits its affinity).
//
// (1) Order round trip: NewOrder (40 bytes) -> its ExecutionReport Accepted
//     (96 bytes) read by the client, then CancelOrder (24 bytes) -> Cancelled
//     (96 bytes): orders never accumulate. One stamp_begin/stamp_end pair
//     around each (fenced rdtsc), client busy-polling recv() on a
//     non-blocking socket. Peers in the same repeat, on the same loopback,
//     with the same client code (bench/exchange/order_client.hpp): the raw
//     echo thread of bench/exchange/echo_peer.hpp pinned on cpu_b, busy-polling
//     recv() or epoll_wait(0). The exchange is measured with fsync batch
//     (the default), none and every (fewer samples: one fdatasync each).
// (1c) What the exchange's own share is made of: the system calls its
//     critical thread makes per order, each timed alone on cpu_b (the echo
//     peer's send() of a 96-byte answer; a market data multicast sendto();
//     epoll_wait(0); and the client's idle recv()).
// (2) Sustained order entry: one client thread drives N sessions (N = 1, 2,
//     4; a 2-CPU machine has one core for all clients), each keeping `window`
//     order messages unanswered (alternating NewOrder / CancelOrder of the
//     same order), writing whatever the window allows in one send(). Order
//     messages answered per second inside the measuring interval (after a
//     warm-up), and the latency each message saw from being queued by the
//     client to its answer being read (mostly queueing: Little's law), per
//     fsync policy; beside the raw echo peer with one session. Then the same
//     with NewOrders only (fsync batch): IOC buys far from any seller, each
//     answered Accepted then Cancelled (its residual), so that orders/s is
//     counted without CancelOrders in it.
// Both sections report the involuntary context switches of the client and
// of the exchange's critical thread (a busy-polling thread losing its CPU),
// and (2) the CPU the exchange's background threads used: on two cores these
// explain the tails.
//
// Each measurement is repeated (3 by default), peers interleaved within a
// repeat, 100 ms of rest before each; tables show all samples merged, the
// spread across repeats, and the targets against this run's medians.
//
// Usage: order_entry_bench [--quick] [--cpus A,B] [--md-sender publisher|aux]
//   --md-sender aux: every exchange (TCP and shm rows alike) also writes its
//   market data ring and sends the multicast datagrams from its auxiliary
//   thread (market_data.udp_sender = "aux"), not from the critical thread
//   between an answer and the next read.

#include <sys/resource.h>
#include <sys/statfs.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"
#include "exchange/echo_peer.hpp"
#include "exchange/exchange_process.hpp"
#include "exchange/order_client.hpp"
#include "net/epoll.hpp"
#include "net/socket_address.hpp"
#include "net/tcp.hpp"
#include "net/udp_multicast.hpp"
#include "proto/order_entry.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace nn = nanotick::net;
namespace np = nanotick::proto;

namespace {

using nb::Spread;
using nb::spread_of;

const char* const kRawBusy = "raw TCP ping-pong, busy-poll echo thread";
const char* const kRawEpoll = "raw TCP ping-pong, epoll_wait(0) echo thread";
const char* const kRawShm = "raw shm ping-pong, busy-poll echo thread";
const char* const kCriticalThread = "nt-critical";  // the exchange's compact critical thread
// Its background threads: snapshot publisher and journal syncs; the
// snapshotter's shadow engine following the journal.
const char* const kBackgroundThreads[] = {"nt-aux", "nt-snapshot"};

struct Plan {
  int repeats;
  std::size_t warmup_pairs;  // untimed NewOrder/CancelOrder pairs before each latency run
  std::size_t pairs;         // timed pairs per latency run (fsync batch, none and the peers)
  std::size_t every_warmup;  // the same with fsync every (each message waits for an fdatasync)
  std::size_t every_pairs;
  double load_warmup_s;
  double load_s;
  std::vector<int> sessions;
  std::size_t window;
  std::uint64_t segment_bytes;  // one journal segment holds a whole run: no roll-over inside it
  int settle_ms;                // rest before each measurement
};

struct Context {
  nb::Args args;
  Plan plan;
  std::filesystem::path exchange_binary;
  nb::ExchangeSetup base;  // fsync and clients set per run
};

// ---- running on the client's CPU ------------------------------------------------

// Runs f on a thread pinned on `cpu` and waits for it; rethrows what f threw.
// Starts with a short rest, so that what the previous measurement left the
// kernel to do (a deleted journal, an exiting process) is not measured.
template <typename F>
void on_cpu(const Context& ctx, int cpu, F&& f) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ctx.plan.settle_ms));
  std::exception_ptr error;
  {
    nc::NamedThread t("nt-bench-client", cpu, [&] {
      try {
        f();
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (t.pin_error())
      std::fprintf(stderr, "warning: could not pin the client thread to CPU %d: %s (numbers will be noisier)\n", cpu,
                   t.pin_error().message().c_str());
  }
  if (error) std::rethrow_exception(error);
}

// Times the scheduler preempted the calling thread so far.
std::uint64_t own_involuntary_switches() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return static_cast<std::uint64_t>(u.ru_nivcsw);
}

double seconds_between(std::uint64_t t0, std::uint64_t t1) {
  return static_cast<double>(nc::TscClock::global().to_ns(static_cast<std::int64_t>(t1 - t0))) / 1e9;
}

std::uint64_t ticks_in(double seconds) {
  return static_cast<std::uint64_t>(seconds * 1e9 * nc::TscClock::global().ticks_per_ns());
}

// ---- (1) round trips -----------------------------------------------------------

struct RoundTrips {
  nc::LatencyHistogram new_ns;
  nc::LatencyHistogram cancel_ns;
  std::uint64_t client_switches = 0;    // involuntary, during the timed pairs
  std::uint64_t critical_switches = 0;  // the exchange's critical thread, the same
  double seconds = 0;                   // of the timed pairs
};

// Busy-polls until the answer to `seq` arrives and checks it is the expected one.
void await_answer(nb::OrderClient& c, std::uint32_t seq, np::ExecType type, std::uint64_t client_order_id) {
  const std::uint64_t deadline = nc::rdtsc() + ticks_in(10.0);
  bool answered = false;
  for (std::uint32_t spins = 1; !answered; ++spins) {
    c.poll([&](const np::ExecutionReport& r) {
      if (r.ref_seq != seq || r.exec_type != type || r.client_order_id != client_order_id)
        nb::client_fail("round trip: expected exec type " + std::to_string(static_cast<int>(type)) + " for seq " +
                        std::to_string(seq) + ", got exec type " + std::to_string(static_cast<int>(r.exec_type)) +
                        " ref_seq " + std::to_string(r.ref_seq) + " reject reason " + std::to_string(r.reject_reason));
      answered = true;
    });
    if (!answered && spins % 4096 == 0 && nc::rdtsc() > deadline)
      nb::client_fail("round trip: no answer to seq " + std::to_string(seq) + " within 10 s");
  }
}

void flush_all(nb::OrderClient& c) {
  while (!c.output_empty()) c.flush();
}

std::uint64_t critical_switches(const nb::ExchangeProcess* exchange) {
  return exchange != nullptr ? exchange->thread_sched(kCriticalThread).involuntary_switches : 0;
}

// `warmup` untimed then `pairs` timed NewOrder -> Accepted, CancelOrder ->
// Cancelled; `exchange` (null for the echo peer) for its critical thread's
// context switches.
void round_trips(nb::OrderClient& c, std::size_t warmup, std::size_t pairs, const nb::ExchangeProcess* exchange,
                 RoundTrips& out) {
  const auto& clock = nc::TscClock::global();
  std::uint64_t switches_before = 0;
  std::uint64_t critical_before = 0;
  std::uint64_t timed_start = 0;
  for (std::size_t i = 0; i < warmup + pairs; ++i) {
    if (i == warmup) {
      critical_before = critical_switches(exchange);
      switches_before = own_involuntary_switches();
      timed_start = nc::rdtsc();
    }
    const std::uint64_t id = i + 1;
    const std::uint64_t t0 = nb::stamp_begin();
    const std::uint32_t new_seq = c.queue_new(id, nb::kRestingPrice);
    flush_all(c);
    await_answer(c, new_seq, np::ExecType::kAccepted, id);
    const std::uint64_t t1 = nb::stamp_end();
    const std::uint32_t cancel_seq = c.queue_cancel(id);
    flush_all(c);
    await_answer(c, cancel_seq, np::ExecType::kCancelled, id);
    const std::uint64_t t2 = nb::stamp_end();
    if (i >= warmup) {
      out.new_ns.record(nb::elapsed_ns(clock, t0, t1));
      out.cancel_ns.record(nb::elapsed_ns(clock, t1, t2));
    }
  }
  out.seconds = seconds_between(timed_start, nc::rdtsc());
  out.client_switches = own_involuntary_switches() - switches_before;
  out.critical_switches = critical_switches(exchange) - critical_before;
}

// Involuntary context switches per second of one measurement, per repeat.
struct Preemptions {
  std::vector<double> client;
  std::vector<double> critical;  // the exchange's critical thread (empty for the echo peer)
};

std::string format_rates(const std::vector<double>& v) {
  std::string out;
  for (const double x : v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.0f", out.empty() ? "" : ", ", x);
    out += buf;
  }
  return out.empty() ? "n/a" : out;
}

struct Series {
  explicit Series(std::string n) : name(std::move(n)) {}
  std::string name;
  nc::LatencyHistogram merged;
  std::vector<double> p50s;
  std::vector<double> p99s;
  std::vector<double> p999s;
  void add(const nc::LatencyHistogram& h) {
    merged.merge(h);
    p50s.push_back(static_cast<double>(h.percentile(50)));
    p99s.push_back(static_cast<double>(h.percentile(99)));
    p999s.push_back(static_cast<double>(h.percentile(99.9)));
  }
};

// One of the exchange's own ack latency histograms, as printed in its
// counters: "ack_latency_ns" (read -> answer written, the send() included) or
// "ack_ready_latency_ns" (read -> answer handed to send()).
struct InternalAck {
  std::string name;
  std::string counter;
  std::vector<double> p50s;
  std::vector<double> p99s;
  std::vector<double> p999s;
  std::vector<double> maxes;
  void add(const nb::ExchangeProcess::Counters& c) {
    p50s.push_back(static_cast<double>(c.at(counter + ".p50")));
    p99s.push_back(static_cast<double>(c.at(counter + ".p99")));
    p999s.push_back(static_cast<double>(c.at(counter + ".p99.9")));
    maxes.push_back(static_cast<double>(c.at(counter + ".max")));
  }
};

std::uint64_t counter(const nb::ExchangeProcess::Counters& c, const std::string& name) {
  const auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

// Every message we sent was sequenced, and nothing was rejected or dropped.
// The exchange's own requests are the mass cancels it queued as our sessions
// ended (cancel_on_disconnect), counted apart.
void check_counters(const nb::ExchangeProcess::Counters& c, std::uint64_t order_messages, const char* what) {
  std::uint64_t rejects = 0;
  for (const auto& [name, value] : c)
    if (name.rfind("session_reject.", 0) == 0 || name.rfind("logon_reject.", 0) == 0 ||
        name.rfind("engine_reject.", 0) == 0)
      rejects += value;
  const std::uint64_t sequenced = counter(c, "requests_sequenced");
  const std::uint64_t own = counter(c, "disconnect_mass_cancels");
  if (sequenced != order_messages + own || rejects != 0 || counter(c, "reports_dropped_client_gone") != 0)
    throw std::runtime_error(
        std::string(what) + ": the exchange sequenced " + std::to_string(sequenced) + " requests (we sent " +
        std::to_string(order_messages) + ", it queued " + std::to_string(own) + " mass cancels, which cancelled " +
        std::to_string(counter(c, "disconnect_cancels")) + " orders), with " + std::to_string(rejects) + " rejects");
}

std::vector<nb::BenchClient> make_clients(int n) {
  std::vector<nb::BenchClient> clients(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < clients.size(); ++i) {
    clients[i].id = static_cast<std::uint32_t>(i + 1);
    clients[i].key = nanotick::access::generate_api_key();
  }
  return clients;
}

struct LatencyResults {
  Series raw_busy{kRawBusy};
  Series raw_epoll{kRawEpoll};
  Series raw_busy_cancel{"raw TCP ping-pong, busy-poll echo thread: 24 -> 96 bytes"};
  // (1c) single system calls on the exchange's CPU
  Series echo_send{"send() of one 96-byte answer (echo peer, client busy-polling)"};
  Series udp_send{"sendto() of one 80-byte multicast datagram, TTL 0, no receiver"};
  Series epoll_idle{"epoll_wait(0), one idle socket"};
  Series recv_idle{"recv() on an idle non-blocking socket (EAGAIN)"};
  std::vector<Series> exchange_new;     // per fsync policy (batch, none, every)
  std::vector<Series> exchange_cancel;  // CancelOrder -> Cancelled, per policy
  std::vector<InternalAck> internal;    // per policy
  std::vector<InternalAck> internal_ready;  // per policy: up to send() called
  Preemptions raw_preemptions;          // busy-poll echo runs
  std::vector<Preemptions> preemptions;  // per policy
  // Over shared-memory sessions (fsync batch): the same client code, the echo
  // peer and the exchange serving one shm session instead of a TCP connection.
  Series raw_shm{kRawShm};
  Series exchange_shm{"nanotick-exchange over shm, fsync batch: NewOrder -> Accepted"};
  Series exchange_shm_cancel{"nanotick-exchange over shm, fsync batch: CancelOrder -> Cancelled"};
  InternalAck internal_shm{
      "exchange-internal ack over shm (its counters), fsync batch", "ack_latency_ns", {}, {}, {}, {}};
  Preemptions shm_preemptions;  // the exchange over shm
};

const std::vector<std::string> kLatencyPolicies = {"batch", "none", "every"};

void measure_echo(const Context& ctx, nb::EchoWait wait, std::size_t pairs, Series& new_series, Series* cancel_series,
                  Series* send_series, Preemptions* preemptions, bool shm = false) {
  nb::EchoPeer peer(ctx.args.cpu_b, wait, shm);
  RoundTrips rt;
  on_cpu(ctx, ctx.args.cpu_a, [&] {
    nb::OrderClient client(peer.address(), 1, "echo-peer-ignores-the-key", peer.shm_path());
    round_trips(client, ctx.plan.warmup_pairs, pairs, nullptr, rt);
  });
  peer.stop();
  new_series.add(rt.new_ns);
  if (cancel_series != nullptr) cancel_series->add(rt.cancel_ns);
  if (send_series != nullptr) send_series->add(peer.send_ns());
  if (preemptions != nullptr) preemptions->client.push_back(static_cast<double>(rt.client_switches) / rt.seconds);
}

// The other system calls the exchange's critical thread makes per order (one
// epoll_wait per pass, one market data sendto per request when idle; the
// client's busy-poll loop is recv() returning EAGAIN), each timed alone on
// the exchange's CPU with no exchange running.
void measure_syscalls(const Context& ctx, LatencyResults& res) {
  const auto& clock = nc::TscClock::global();
  nc::LatencyHistogram udp, epoll, recv;
  on_cpu(ctx, ctx.args.cpu_b, [&] {
    const nn::SocketAddress group = nn::parse_multicast_group("239.255.91." + std::to_string(ctx.base.md_group) + ":" +
                                                              std::to_string(ctx.base.md_port));
    nn::UdpMulticastSender sender(nn::MulticastSenderConfig{nn::parse_ipv4("127.0.0.1"), group, 0});
    const std::array<std::uint8_t, 80> packet{};
    nn::TcpListener listener(nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed));
    nn::TcpStream idle = nn::tcp_connect(listener.local_address(), std::chrono::seconds(5));
    nn::EpollPoller poller(4);
    if (poller.add(idle.fd(), nn::Interest::kRead, 0)) throw std::runtime_error("epoll_ctl failed");
    std::array<std::uint8_t, 256> buffer{};
    for (std::size_t i = 0; i < ctx.plan.warmup_pairs + ctx.plan.pairs; ++i) {
      const bool timed = i >= ctx.plan.warmup_pairs;
      std::uint64_t t0 = nb::stamp_begin();
      if (!sender.send(packet))
        throw std::runtime_error("multicast send failed: " + std::to_string(sender.last_error()));
      std::uint64_t t1 = nb::stamp_end();
      if (timed) udp.record(nb::elapsed_ns(clock, t0, t1));
      t0 = nb::stamp_begin();
      const bool ready = !poller.wait(0).empty();
      t1 = nb::stamp_end();
      if (timed) epoll.record(nb::elapsed_ns(clock, t0, t1));
      t0 = nb::stamp_begin();
      const nn::IoResult r = idle.read_some(buffer);
      t1 = nb::stamp_end();
      if (timed) recv.record(nb::elapsed_ns(clock, t0, t1));
      if (ready || r.status != nn::IoStatus::kWouldBlock) throw std::runtime_error("the idle socket was not idle");
    }
  });
  res.udp_send.add(udp);
  res.epoll_idle.add(epoll);
  res.recv_idle.add(recv);
}

// The exchange over one shared-memory session, fsync batch.
void measure_exchange_round_trips_shm(const Context& ctx, LatencyResults& res) {
  nb::ExchangeSetup setup = ctx.base;
  setup.fsync = "batch";
  setup.clients = 1;
  setup.shm = true;
  const std::vector<nb::BenchClient> clients = make_clients(1);
  nb::ExchangeProcess exchange(ctx.exchange_binary, setup, clients);
  RoundTrips rt;
  on_cpu(ctx, ctx.args.cpu_a, [&] {
    nb::OrderClient client(exchange.order_entry(), clients[0].id, clients[0].key, exchange.shm_path());
    round_trips(client, ctx.plan.warmup_pairs, ctx.plan.pairs, &exchange, rt);
  });
  const auto counters = exchange.stop();
  check_counters(counters, 2 * (ctx.plan.warmup_pairs + ctx.plan.pairs), "round trips over shm");
  if (counter(counters, "shm.connections_accepted") != 1)
    throw std::runtime_error("round trips over shm: the exchange accepted no shared-memory session");
  res.exchange_shm.add(rt.new_ns);
  res.exchange_shm_cancel.add(rt.cancel_ns);
  res.internal_shm.add(counters);
  res.shm_preemptions.client.push_back(static_cast<double>(rt.client_switches) / rt.seconds);
  res.shm_preemptions.critical.push_back(static_cast<double>(rt.critical_switches) / rt.seconds);
}

void measure_exchange_round_trips(const Context& ctx, std::size_t policy, LatencyResults& res) {
  nb::ExchangeSetup setup = ctx.base;
  setup.fsync = kLatencyPolicies[policy];
  setup.clients = 1;
  const std::vector<nb::BenchClient> clients = make_clients(1);
  const bool every = setup.fsync == "every";
  const std::size_t warmup = every ? ctx.plan.every_warmup : ctx.plan.warmup_pairs;
  const std::size_t pairs = every ? ctx.plan.every_pairs : ctx.plan.pairs;
  nb::ExchangeProcess exchange(ctx.exchange_binary, setup, clients);
  RoundTrips rt;
  on_cpu(ctx, ctx.args.cpu_a, [&] {
    nb::OrderClient client(exchange.order_entry(), clients[0].id, clients[0].key);
    round_trips(client, warmup, pairs, &exchange, rt);
  });
  const auto counters = exchange.stop();
  check_counters(counters, 2 * (warmup + pairs), "round trips");
  res.exchange_new[policy].add(rt.new_ns);
  res.exchange_cancel[policy].add(rt.cancel_ns);
  res.internal[policy].add(counters);
  res.internal_ready[policy].add(counters);
  res.preemptions[policy].client.push_back(static_cast<double>(rt.client_switches) / rt.seconds);
  res.preemptions[policy].critical.push_back(static_cast<double>(rt.critical_switches) / rt.seconds);
}

void print_spread_row(const std::string& name, const std::vector<double>& p50s, const std::vector<double>& p99s,
                      const std::vector<double>& p999s) {
  const Spread a = spread_of(p50s);
  const Spread b = spread_of(p99s);
  const Spread c = spread_of(p999s);
  std::printf("| %s | %s | %s-%s | %s | %s-%s | %s | %s-%s |\n", name.c_str(), nb::format_ns(a.median).c_str(),
              nb::format_ns(a.min).c_str(), nb::format_ns(a.max).c_str(), nb::format_ns(b.median).c_str(),
              nb::format_ns(b.min).c_str(), nb::format_ns(b.max).c_str(), nb::format_ns(c.median).c_str(),
              nb::format_ns(c.min).c_str(), nb::format_ns(c.max).c_str());
}

LatencyResults run_latency_section(const Context& ctx) {
  LatencyResults res;
  for (const std::string& p : kLatencyPolicies) {
    res.exchange_new.emplace_back("nanotick-exchange, fsync " + p + ": NewOrder -> Accepted");
    res.exchange_cancel.emplace_back("nanotick-exchange, fsync " + p + ": CancelOrder -> Cancelled");
    res.internal.push_back(
        InternalAck{"exchange-internal ack (its counters), fsync " + p, "ack_latency_ns", {}, {}, {}, {}});
    res.internal_ready.push_back(InternalAck{
        "exchange-internal, read -> answer handed to send(), fsync " + p, "ack_ready_latency_ns", {}, {}, {}, {}});
    res.preemptions.emplace_back();
  }
  for (int rep = 0; rep < ctx.plan.repeats; ++rep) {
    std::fprintf(stderr, "order_entry_bench: round trips, repeat %d/%d\n", rep + 1, ctx.plan.repeats);
    measure_echo(ctx, nb::EchoWait::kBusyRead, ctx.plan.pairs, res.raw_busy, &res.raw_busy_cancel, &res.echo_send,
                 &res.raw_preemptions);
    measure_echo(ctx, nb::EchoWait::kEpoll, ctx.plan.pairs, res.raw_epoll, nullptr, nullptr, nullptr);
    for (std::size_t p = 0; p < kLatencyPolicies.size(); ++p) measure_exchange_round_trips(ctx, p, res);
    measure_echo(ctx, nb::EchoWait::kBusyRead, ctx.plan.pairs, res.raw_shm, nullptr, nullptr, nullptr, true);
    measure_exchange_round_trips_shm(ctx, res);
    measure_syscalls(ctx, res);
  }

  std::vector<nb::LatencyRow> rows;
  rows.push_back({res.raw_busy.name, res.raw_busy.merged});
  rows.push_back({res.raw_epoll.name, res.raw_epoll.merged});
  for (const Series& s : res.exchange_new) rows.push_back({s.name, s.merged});
  nb::print_latency_table("(1) Order round trip on loopback: 40 bytes out, 96 bytes back, all repeats merged", rows,
                          kRawBusy);
  std::vector<nb::LatencyRow> cancel_rows;
  cancel_rows.push_back({res.raw_busy_cancel.name, res.raw_busy_cancel.merged});
  for (const Series& s : res.exchange_cancel) cancel_rows.push_back({s.name, s.merged});
  nb::print_latency_table("(1b) Cancel round trip: 24 bytes out, 96 bytes back, all repeats merged", cancel_rows,
                          res.raw_busy_cancel.name);

  std::vector<nb::LatencyRow> shm_rows;
  shm_rows.push_back({res.raw_shm.name, res.raw_shm.merged});
  shm_rows.push_back({res.raw_busy.name, res.raw_busy.merged});
  shm_rows.push_back({res.exchange_shm.name, res.exchange_shm.merged});
  shm_rows.push_back({res.exchange_new[0].name, res.exchange_new[0].merged});
  shm_rows.push_back({res.exchange_shm_cancel.name, res.exchange_shm_cancel.merged});
  nb::print_latency_table(
      "(1s) The same round trip over a shared-memory session (issue 16): the exchange and the echo peer "
      "serving one shm session, beside their TCP rows of the same repeats, all repeats merged",
      shm_rows, kRawShm);

  std::vector<nb::LatencyRow> syscall_rows;
  for (const Series* sr : {&res.echo_send, &res.udp_send, &res.epoll_idle, &res.recv_idle})
    syscall_rows.push_back({sr->name, sr->merged});
  nb::print_latency_table(
      "(1c) What the exchange's own share is made of: one system call, timed alone on CPU b "
      "(includes the ~25 ns timer)",
      syscall_rows, res.echo_send.name);

  std::printf("Spread across %d repeats of %zu round trips (fsync every: %zu) (ns):\n\n", ctx.plan.repeats,
              ctx.plan.pairs, ctx.plan.every_pairs);
  std::printf(
      "| impl | p50 median | p50 min-max | p99 median | p99 min-max | p99.9 median | p99.9 min-max |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  print_spread_row(res.raw_busy.name, res.raw_busy.p50s, res.raw_busy.p99s, res.raw_busy.p999s);
  print_spread_row(res.raw_epoll.name, res.raw_epoll.p50s, res.raw_epoll.p99s, res.raw_epoll.p999s);
  for (const Series& s : res.exchange_new) print_spread_row(s.name, s.p50s, s.p99s, s.p999s);
  for (const InternalAck& a : res.internal) print_spread_row(a.name, a.p50s, a.p99s, a.p999s);
  for (const InternalAck& a : res.internal_ready) print_spread_row(a.name, a.p50s, a.p99s, a.p999s);
  print_spread_row(res.raw_shm.name, res.raw_shm.p50s, res.raw_shm.p99s, res.raw_shm.p999s);
  print_spread_row(res.exchange_shm.name, res.exchange_shm.p50s, res.exchange_shm.p99s, res.exchange_shm.p999s);
  print_spread_row(res.internal_shm.name, res.internal_shm.p50s, res.internal_shm.p99s, res.internal_shm.p999s);
  std::printf("\n");
  std::printf(
      "The exchange-internal rows are the gateway's own histograms (order message read -> first answer "
      "written, the send() included; and read -> that answer handed to send()), over every order message "
      "of the run (NewOrder and CancelOrder, warm-up included); max per repeat of the first:");
  for (const InternalAck& a : res.internal) {
    std::printf(" %s", a.name.substr(a.name.rfind(' ') + 1).c_str());
    for (const double m : a.maxes) std::printf(" %s", nb::format_ns(m).c_str());
    std::printf(";");
  }
  std::printf(
      "\n\nInvoluntary context switches per second (the scheduler taking a busy-polling thread's CPU), per "
      "repeat: client thread with the busy-poll echo peer: %s",
      format_rates(res.raw_preemptions.client).c_str());
  for (std::size_t p = 0; p < kLatencyPolicies.size(); ++p)
    std::printf("; with the exchange, fsync %s: client %s, exchange critical thread %s", kLatencyPolicies[p].c_str(),
                format_rates(res.preemptions[p].client).c_str(), format_rates(res.preemptions[p].critical).c_str());
  std::printf("; with the exchange over shm, fsync batch: client %s, exchange critical thread %s",
              format_rates(res.shm_preemptions.client).c_str(), format_rates(res.shm_preemptions.critical).c_str());
  std::printf(".\n\n");
  std::fflush(stdout);
  return res;
}

// ---- (2) sustained order entry -------------------------------------------------

struct LoadRun {
  double per_second = 0;
  std::uint64_t messages = 0;  // order messages sent (and answered) over the whole run
  nc::LatencyHistogram ack_ns;
  std::uint64_t client_switches = 0;  // involuntary, over the whole run
  double seconds = 0;                 // the whole run: warm-up, measuring, drain
};

// What the sustained load sends.
enum class LoadMix {
  kNewCancel,  // message k (from 0): NewOrder of order k/2 + 1 when k is even, its CancelOrder when odd
  kIocOnly,    // message k: IOC NewOrder of order k + 1, answered Accepted then Cancelled
};

// One session's window; answers come back in order.
struct LoadSession {
  static constexpr std::size_t kStampSlots = 1024;  // > any window
  nb::OrderClient* client;
  std::uint32_t first_seq;
  std::int64_t price;
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;  // messages fully answered
  bool accepted = false;       // kIocOnly: message `answered` has had its Accepted
  std::array<std::uint64_t, kStampSlots> queued_tsc{};
};

LoadRun run_load(const std::vector<nb::OrderClient*>& clients, const Plan& plan, LoadMix mix = LoadMix::kNewCancel) {
  const auto& clock = nc::TscClock::global();
  std::vector<LoadSession> sessions;
  for (std::size_t i = 0; i < clients.size(); ++i)
    sessions.push_back(
        LoadSession{clients[i], clients[i]->next_seq(), nb::kRestingPrice + static_cast<std::int64_t>(i)});
  LoadRun run;
  std::uint64_t counted = 0;
  const std::uint64_t switches_before = own_involuntary_switches();
  const std::uint64_t t_start = nc::rdtsc();
  const std::uint64_t t_begin = t_start + ticks_in(plan.load_warmup_s);
  const std::uint64_t t_end = t_begin + ticks_in(plan.load_s);
  const std::uint64_t drain_deadline = t_end + ticks_in(10.0);
  bool sending = true;
  for (;;) {
    const std::uint64_t now = nc::rdtsc();
    if (now >= t_end) sending = false;
    bool drained = !sending;
    for (LoadSession& s : sessions) {
      nb::OrderClient& c = *s.client;
      while (sending && s.sent - s.answered < plan.window && c.output_room() >= sizeof(np::NewOrder)) {
        if (mix == LoadMix::kIocOnly) (void)c.queue_new(s.sent + 1, s.price, true);
        else if (s.sent % 2 == 0) (void)c.queue_new(s.sent / 2 + 1, s.price);
        else (void)c.queue_cancel(s.sent / 2 + 1);
        s.queued_tsc[s.sent % LoadSession::kStampSlots] = now;
        ++s.sent;
      }
      c.flush();
      c.poll([&](const np::ExecutionReport& r) {
        const std::uint64_t k = s.answered;
        const bool ioc = mix == LoadMix::kIocOnly;
        const np::ExecType want = (ioc ? !s.accepted : k % 2 == 0) ? np::ExecType::kAccepted : np::ExecType::kCancelled;
        const std::uint64_t id = ioc ? k + 1 : k / 2 + 1;
        if (r.ref_seq != s.first_seq + k || r.exec_type != want || r.client_order_id != id)
          nb::client_fail("load: answer out of order or unexpected: ref_seq " + std::to_string(r.ref_seq) +
                          " exec type " + std::to_string(static_cast<int>(r.exec_type)) + " (expected ref_seq " +
                          std::to_string(s.first_seq + k) + ")");
        const std::uint64_t t = c.last_read_tsc();
        const bool first_answer = !ioc || !s.accepted;  // the acknowledgement
        if (first_answer && t >= t_begin && t < t_end) {
          ++counted;
          run.ack_ns.record(static_cast<std::uint64_t>(
              clock.to_ns(static_cast<std::int64_t>(t - s.queued_tsc[k % LoadSession::kStampSlots]))));
        }
        if (ioc && !s.accepted) {
          s.accepted = true;  // its Cancelled comes next
          return;
        }
        s.accepted = false;
        ++s.answered;
      });
      if (s.answered != s.sent || !c.output_empty()) drained = false;
    }
    if (drained) break;
    if (!sending && now > drain_deadline) nb::client_fail("load: unanswered order messages 10 s after the end");
  }
  for (const LoadSession& s : sessions) run.messages += s.sent;
  run.per_second = static_cast<double>(counted) / plan.load_s;
  run.client_switches = own_involuntary_switches() - switches_before;
  run.seconds = seconds_between(t_start, nc::rdtsc());
  return run;
}

struct LoadCase {
  LoadCase(std::string policy, int n, LoadMix m = LoadMix::kNewCancel, bool over_shm = false)
      : fsync(std::move(policy)), sessions(n), mix(m), shm(over_shm) {}
  std::string fsync;  // empty: the raw echo peer
  int sessions;
  LoadMix mix;
  bool shm;  // over shared-memory sessions instead of TCP
  std::vector<double> rates;
  nc::LatencyHistogram ack_ns;
  InternalAck internal{"", "ack_latency_ns", {}, {}, {}, {}};
  std::vector<double> records_per_sync;
  std::uint64_t segments_max = 0;
  Preemptions preemptions;
  std::vector<double> aux_cpu_share;  // the exchange's background threads: CPU seconds per second
};

void measure_load_echo(const Context& ctx, LoadCase& lc) {
  nb::EchoPeer peer(ctx.args.cpu_b, nb::EchoWait::kBusyRead, lc.shm);
  LoadRun run;
  on_cpu(ctx, ctx.args.cpu_a, [&] {
    nb::OrderClient client(peer.address(), 1, "echo-peer-ignores-the-key", peer.shm_path());
    run = run_load({&client}, ctx.plan);
  });
  lc.rates.push_back(run.per_second);
  lc.ack_ns.merge(run.ack_ns);
  lc.preemptions.client.push_back(static_cast<double>(run.client_switches) / run.seconds);
}

double background_cpu_seconds(const nb::ExchangeProcess& exchange) {
  double seconds = 0;
  for (const char* name : kBackgroundThreads) seconds += exchange.thread_sched(name).cpu_seconds;
  return seconds;
}

void measure_load_exchange(const Context& ctx, LoadCase& lc) {
  nb::ExchangeSetup setup = ctx.base;
  setup.fsync = lc.fsync;
  setup.clients = lc.sessions;
  setup.shm = lc.shm;
  const std::vector<nb::BenchClient> clients = make_clients(lc.sessions);
  nb::ExchangeProcess exchange(ctx.exchange_binary, setup, clients);
  LoadRun run;
  std::uint64_t critical = 0;
  double aux_cpu = 0;
  on_cpu(ctx, ctx.args.cpu_a, [&] {
    std::vector<std::unique_ptr<nb::OrderClient>> owned;
    std::vector<nb::OrderClient*> raw;
    for (const nb::BenchClient& c : clients) {
      owned.push_back(std::make_unique<nb::OrderClient>(exchange.order_entry(), c.id, c.key, exchange.shm_path()));
      raw.push_back(owned.back().get());
    }
    critical = exchange.thread_sched(kCriticalThread).involuntary_switches;
    aux_cpu = background_cpu_seconds(exchange);
    run = run_load(raw, ctx.plan, lc.mix);
    critical = exchange.thread_sched(kCriticalThread).involuntary_switches - critical;
    aux_cpu = background_cpu_seconds(exchange) - aux_cpu;
  });
  const auto counters = exchange.stop();
  lc.preemptions.client.push_back(static_cast<double>(run.client_switches) / run.seconds);
  lc.preemptions.critical.push_back(static_cast<double>(critical) / run.seconds);
  lc.aux_cpu_share.push_back(aux_cpu / run.seconds);
  check_counters(counters, run.messages, "load");
  lc.rates.push_back(run.per_second);
  lc.ack_ns.merge(run.ack_ns);
  lc.internal.add(counters);
  const double syncs = static_cast<double>(std::max<std::uint64_t>(1, counter(counters, "journal_fdatasyncs")));
  lc.records_per_sync.push_back(static_cast<double>(counter(counters, "journal_records")) / syncs);
  lc.segments_max = std::max(lc.segments_max, counter(counters, "journal_segments_created"));
}

std::string us(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", ns / 1e3);
  return buf;
}

std::vector<LoadCase> run_load_section(const Context& ctx) {
  std::vector<LoadCase> cases;
  cases.emplace_back("", 1);
  for (const char* policy : {"batch", "none", "every"})
    for (const int n : ctx.plan.sessions) cases.emplace_back(policy, n);
  for (const int n : ctx.plan.sessions) cases.emplace_back("batch", n, LoadMix::kIocOnly);
  // Over shared memory (issue 16), fsync batch, beside the TCP rows of the same repeats.
  cases.emplace_back("", 1, LoadMix::kNewCancel, true);
  for (const int n : ctx.plan.sessions) cases.emplace_back("batch", n, LoadMix::kNewCancel, true);
  for (const int n : ctx.plan.sessions) cases.emplace_back("batch", n, LoadMix::kIocOnly, true);
  for (int rep = 0; rep < ctx.plan.repeats; ++rep) {
    std::fprintf(stderr, "order_entry_bench: sustained load, repeat %d/%d\n", rep + 1, ctx.plan.repeats);
    for (LoadCase& lc : cases) {
      if (lc.fsync.empty()) measure_load_echo(ctx, lc);
      else measure_load_exchange(ctx, lc);
    }
  }
  // Each row against the raw echo peer of its own transport.
  double raw_tcp = 0, raw_shm = 0;
  for (const LoadCase& lc : cases)
    if (lc.fsync.empty()) (lc.shm ? raw_shm : raw_tcp) = spread_of(lc.rates).median;
  std::printf(
      "### (2) Sustained order entry: order messages answered per second, window %zu per session, "
      "%.1f s measured after %.1f s warm-up, %d repeats\n\n",
      ctx.plan.window, ctx.plan.load_s, ctx.plan.load_warmup_s, ctx.plan.repeats);
  std::printf(
      "| subject | sessions | median M msgs/s | min | max | vs raw echo (same transport) | client-seen ack p50 / p99 "
      "(us) | "
      "exchange-internal ack p50 / p99 (us, medians) | journal records per fdatasync | involuntary "
      "switches/s, client / exchange critical (medians) | exchange background threads' CPU |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const LoadCase& lc : cases) {
    const Spread s = spread_of(lc.rates);
    const std::string over = lc.shm ? " over shm" : "";
    const std::string name =
        lc.fsync.empty()              ? std::string(lc.shm ? "raw shm" : "raw TCP") + " echo peer (busy-poll thread)"
        : lc.mix == LoadMix::kIocOnly ? "nanotick-exchange" + over + ", fsync " + lc.fsync + ", IOC NewOrders only"
                                      : "nanotick-exchange" + over + ", fsync " + lc.fsync;
    const std::string internal =
        lc.fsync.empty() ? "n/a"
                         : us(spread_of(lc.internal.p50s).median) + " / " + us(spread_of(lc.internal.p99s).median);
    char per_sync[32] = "n/a";
    if (!lc.fsync.empty()) std::snprintf(per_sync, sizeof per_sync, "%.0f", spread_of(lc.records_per_sync).median);
    char switches[64];
    std::snprintf(
        switches, sizeof switches, "%.0f / %s", spread_of(lc.preemptions.client).median,
        lc.fsync.empty() ? "n/a" : std::to_string(std::lround(spread_of(lc.preemptions.critical).median)).c_str());
    char aux[16] = "n/a";
    if (!lc.fsync.empty()) std::snprintf(aux, sizeof aux, "%.0f%%", 100 * spread_of(lc.aux_cpu_share).median);
    std::printf("| %s | %d | %.3f | %.3f | %.3f | %s | %s / %s | %s | %s%s | %s | %s |\n", name.c_str(), lc.sessions,
                s.median / 1e6, s.min / 1e6, s.max / 1e6,
                nb::format_ratio(s.median / (lc.shm ? raw_shm : raw_tcp)).c_str(),
                us(static_cast<double>(lc.ack_ns.percentile(50))).c_str(),
                us(static_cast<double>(lc.ack_ns.percentile(99))).c_str(), internal.c_str(), per_sync,
                lc.segments_max > 1 ? " (journal segment rolled over)" : "", switches, aux);
  }
  std::printf(
      "\nHalf of the order messages are NewOrder, half CancelOrder; each gets exactly one answer "
      "(Accepted / Cancelled), except in the IOC rows: every message is a NewOrder (IOC, nothing to trade "
      "with), answered Accepted then Cancelled, and counted once, at its Accepted. One client thread drives "
      "every session. Journal records per fdatasync: "
      "for fsync every this is the group-commit size (one sync per sequencer pass of up to 64 requests); "
      "for batch one sync per 1 ms window; for none only the shutdown sync.\n\n");
  std::fflush(stdout);
  return cases;
}

// ---- summary --------------------------------------------------------------------

const char* yes_no(bool met) { return met ? "yes" : "**no**"; }

void print_targets(const LatencyResults& lat, const std::vector<LoadCase>& load) {
  // Per repeat: the exchange's p50 over the peer's p50 measured just before it.
  const auto ratio_to = [&lat](const Series& peer) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < peer.p50s.size(); ++i) ratios.push_back(lat.exchange_new[0].p50s[i] / peer.p50s[i]);
    return spread_of(ratios);
  };
  const Spread ratio = ratio_to(lat.raw_busy);
  const Spread ratio_epoll = ratio_to(lat.raw_epoll);
  const Spread p50 = spread_of(lat.internal[0].p50s);
  const Spread p99 = spread_of(lat.internal[0].p99s);
  const Spread ready_p50 = spread_of(lat.internal_ready[0].p50s);
  const Spread ready_p99 = spread_of(lat.internal_ready[0].p99s);
  double best_batch = 0;
  int best_sessions = 0;
  double best_ioc = 0;
  int best_ioc_sessions = 0;
  for (const LoadCase& lc : load) {
    const double m = spread_of(lc.rates).median;
    if (lc.fsync == "batch" && lc.mix == LoadMix::kNewCancel && m > best_batch) {
      best_batch = m;
      best_sessions = lc.sessions;
    }
    if (lc.fsync == "batch" && lc.mix == LoadMix::kIocOnly && m > best_ioc) {
      best_ioc = m;
      best_ioc_sessions = lc.sessions;
    }
  }
  std::printf(
      "### Against the issue's targets (fsync batch, compact mode; medians over repeats, range in "
      "brackets)\n\n");
  std::printf("| target | measured | met? |\n|---|---:|---|\n");
  std::printf("| round trip p50 <= 1.3x raw TCP ping-pong p50 | %s [%s-%s] | %s |\n",
              nb::format_ratio(ratio.median).c_str(), nb::format_ratio(ratio.min).c_str(),
              nb::format_ratio(ratio.max).c_str(), yes_no(ratio.median <= 1.3));
  std::printf("| the same against the epoll_wait(0) echo (how the gateway waits) | %s [%s-%s] | %s |\n",
              nb::format_ratio(ratio_epoll.median).c_str(), nb::format_ratio(ratio_epoll.min).c_str(),
              nb::format_ratio(ratio_epoll.max).c_str(), yes_no(ratio_epoll.median <= 1.3));
  const auto ns_row = [](const char* target, const Spread& v, double limit_ns) {
    std::printf("| %s | %s ns [%s-%s] | %s |\n", target, nb::format_ns(v.median).c_str(), nb::format_ns(v.min).c_str(),
                nb::format_ns(v.max).c_str(), yes_no(v.median <= limit_ns));
  };
  ns_row("exchange-internal ack p50 <= 2 us, read -> answer handed to send()", ready_p50, 2000);
  ns_row("exchange-internal ack p99 <= 10 us, read -> answer handed to send()", ready_p99, 10000);
  ns_row("the same p50, read -> send() returned (the kernel's loopback send included)", p50, 2000);
  ns_row("the same p99, read -> send() returned", p99, 10000);
  std::printf(
      "| >= 500,000 order messages/s acknowledged, fsync batch (NewOrder + CancelOrder) | %.0f/s (%d session%s) | %s "
      "|\n",
      best_batch, best_sessions, best_sessions == 1 ? "" : "s", yes_no(best_batch >= 500'000));
  std::printf(
      "| >= 500,000 NewOrders/s acknowledged, fsync batch (IOC NewOrders only) | %.0f/s (%d session%s) | %s |\n\n",
      best_ioc, best_ioc_sessions, best_ioc_sessions == 1 ? "" : "s", yes_no(best_ioc >= 500'000));
}

// ---- set-up ------------------------------------------------------------------------

std::string journal_fs(const std::filesystem::path& dir) {
  struct statfs st {};
  if (::statfs(dir.c_str(), &st) != 0) return "unknown file system";
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0x01021994UL: return "tmpfs (fdatasync costs nothing: not a real journal measurement)";
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794C7630UL: return "overlayfs";
    default: return "file system magic " + std::to_string(static_cast<unsigned long>(st.f_type));
  }
}

}  // namespace

// Takes `--md-sender publisher|aux` out of argv (the rest is nb::parse_args's).
std::string take_md_sender(int& argc, char** argv) {
  std::string sender = "publisher";
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--md-sender") continue;
    if (i + 1 >= argc || (std::string(argv[i + 1]) != "publisher" && std::string(argv[i + 1]) != "aux")) {
      std::fprintf(stderr, "order_entry_bench: --md-sender expects publisher or aux\n");
      std::exit(2);
    }
    sender = argv[i + 1];
    for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
    argc -= 2;
    break;
  }
  return sender;
}

int main(int argc, char** argv) {
  const std::string md_sender = take_md_sender(argc, argv);
  const nb::Args args = nb::parse_args(argc, argv);
  const Plan plan = args.quick ? Plan{1, 200, 1'000, 20, 100, 0.05, 0.2, {1, 2}, 64, 32ull << 20, 10}
                               : Plan{3, 10'000, 100'000, 500, 3'000, 0.3, 2.0, {1, 2, 4}, 64, 256ull << 20, 100};
  try {
    Context ctx{args, plan, nb::find_exchange_binary(), nb::ExchangeSetup{}};
    ctx.base.critical_cpu = args.cpu_b;
    // The background threads (snapshot publisher and batch fdatasyncs; the
    // snapshotter's shadow engine following the journal at the full order
    // rate) share the client's core: the critical core stays the critical
    // thread's alone.
    ctx.base.aux_cpu = args.cpu_a;
    ctx.base.segment_bytes = plan.segment_bytes;
    ctx.base.md_sender = md_sender;
    // Multicast groups and ports of our own (outside the ephemeral range), so
    // a concurrent test run never shares them; one exchange runs at a time.
    const int pid = static_cast<int>(::getpid());
    ctx.base.md_group = 1 + pid % 200;
    ctx.base.md_port = static_cast<std::uint16_t>(61000 + (pid % 1000) * 2);

    nb::print_machine_header("order_entry_bench");
    const nb::TempDir probe;
    std::printf(
        "Exchange: %s, compact mode, idle spin, critical thread pinned on CPU %d; client thread pinned on "
        "CPU %d; echo peer thread pinned on CPU %d. Market data datagrams sent by %s. Journal under %s (%s). "
        "Load average at start: %s.%s\n\n",
        ctx.exchange_binary.string().c_str(), args.cpu_b, args.cpu_a, args.cpu_b,
        md_sender == "aux"
            ? "the auxiliary thread from the market data ring (--md-sender aux), for TCP and shm rows alike"
            : "the critical thread (--md-sender publisher)",
        probe.path().parent_path().string().c_str(), journal_fs(probe.path()).c_str(), nb::load_average().c_str(),
        args.quick ? " (--quick: tiny counts, a smoke run)" : "");
    std::fflush(stdout);
    const LatencyResults lat = run_latency_section(ctx);
    const std::vector<LoadCase> load = run_load_section(ctx);
    print_targets(lat, load);
    std::printf("Load average at the end: %s.\n", nb::load_average().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "order_entry_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
