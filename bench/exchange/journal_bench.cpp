// The journal's append on the critical thread (issue 31, item 5): what one
// append costs the thread that sequences, at fixed offered rates and back to
// back, beside two plain appenders measured in the same run.
//
// Subjects, each appending the same 64-byte record (journal_format.hpp's
// JournalRecord: seq, CRC-32C, the engine Request) into a fresh directory of
// its own under $TMPDIR (else /tmp; the header names its file system: tmpfs
// would make every fdatasync free), removed after the cell:
//   ours        nanotick::exchange::JournalWriter (the exchange's defaults:
//               64 MiB segments), its background duty driven as the exchange
//               drives it: a JournalSyncer with the cell's policy and the
//               default batch window on a runner of its own, with the idle
//               strategy the exchange gives its aux thread by default.
//   write(2)    one write() of the record per append to an O_APPEND file.
//   naive mmap  memcpy of the record into a posix_fallocate'd file mapped
//               MAP_SHARED | MAP_POPULATE (what the journal did before issue
//               31), rolling to a new file of the same size inline when one is
//               full (no header, no rename: plainer than the journal was).
// The peers' background thread runs the same duty as JournalSyncer (policy
// batch: at most one fdatasync per window, only if something was appended
// since) on the same kind of runner, pinned to the same CPU.
//
// Timed: one stamp_begin()/stamp_end() pair (fenced rdtsc) around each append
// call on the appending thread, as the critical thread would time it; the
// pacing (a TSC deadline per record, rate r: record i is due at start + i/r)
// is outside the timed region, and a record that is late is appended at once
// (the schedule is kept, not restarted). Offered rates 10 k/s, 100 k/s,
// 1 M/s and back to back ("saturation", whose achieved rate is the
// throughput), for fsync policies batch (the exchange's default) and none.
// Policy every at 10 k/s only, the way the sequencer does it: one pass
// appends every record due (at most what a Sequencer pass takes with
// `every`: kGroupCommitBatch, or kBatch before it existed; group commit),
// then syncs (ours: flush() where it exists, then sync(); the peers:
// fdatasync); one sample per pass, timing appends + sync. Beside it, one fdatasync of a file with one
// freshly written 4 KiB page (in a preallocated file, the journal's case; at
// the end of a growing file; the same page rewritten), since the issue's
// `every` target is "p50 <= one fdatasync + 20 us".
//
// Per cell, the appending thread's minor/major page faults and voluntary /
// involuntary context switches (getrusage RUSAGE_THREAD around the measured
// appends, after a warm-up of 1/20 of them), the timed calls over 100 us (the
// issue's bound on the max), the records a subject refused at first
// (back-pressure: a full staging ring; timed until taken) and the
// hypervisor's steal time on the appending CPU (/proc/stat, 10 ms units): a
// shared 2-vCPU VM stalls threads for milliseconds now and then. Cells run interleaved: for each
// policy and rate, ours, write(2), naive mmap, with a rest before each. The
// appending thread is pinned on cpu_b, the background thread on cpu_a (when
// the process may use 2 CPUs); the JournalWriter's own threads, if it has
// any, are not pinned by this bench.
//
// Usage: journal_bench [--quick] [--cpus A,B] [--json PATH]
//   --json PATH  also writes every row (latencies in ns) to PATH as JSON.
//
// The pieces, one subject a file: journal_subjects.hpp (the subjects),
// journal_cells.hpp (one cell, one fdatasync); here the output and the run.
#include "exchange/journal_cells.hpp"

// The system and library headers come with the pieces (journal_subjects.hpp).

namespace {

// ---- output -------------------------------------------------------------------------

std::string rate_label(double rate) {
  if (rate <= 0) return "saturation";
  char buf[32];
  if (rate >= 1e6) std::snprintf(buf, sizeof buf, "%gM/s", rate / 1e6);
  else std::snprintf(buf, sizeof buf, "%gk/s", rate / 1e3);
  return buf;
}

std::string per_second(double v) {
  char buf[32];
  if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2f M/s", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f k/s", v / 1e3);
  return buf;
}

