// Inter-process communication on this machine, process to process: every way
// two local processes can pass a message, beside our SpscRing in shared memory
// and the floor under all of them (issue 16, section 1).
//
// What is measured, for 8-byte and 64-byte messages, per transport:
//   one-way    the sender stamps the TSC into the message just before its
//              send call; the receiver stamps the TSC just after its receive
//              call returned; one-way = receipt - send stamp. Both processes
//              read the same invariant TSC (core::TscClock, calibrated once
//              before fork(), so both convert ticks alike). Taken on the ping
//              leg of the round trips below, so the channel holds one message
//              at a time: latency without queueing, and a blocking receiver is
//              asleep when the message comes, as it would be on a quiet link.
//   round trip the parent sends a ping, the child receives it and sends it
//              back (the pong carries the child's receipt stamp in place of the
//              parent's), the parent stamps the pong's receipt. The first tenth
//              of the round trips of each run warm up and are discarded.
//   throughput the child sends N messages flat out (each carries its sequence
//              number), the parent receives and checks them; rate = N / (the
//              parent's receipt of the last one - the child's stamp before
//              its first send). One message per send call and one per receive
//              call on every transport, so a stream socket is not allowed to
//              coalesce reads where a datagram socket could not.
//
// The same for every row: the two processes pinned to the same two CPUs
// (--cpus A,B: the parent on A, the child on B; a failed pin is printed),
// the same message, the same stamping points, a fresh channel set up before
// fork() for each run, and the same counts. What differs is only the channel:
//   floor            one cache line in a MAP_SHARED mapping, bounced: the
//                    parent writes an odd turn, the child answers with the even
//                    one and its receipt stamp on the same line. No transport
//                    can beat moving one line each way; every row's round-trip
//                    p50 is divided by this one's ("vs floor").
//   ring             core::SpscRing (one per direction, 4096 slots) placed with
//                    placement-new in a MAP_SHARED|MAP_ANONYMOUS mapping, busy-poll.
//   boost            boost::lockfree::spsc_queue (4096 slots) constructed in a
//                    boost::interprocess::managed_shared_memory segment the
//                    child opens by name (the set-up of the published study the
//                    issue cites), busy-poll. The segment is removed after the run.
//   ring-eventfd     the ring, and a receiver that sleeps when it finds the
//   ring-futex       ring empty, woken by an eventfd or a process-shared futex.
//                    A doorbell word per direction (awake / sleeping /
//                    signalled, the protocol of core::BlockingIdle) lets the
//                    sender skip the system call while the receiver is awake.
//                    core::BlockingIdle itself cannot be used: it waits on a
//                    FUTEX_PRIVATE futex, keyed by the address space, which a
//                    wake from another process never reaches. A sender that
//                    finds the ring full spins (only the receiver blocks).
//   pipe, fifo       two pipes; two FIFOs made with mkfifo in a temp dir and
//                    opened by name in each process (removed after the run).
//   unix-stream      AF_UNIX socketpair, SOCK_STREAM / SOCK_DGRAM.
//   unix-dgram
//   tcp, udp         127.0.0.1, TCP_NODELAY; UDP sockets connected to each
//                    other. UDP may drop when the sender outruns the receiver:
//                    its throughput counts what arrived and notes the loss.
//   mq               POSIX message queues (mq_open with a unique name, unlinked
//                    at once: the descriptors stay valid, nothing is left
//                    behind), depth 10 (the default fs.mqueue.msg_max).
//   *-nb             the same descriptors with O_NONBLOCK, receive (and send)
//                    retried in a busy loop: no sleep, no wake-up.
//   ring-threads     the ring between two threads of one process: the reference
//                    for what a process boundary adds (nothing, for shared memory).
// Blocking rows wait in the kernel; busy-poll rows burn their CPU while they
// wait (on a 2-core machine, the whole machine).
//
// What the numbers mean: the shared-memory rows cost about the floor (a
// cache-line transfer each way); every kernel transport adds at least two
// system calls per message and, when blocking, a wake-up of a sleeping
// process; the blocking rows' p50 is mostly that wake-up. Noise: each
// measurement runs --repeats times, transports round-robin within a repeat
// (the starting transport rotates), never two repeats of one transport back to
// back; the main table merges all samples, the spread table shows the median
// and min-max of the per-repeat figures.
//
// Robustness: every wait of the parent ends on a one-shot deadline timer
// (SIGALRM) or a child's death (SIGCHLD), both interrupting blocking calls and
// checked by every busy loop; a child that dies or hangs is an error of its
// row, killed and reaped, never a hang. Children die with the parent
// (PR_SET_PDEATHSIG). Descriptors, mappings, segments, FIFOs and queues are
// owned by RAII objects of the parent; SIGINT/SIGTERM end the run through the
// same path. Linked: librt (mq_*).
//
// The pieces, one subject a file, are bench/core/ipc_*.hpp (run_control, peer,
// ring_channels, fd_channels, runs); this file holds the rows, the options
// and the output.
#include "core/ipc_runs.hpp"

