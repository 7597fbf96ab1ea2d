// order_entry_bench (2): sustained order entry, the exchange beside the echo
// peer, at offered rates and at saturation.
// Part of order_entry_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "exchange/order_entry_round_trips.hpp"

namespace {

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

}  // namespace