std::string pct(const nc::LatencyHistogram& h, double p) { return nb::format_ns(static_cast<double>(h.percentile(p))); }

double achieved(const CellResult& c) { return c.seconds > 0 ? static_cast<double>(c.records) / c.seconds : 0.0; }

void print_append_table(const std::string& title, const std::vector<CellResult>& cells) {
  std::printf("### %s (ns per timed call, appending thread)\n\n", title.c_str());
  std::printf(
      "| rate | appender | records | calls | achieved | mean | p50 | p99 | p99.9 | max | > 100 us | waits | minor flt "
      "| major flt | vol cs | invol cs | steal ms |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const CellResult& c : cells) {
    std::printf(
        "| %s | %s | %llu%s | %llu | %s | %s | %s | %s | %s | %s | %llu | %llu | %ld | %ld | %ld | %ld | %s |\n",
        rate_label(c.rate).c_str(), c.appender.c_str(), static_cast<unsigned long long>(c.records),
        c.capped ? " (time cap)" : "", static_cast<unsigned long long>(c.samples), per_second(achieved(c)).c_str(),
        nb::format_ns(c.ns.mean()).c_str(), pct(c.ns, 50).c_str(), pct(c.ns, 99).c_str(), pct(c.ns, 99.9).c_str(),
        nb::format_ns(static_cast<double>(c.ns.max())).c_str(), static_cast<unsigned long long>(c.slow),
        static_cast<unsigned long long>(c.waits), c.usage.minor_faults, c.usage.major_faults,
        c.usage.voluntary_switches, c.usage.involuntary_switches,
        c.steal_ms < 0 ? "n/a" : std::to_string(std::lround(c.steal_ms)).c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) continue;  // names here have no control characters
    out += ch;
  }
  return out + "\"";
}

std::string json_latency(const nc::LatencyHistogram& h) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "\"mean_ns\": %.1f, \"p50_ns\": %llu, \"p90_ns\": %llu, \"p99_ns\": %llu, \"p99_9_ns\": %llu, "
                "\"max_ns\": %llu",
                h.mean(), static_cast<unsigned long long>(h.percentile(50)),
                static_cast<unsigned long long>(h.percentile(90)), static_cast<unsigned long long>(h.percentile(99)),
                static_cast<unsigned long long>(h.percentile(99.9)), static_cast<unsigned long long>(h.max()));
  return buf;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string file_system(const std::filesystem::path& dir) {
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

struct Report {
  std::string started;
  std::string fs;
  std::string load_start;
  std::string load_end;
  nc::LatencyHistogram timer_floor;
  std::vector<CellResult> cells;
  std::vector<FsyncRow> fsync;
};

void write_json(const std::string& path, const Context& ctx, const Report& rep) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error(errno_text("--json: cannot write " + path, errno));
  std::fprintf(f, "{\n  \"bench\": \"journal_bench\",\n  \"started_utc\": %s,\n  \"quick\": %s,\n",
               json_string(rep.started).c_str(), ctx.args.quick ? "true" : "false");
  std::fprintf(f,
               "  \"cpu_append\": %d,\n  \"cpu_background\": %d,\n  \"background_idle\": %s,\n  \"file_system\": %s,\n"
               "  \"segment_bytes\": %llu,\n  \"batch_window_us\": %u,\n  \"load_average_start\": %s,\n"
               "  \"load_average_end\": %s,\n",
               ctx.cpu_append, ctx.cpu_background, json_string(nc::to_string(ctx.background_idle.kind)).c_str(),
               json_string(rep.fs).c_str(), static_cast<unsigned long long>(ctx.segment_bytes), ctx.window_us,
               json_string(rep.load_start).c_str(), json_string(rep.load_end).c_str());
  std::fprintf(f, "  \"rows\": [\n    {\"section\": \"timer_floor\", \"samples\": %llu, %s}",
               static_cast<unsigned long long>(rep.timer_floor.count()), json_latency(rep.timer_floor).c_str());
  for (const CellResult& c : rep.cells) {
    std::fprintf(
        f, ",\n    {\"section\": %s, \"appender\": %s, \"policy\": %s, \"rate\": %s, \"offered_per_s\": %.0f, ",
        json_string(c.sync_each_pass ? "append_and_sync_per_pass" : "append").c_str(), json_string(c.appender).c_str(),
        json_string(nx::to_string(c.policy)).c_str(), json_string(rate_label(c.rate)).c_str(), c.rate);
    std::fprintf(f,
                 "\"records\": %llu, \"samples\": %llu, \"over_100us\": %llu, \"waits\": %llu, \"capped\": %s, "
                 "\"seconds\": %.4f, \"achieved_per_s\": %.1f, %s, ",
                 static_cast<unsigned long long>(c.records), static_cast<unsigned long long>(c.samples),
                 static_cast<unsigned long long>(c.slow), static_cast<unsigned long long>(c.waits),
                 c.capped ? "true" : "false", c.seconds, achieved(c), json_latency(c.ns).c_str());
    std::fprintf(f,
                 "\"minor_faults\": %ld, \"major_faults\": %ld, \"voluntary_switches\": %ld, "
                 "\"involuntary_switches\": %ld, \"steal_ms\": %.0f}",
                 c.usage.minor_faults, c.usage.major_faults, c.usage.voluntary_switches, c.usage.involuntary_switches,
                 c.steal_ms);
  }
  for (const FsyncRow& r : rep.fsync)
    std::fprintf(f, ",\n    {\"section\": \"fdatasync\", \"file\": %s, \"samples\": %llu, %s}",
                 json_string(r.name).c_str(), static_cast<unsigned long long>(r.ns.count()),
                 json_latency(r.ns).c_str());
  std::fprintf(f, "\n  ]\n}\n");
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(errno_text("--json: cannot write " + path, errno));
}