// The system and library headers come with the pieces (ipc_run_control.hpp).

namespace nanotick::bench {
namespace {

// ---- rows -------------------------------------------------------------------------

// One transport at one message size, across the repeats.
struct Row {
  core::LatencyHistogram one_way;  // every repeat's samples merged
  core::LatencyHistogram round_trip;
  std::vector<double> one_way_p50;  // per repeat
  std::vector<double> round_trip_p50;
  std::vector<double> round_trip_p99;
  std::vector<double> per_second;
  std::uint64_t negative = 0;
  std::uint64_t lost = 0;
  std::uint64_t offered = 0;  // messages sent in the throughput runs that lost some
  std::vector<std::string> errors;
  std::string unavailable;  // set once: the transport is not run again
};

void add_latency(Row& row, const LatencyRun& run) {
  row.one_way.merge(run.one_way);
  row.round_trip.merge(run.round_trip);
  row.one_way_p50.push_back(static_cast<double>(run.one_way.percentile(50)));
  row.round_trip_p50.push_back(static_cast<double>(run.round_trip.percentile(50)));
  row.round_trip_p99.push_back(static_cast<double>(run.round_trip.percentile(99)));
  row.negative += run.negative;
}

template <typename C, typename M>
void run_row(const Plan& plan, Row& row) {
  try {
    LatencyRun latency;
    if (std::string e = measure_round_trips<C, M>(plan, latency); !e.empty()) row.errors.push_back("round trip: " + e);
    else add_latency(row, latency);
    if (g_interrupted.load(std::memory_order_relaxed)) return;
    ThroughputRun tp;
    if (std::string e = measure_throughput<C, M>(plan, tp); !e.empty()) {
      row.errors.push_back("throughput: " + e);
    } else {
      row.per_second.push_back(tp.per_second);
      if (tp.lost > 0) {
        row.lost += tp.lost;
        row.offered += plan.messages;
      }
    }
  } catch (const Unavailable& e) {
    row.unavailable = e.what();
  } catch (const std::exception& e) {
    row.errors.push_back(e.what());
  }
}

void run_floor_row(const Plan& plan, Row& row) {
  try {
    LatencyRun latency;
    if (std::string e = measure_floor(plan, latency); !e.empty()) row.errors.push_back("round trip: " + e);
    else add_latency(row, latency);
  } catch (const std::exception& e) {
    row.errors.push_back(e.what());
  }
}

using RunRow = void (*)(const Plan&, Row&);

struct Transport {
  const char* key;    // for --only
  const char* label;  // the row's name
  bool has_throughput;
  RunRow run8;
  RunRow run64;
};

template <template <typename> class C>
Transport transport(const char* key, const char* label) {
  return {key, label, true, &run_row<C<Message<8>>, Message<8>>, &run_row<C<Message<64>>, Message<64>>};
}

template <typename M>
using RingBusy = RingChannel<M, Wake::busy_poll, false>;
template <typename M>
using RingEventFd = RingChannel<M, Wake::eventfd, false>;
template <typename M>
using RingFutex = RingChannel<M, Wake::futex, false>;
template <typename M>
using RingThreads = RingChannel<M, Wake::busy_poll, true>;
template <typename M>
using Pipe = FdChannel<M, FdKind::pipe, false>;
template <typename M>
using PipeNb = FdChannel<M, FdKind::pipe, true>;
template <typename M>
using Fifo = FdChannel<M, FdKind::fifo, false>;
template <typename M>
using FifoNb = FdChannel<M, FdKind::fifo, true>;
template <typename M>
using UnixStream = FdChannel<M, FdKind::unix_stream, false>;
template <typename M>
using UnixStreamNb = FdChannel<M, FdKind::unix_stream, true>;
template <typename M>
using UnixDgram = FdChannel<M, FdKind::unix_dgram, false>;
template <typename M>
using UnixDgramNb = FdChannel<M, FdKind::unix_dgram, true>;
template <typename M>
using Tcp = FdChannel<M, FdKind::tcp, false>;
template <typename M>
using TcpNb = FdChannel<M, FdKind::tcp, true>;
template <typename M>
using Udp = FdChannel<M, FdKind::udp, false>;
template <typename M>
using UdpNb = FdChannel<M, FdKind::udp, true>;
template <typename M>
using Mq = MqChannel<M, false>;
template <typename M>
using MqNb = MqChannel<M, true>;

const char* const kFloorKey = "floor";

// The floor first: the ratio column divides by it.
const std::vector<Transport>& transports() {
  static const std::vector<Transport> all = {
      {kFloorKey, "cache-line ping-pong (floor)", false, &run_floor_row, &run_floor_row},
      transport<RingBusy>("ring", "SpscRing in shm, busy-poll"),
      transport<BoostChannel>("boost", "boost spsc_queue in boost::interprocess shm, busy-poll"),
      transport<RingEventFd>("ring-eventfd", "SpscRing in shm + eventfd wake-up"),
      transport<RingFutex>("ring-futex", "SpscRing in shm + futex wake-up"),
      transport<Pipe>("pipe", "pipe"),
      transport<PipeNb>("pipe-nb", "pipe, O_NONBLOCK busy-poll"),
      transport<Fifo>("fifo", "FIFO"),
      transport<FifoNb>("fifo-nb", "FIFO, O_NONBLOCK busy-poll"),
      transport<UnixStream>("unix-stream", "UNIX stream socketpair"),
      transport<UnixStreamNb>("unix-stream-nb", "UNIX stream socketpair, O_NONBLOCK busy-poll"),
      transport<UnixDgram>("unix-dgram", "UNIX datagram socketpair"),
      transport<UnixDgramNb>("unix-dgram-nb", "UNIX datagram socketpair, O_NONBLOCK busy-poll"),
      transport<Tcp>("tcp", "TCP loopback (TCP_NODELAY)"),
      transport<TcpNb>("tcp-nb", "TCP loopback (TCP_NODELAY), O_NONBLOCK busy-poll"),
      transport<Udp>("udp", "UDP loopback"),
      transport<UdpNb>("udp-nb", "UDP loopback, O_NONBLOCK busy-poll"),
      transport<Mq>("mq", "POSIX message queue"),
      transport<MqNb>("mq-nb", "POSIX message queue, O_NONBLOCK busy-poll"),
      transport<RingThreads>("ring-threads", "SpscRing, thread to thread (reference)"),
  };
  return all;
}

// ---- options ------------------------------------------------------------------------

std::string transport_keys() {
  std::string keys;
  for (const Transport& t : transports()) {
    if (!keys.empty()) keys += ", ";
    keys += t.key;
  }
  return keys;
}

[[noreturn]] void usage_exit(const char* prog, const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "%s: %s\n", prog, problem.c_str());
  std::fprintf(problem.empty() ? stdout : stderr,
               "usage: %s [--quick] [--cpus A,B] [--messages N] [--repeats N] [--only NAME[,NAME...]]\n"
               "  --quick         smoke run: 1000 messages per run (unless --messages is given)\n"
               "  --cpus A,B      two different CPUs: the parent (pinger, receiver) on A, the child on B"
               " (default 0,1)\n"
               "  --messages N    round trips per latency run and messages per throughput run, 10..100000000"
               " (default 100000)\n"
               "  --repeats N     runs of every measurement, 1..100 (default 3)\n"
               "  --only LIST     transports to run, comma-separated (the floor row always runs):\n"
               "                  %s\n",
               prog, transport_keys().c_str());
  std::exit(problem.empty() ? 0 : 2);
}

std::optional<std::uint64_t> parse_count(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::optional<std::uint64_t> messages;
  const auto value = [&](int& i, const std::string& flag, const char* what) -> std::string_view {
    if (i + 1 >= argc) usage_exit(argv[0], flag + " needs " + what);
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--help" || a == "-h") {
      usage_exit(argv[0], "");
    } else if (a == "--cpus") {
      const std::string_view v = value(i, a, "two CPU numbers, e.g. --cpus 0,1");
      const std::size_t comma = v.find(',');
      const auto x = parse_count(v.substr(0, comma));
      const auto y = comma == std::string_view::npos ? std::nullopt : parse_count(v.substr(comma + 1));
      if (!x || !y || *x >= CPU_SETSIZE || *y >= CPU_SETSIZE)
        usage_exit(argv[0], "--cpus expects two CPU numbers A,B (0.." + std::to_string(CPU_SETSIZE - 1) + "), got '" +
                                std::string(v) + "'");
      if (*x == *y)
        usage_exit(argv[0], "--cpus needs two different CPUs (a busy-polling pair on one CPU measures the scheduler)");
      o.cpu_a = static_cast<int>(*x);
      o.cpu_b = static_cast<int>(*y);
    } else if (a == "--messages") {
      const std::string_view v = value(i, a, "a count");
      messages = parse_count(v);
      if (!messages || *messages < 10 || *messages > 100'000'000)
        usage_exit(argv[0], "--messages expects a whole number from 10 to 100000000, got '" + std::string(v) + "'");
    } else if (a == "--repeats") {
      const std::string_view v = value(i, a, "a count");
      const auto r = parse_count(v);
      if (!r || *r < 1 || *r > 100)
        usage_exit(argv[0], "--repeats expects a whole number from 1 to 100, got '" + std::string(v) + "'");
      o.repeats = static_cast<int>(*r);
    } else if (a == "--only") {
      const std::string_view v = value(i, a, "transport names");
      std::size_t from = 0;
      for (;;) {
        const std::size_t comma = v.find(',', from);
        const std::string name(v.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
        const auto& all = transports();
        if (std::none_of(all.begin(), all.end(), [&](const Transport& t) { return name == t.key; }))
          usage_exit(argv[0], "--only: unknown transport '" + name + "' (known: " + transport_keys() + ")");
        o.only.push_back(name);
        if (comma == std::string_view::npos) break;
        from = comma + 1;
      }
    } else {
      usage_exit(argv[0], "unknown argument '" + a + "'");
    }
  }
  o.messages = messages.value_or(o.quick ? 1'000 : 100'000);
  return o;
}

// ---- output -----------------------------------------------------------------------

std::string cell_ns(const core::LatencyHistogram& h, double pct) {
  if (h.count() == 0) return "-";
  return format_ns(static_cast<double>(pct >= 100 ? h.max() : h.percentile(pct)));
}

std::string spread_cell(const std::vector<double>& values, double scale, const char* fmt) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  char buf[96];
  std::snprintf(buf, sizeof buf, fmt, s.median / scale, s.min / scale, s.max / scale);
  return buf;
}

