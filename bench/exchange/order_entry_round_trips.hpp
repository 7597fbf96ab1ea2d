// order_entry_bench (1): round trips, ours (the exchange over TCP and shared
// memory, each idle policy) beside raw TCP and shm ping-pong and the system
// calls alone, with the preemptions and the exchange's own ack latency.
// Part of order_entry_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "exchange/order_entry_common.hpp"

namespace {

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

}  // namespace