// ---- the run ------------------------------------------------------------------------

struct Plan {
  std::uint64_t at_10k;
  std::uint64_t at_100k;
  std::uint64_t at_1m;
  std::uint64_t saturation;
  std::uint64_t every_at_10k;
  std::size_t fdatasync_reps;
  double cap_seconds;  // per cell
  int rest_ms;
};

// The three subjects at one policy and rate, in this order.
void run_rate(const Context& ctx, const Plan& plan, FsyncPolicy policy, double rate, std::uint64_t count,
              bool sync_each_pass, std::vector<CellResult>& out) {
  out.push_back(run_cell<OursSubject>(ctx, policy, rate, count, sync_each_pass, plan.cap_seconds));
  out.push_back(run_cell<WriteSubject>(ctx, policy, rate, count, sync_each_pass, plan.cap_seconds));
  out.push_back(run_cell<MmapSubject>(ctx, policy, rate, count, sync_each_pass, plan.cap_seconds));
}

// Takes `--json PATH` out of argv (the rest is nb::parse_args's).
std::string take_json_path(int& argc, char** argv) {
  std::string path;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--json") continue;
    if (i + 1 >= argc || argv[i + 1][0] == '\0') {
      std::fprintf(stderr, "journal_bench: --json needs a file path\n");
      std::exit(2);
    }
    path = argv[i + 1];
    for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
    argc -= 2;
    --i;
  }
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string json_path = take_json_path(argc, argv);
  const nb::Args args = nb::parse_args(argc, argv);
  const Plan plan = args.quick ? Plan{300, 2'000, 5'000, 5'000, 100, 10, 0.5, 10}
                               : Plan{50'000, 300'000, 2'000'000, 2'000'000, 30'000, 1'000, 15.0, 100};
  try {
    const nx::JournalConfig journal_defaults;
    Context ctx;
    ctx.args = args;
    if (nc::allowed_cpu_count() >= 2) {
      ctx.cpu_append = args.cpu_b;
      ctx.cpu_background = args.cpu_a;
    }
    // The exchange's aux thread (which runs the JournalSyncer) as configured
    // by default: its idle strategy, with the default parameters.
    ctx.background_idle.kind = nx::default_threads().runner("aux").idle;
    ctx.window_us = journal_defaults.batch_window_us;
    ctx.segment_bytes = journal_defaults.segment_bytes;
    ctx.rest_ms = plan.rest_ms;

    Report rep;
    rep.started = utc_now();
    rep.load_start = nb::load_average();
    nb::print_machine_header("journal_bench");
    {
      const nb::TempDir probe;
      rep.fs = file_system(probe.path());
      std::printf(
          "Appending thread on CPU %d, background thread (JournalSyncer / the peers' fdatasync duty, idle %s) on CPU "
          "%d (-1: not pinned). Journals under %s (%s), a fresh directory per cell. Segments of %llu MiB; batch "
          "window %u us. Load average at start: %s.%s\n\n",
          ctx.cpu_append, std::string(nc::to_string(ctx.background_idle.kind)).c_str(), ctx.cpu_background,
          probe.path().parent_path().string().c_str(), rep.fs.c_str(),
          static_cast<unsigned long long>(ctx.segment_bytes >> 20), ctx.window_us, rep.load_start.c_str(),
          args.quick ? " (--quick: tiny counts, a smoke run)" : "");
      std::fflush(stdout);
    }
    {
      nb::LatencyRow floor = nb::timer_floor(args.quick ? 1'000 : 100'000);
      rep.timer_floor = floor.ns;
      std::printf("Timer floor (an empty stamp pair, included in every sample): p50 %s ns, p99 %s ns.\n\n",
                  pct(floor.ns, 50).c_str(), pct(floor.ns, 99).c_str());
    }

    const std::array<std::pair<double, std::uint64_t>, 4> rates{
        {{10'000, plan.at_10k}, {100'000, plan.at_100k}, {1'000'000, plan.at_1m}, {0, plan.saturation}}};
    for (const FsyncPolicy policy : {FsyncPolicy::kBatch, FsyncPolicy::kNone}) {
      std::vector<CellResult> cells;
      for (const auto& [rate, count] : rates) run_rate(ctx, plan, policy, rate, count, false, cells);
      const std::string title =
          policy == FsyncPolicy::kBatch
              ? "Append, fsync batch (window " + std::to_string(ctx.window_us) + " us, the exchange's default)"
              : std::string("Append, fsync none (no fdatasync; the kernel writes back)");
      print_append_table(title, cells);
      rep.cells.insert(rep.cells.end(), cells.begin(), cells.end());
    }
    {
      std::vector<CellResult> cells;
      run_rate(ctx, plan, FsyncPolicy::kEvery, 10'000, plan.every_at_10k, true, cells);
      print_append_table("fsync every at 10k/s: one timed call = the records due (at most " + std::to_string(kMaxPass) +
                             ", group commit) appended, then one sync on the appending thread",
                         cells);
      rep.cells.insert(rep.cells.end(), cells.begin(), cells.end());
    }
    rep.fsync = time_fdatasync(ctx, plan.fdatasync_reps);
    std::printf("### One fdatasync after writing one 4 KiB page (ns, appending thread's CPU)\n\n");
    std::printf("| file | samples | mean | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (const FsyncRow& r : rep.fsync)
      std::printf("| %s | %llu | %s | %s | %s | %s | %s |\n", r.name.c_str(),
                  static_cast<unsigned long long>(r.ns.count()), nb::format_ns(r.ns.mean()).c_str(),
                  pct(r.ns, 50).c_str(), pct(r.ns, 90).c_str(), pct(r.ns, 99).c_str(),
                  nb::format_ns(static_cast<double>(r.ns.max())).c_str());
    std::printf("\n");
    rep.load_end = nb::load_average();
    std::printf("Load average at the end: %s.\n", rep.load_end.c_str());
    if (!json_path.empty()) {
      write_json(json_path, ctx, rep);
      std::printf("Rows written to %s.\n", json_path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "journal_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