std::string ns_spread_cell(const std::vector<double>& values) {
  if (values.empty()) return "-";
  const Spread s = spread_of(values);
  return format_ns(s.median) + " (" + format_ns(s.min) + "-" + format_ns(s.max) + ")";
}

void print_tables(std::size_t bytes, const std::vector<const Transport*>& chosen, const std::vector<Row>& rows,
                  const Options& o) {
  double floor_p50 = 0;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]->key == std::string_view(kFloorKey) && rows[i].round_trip.count() > 0)
      floor_p50 = static_cast<double>(rows[i].round_trip.percentile(50));

  std::printf("### %zu-byte messages: one-way and round-trip latency (ns), throughput (M msg/s)\n\n", bytes);
  std::printf(
      "| transport | one-way p50 | p99 | p99.9 | max | round trip p50 | p99 | p99.9 | max | M msg/s | RTT p50 vs floor "
      "|\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) {
      std::printf("| %s | unavailable | | | | | | | | | |\n", chosen[i]->label);
      continue;
    }
    const std::string rate = !chosen[i]->has_throughput ? "n/a"
                             : r.per_second.empty()     ? "-"
                                                        : spread_cell(r.per_second, 1e6, "%.2f");
    const std::string ratio = floor_p50 > 0 && r.round_trip.count() > 0
                                  ? format_ratio(static_cast<double>(r.round_trip.percentile(50)) / floor_p50)
                                  : "-";
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", chosen[i]->label,
                cell_ns(r.one_way, 50).c_str(), cell_ns(r.one_way, 99).c_str(), cell_ns(r.one_way, 99.9).c_str(),
                cell_ns(r.one_way, 100).c_str(), cell_ns(r.round_trip, 50).c_str(), cell_ns(r.round_trip, 99).c_str(),
                cell_ns(r.round_trip, 99.9).c_str(), cell_ns(r.round_trip, 100).c_str(), rate.c_str(), ratio.c_str());
  }
  std::printf("\nSpread across %d repeats (median (min-max) of the per-repeat figures):\n\n", o.repeats);
  std::printf(
      "| transport | one-way p50 ns | round trip p50 ns | round trip p99 ns | M msg/s |\n"
      "|---|---:|---:|---:|---:|\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) continue;
    std::printf("| %s | %s | %s | %s | %s |\n", chosen[i]->label, ns_spread_cell(r.one_way_p50).c_str(),
                ns_spread_cell(r.round_trip_p50).c_str(), ns_spread_cell(r.round_trip_p99).c_str(),
                chosen[i]->has_throughput ? spread_cell(r.per_second, 1e6, "%.2f (%.2f-%.2f)").c_str() : "n/a");
  }
  std::printf("\n");
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const Row& r = rows[i];
    if (!r.unavailable.empty()) std::printf("- %s: not measured here: %s\n", chosen[i]->label, r.unavailable.c_str());
    for (const std::string& e : r.errors) std::printf("- %s: ERROR: %s\n", chosen[i]->label, e.c_str());
    if (r.lost > 0)
      std::printf(
          "- %s: throughput runs lost %llu of %llu messages (receiver buffer overflow); the rate counts "
          "what arrived\n",
          chosen[i]->label, static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.offered));
    if (r.negative > 0)
      std::printf("- %s: %llu samples had the receiver's TSC behind the sender's (counted as 0)\n", chosen[i]->label,
                  static_cast<unsigned long long>(r.negative));
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace
}  // namespace nanotick::bench

