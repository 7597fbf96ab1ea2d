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
//
// The pieces, one subject a file: order_entry_common.hpp (plan, context),
// order_entry_round_trips.hpp (1), order_entry_load.hpp (2); here the summary,
// the set-up and main().
#include "exchange/order_entry_load.hpp"

// The system and library headers come with the pieces (order_entry_common.hpp).

namespace {

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