int main(int argc, char** argv) {
  using namespace nanotick::bench;
  namespace core = nanotick::core;
  const Options o = parse_options(argc, argv);
  print_machine_header("ipc_bench: inter-process communication, process to process");
  const core::TscClock& clock = core::TscClock::global();  // calibrated before any fork: both sides share it

  // The child inherits the parent's affinity and pins itself to B; try B from
  // a probe thread first so that a failure is said once, here.
  std::error_code pin_b;
  {
    const core::NamedThread probe("ipc-pin-probe", o.cpu_b, [] {});
    pin_b = probe.pin_error();
  }
  const std::error_code pin_a = core::pin_current_thread(o.cpu_a);
  const auto pin_text = [](const std::error_code& ec) { return ec ? "FAILED: " + ec.message() : std::string("ok"); };
  std::printf("- pinning: parent (pinger, throughput receiver) on CPU %d: %s; child (ponger, sender) on CPU %d: %s\n",
              o.cpu_a, pin_text(pin_a).c_str(), o.cpu_b, pin_text(pin_b).c_str());
  if (pin_a || pin_b) std::fprintf(stderr, "warning: pinning failed (see the output); numbers will be noisier\n");

  std::vector<const Transport*> chosen;
  for (const Transport& t : transports()) {
    const bool wanted = o.only.empty() || t.key == std::string_view(kFloorKey) ||
                        std::find(o.only.begin(), o.only.end(), t.key) != o.only.end();
    if (wanted) chosen.push_back(&t);
  }
  const Plan plan{o.cpu_a,
                  o.cpu_b,
                  o.messages,
                  std::max<std::uint64_t>(1, o.messages / 10),
                  o.messages,
                  // generous, so only a hang reaches it: 2 ms per round trip (two messages) and 20 s
                  // more. A busy-polling pair beside other busy threads on two cores (CI, a loaded
                  // laptop) gets the CPU in scheduler slices of milliseconds: the --quick smoke run
                  // took longer than the 5 s + 200 us/round trip it had before, and was called hung.
                  core::ns_from_sec(20U) + o.messages * 2 * core::kNsPerMs,
                  &clock,
                  {}};
  std::printf(
      "- per run: %llu round trips (+%llu warm-up) or %llu messages flat out; %d repeats, transports round-robin "
      "(starting one further each repeat)%s\n\n",
      static_cast<unsigned long long>(plan.round_trips), static_cast<unsigned long long>(plan.warmup),
      static_cast<unsigned long long>(plan.messages), o.repeats, o.quick ? "; --quick" : "");
  std::fflush(stdout);

  install_signal_handlers();
  int failures = 0;
  {
    const TempDir tmp;  // the FIFOs' directory, removed with anything left in it
    Plan run_plan = plan;
    run_plan.tmp = tmp.path();
    std::vector<Row> rows8(chosen.size());
    std::vector<Row> rows64(chosen.size());
    for (int r = 0; r < o.repeats && !g_interrupted.load(std::memory_order_relaxed); ++r) {
      for (std::size_t k = 0; k < chosen.size() && !g_interrupted.load(std::memory_order_relaxed); ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(r)) % chosen.size();
        if (!rows8[i].unavailable.empty()) continue;
        chosen[i]->run8(run_plan, rows8[i]);
        chosen[i]->run64(run_plan, rows64[i]);
      }
    }
    if (g_interrupted.load(std::memory_order_relaxed)) {
      std::fprintf(stderr, "ipc_bench: interrupted; everything it made is removed\n");
      return 130;
    }
    print_tables(8, chosen, rows8, o);
    print_tables(64, chosen, rows64, o);
    for (const auto* rows : {&rows8, &rows64})
      for (const Row& row : *rows) failures += static_cast<int>(row.errors.size());
  }
  if (failures > 0) {
    std::fprintf(stderr, "ipc_bench: %d run(s) failed (see the ERROR lines)\n", failures);
    return 1;
  }
  return 0;
}
