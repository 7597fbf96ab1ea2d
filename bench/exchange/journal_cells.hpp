// journal_bench: one cell (a subject appending at one offered rate, timed
// per append, with its threads' CPU and steal), and one fdatasync timed alone.
// Part of journal_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include "exchange/journal_subjects.hpp"

namespace {

// ---- one cell -----------------------------------------------------------------------

struct Context {
  nb::Args args;
  int cpu_append = -1;      // the critical thread's CPU
  int cpu_background = -1;  // the syncer's
  nc::IdleConfig background_idle;
  std::uint32_t window_us = 1000;
  std::uint64_t segment_bytes = 64ull << 20;
  int rest_ms = 100;
};

struct ThreadUsage {
  long minor_faults = 0;
  long major_faults = 0;
  long voluntary_switches = 0;
  long involuntary_switches = 0;
};

ThreadUsage thread_usage() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return {u.ru_minflt, u.ru_majflt, u.ru_nvcsw, u.ru_nivcsw};
}

// The hypervisor's steal time of `cpu` so far (/proc/stat, in ms; its unit
// is USER_HZ, 10 ms here: coarse, a hint of where a long stall came from);
// -1 if unknown (cpu -1: not pinned).
double steal_ms(int cpu) {
  if (cpu < 0) return -1;
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return -1;
  char line[512];
  const std::string want = "cpu" + std::to_string(cpu) + " ";
  double ms = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, want.c_str(), want.size()) != 0) continue;
    unsigned long long v[8] = {};
    if (std::sscanf(line + want.size(), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                    &v[5], &v[6], &v[7]) == 8)
      ms = static_cast<double>(v[7]) * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    break;
  }
  std::fclose(f);
  return ms;
}

ThreadUsage operator-(const ThreadUsage& a, const ThreadUsage& b) {
  return {a.minor_faults - b.minor_faults, a.major_faults - b.major_faults, a.voluntary_switches - b.voluntary_switches,
          a.involuntary_switches - b.involuntary_switches};
}

struct CellResult {
  std::string appender;
  FsyncPolicy policy = FsyncPolicy::kBatch;
  double rate = 0;  // offered per second; 0 = back to back
  bool sync_each_pass = false;
  nc::LatencyHistogram ns;
  std::uint64_t records = 0;  // appended in the measured part
  std::uint64_t samples = 0;  // timed calls (passes, when syncing each pass)
  std::uint64_t waits = 0;    // records refused at first (back-pressure), timed until taken
  std::uint64_t slow = 0;     // timed calls over kSlowNs
  double steal_ms = -1;       // the appending CPU's steal time (hypervisor) over the measured part; -1 unknown
  double seconds = 0;
  ThreadUsage usage;
  bool capped = false;  // the time cap ended it before all records were appended
};

struct DriveOutcome {
  bool ok = true;
  std::uint64_t records = 0;
  std::uint64_t passes = 0;
  std::uint64_t waits = 0;  // records the subject refused at first (back-pressure), then took
  std::uint64_t slow = 0;   // timed calls over kSlowNs
  std::uint64_t ticks = 0;
};

// Appends `count` records to `subject` at `rate` per second (0: back to back),
// one append per timed call, or with `sync_each_pass` every record due (at
// most kMaxPass) then a sync per timed call. Stops early (not an error) once
// `cap_seconds` have gone by. Samples into `h` if given. Appending thread.
template <typename S>
DriveOutcome drive(S& subject, std::uint64_t& seq, std::uint64_t count, double rate, bool sync_each_pass,
                   double cap_seconds, nc::LatencyHistogram* h) {
  const nc::TscClock& clock = nc::TscClock::global();
  const double period = rate > 0 ? clock.ticks_from_ns(1e9 / rate) : 0.0;
  const auto cap_ticks = static_cast<std::uint64_t>(clock.ticks_from_ns(cap_seconds * 1e9));
  // Requests as a gateway would hand them over: NewOrder / CancelOrder pairs.
  const ne::Request new_order = ne::make_new(1, 7, 0, ne::Side::kBuy, ne::OrderType::kLimit, 100'000, 10);
  const ne::Request cancel = ne::make_cancel(1, 7, 0);
  std::vector<ne::Request> batch(kMaxPass);  // written (faulted in) here, before anything is timed
  DriveOutcome out;
  const std::uint64_t start = clock.now();
  std::uint64_t end = start;
  while (out.records < count) {
    std::uint64_t n = sync_each_pass ? std::min<std::uint64_t>(count - out.records, kMaxPass) : 1;
    if (period > 0) {
      std::uint64_t due;  // records whose time has come, in all
      for (;;) {
        due = static_cast<std::uint64_t>(static_cast<double>(clock.now() - start) / period) + 1;
        if (due > out.records) break;
        nc::BusySpinIdle::pause();
      }
      if (sync_each_pass) n = std::min(n, due - out.records);
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t s = seq + i;
      batch[i] = (s & 1) != 0 ? cancel : new_order;
      batch[i].client_order_id = s / 2 + 1;
      batch[i].event_id = s;
    }
    const std::uint64_t t0 = nb::stamp_begin();
    bool ok = true;
    for (std::uint64_t i = 0; i < n && ok; ++i) {
      if (subject.append(batch[i])) [[likely]]
        continue;
      ++out.waits;  // back-pressure: the record waits (and is timed) until it is taken
      while (!subject.append(batch[i])) {
        if (subject.failed()) {
          ok = false;
          break;
        }
        nc::BusySpinIdle::pause();
      }
    }
    if (sync_each_pass && ok) ok = subject.sync();
    const std::uint64_t t1 = nb::stamp_end();
    if (!ok) [[unlikely]] {
      out.ok = false;
      break;
    }
    if (h != nullptr) {
      const std::uint64_t ns = nb::elapsed_ns(clock, t0, t1);
      h->record(ns);
      if (ns > kSlowNs) [[unlikely]]
        ++out.slow;
    }
    seq += n;
    out.records += n;
    ++out.passes;
    end = t1;
    if (t1 - start > cap_ticks) break;
  }
  out.ticks = end - start;
  return out;
}

void rest(const Context& ctx) { std::this_thread::sleep_for(std::chrono::milliseconds(ctx.rest_ms)); }

template <typename S>
CellResult run_cell(const Context& ctx, FsyncPolicy policy, double rate, std::uint64_t count, bool sync_each_pass,
                    double cap_seconds) {
  rest(ctx);
  const nb::TempDir dir;  // fresh, on the real disk; removed with everything in it
  CellResult r;
  r.appender = S::kName;
  r.policy = policy;
  r.rate = rate;
  r.sync_each_pass = sync_each_pass;
  S subject(dir.path(), policy, ctx.window_us, ctx.segment_bytes);
  auto runner = nc::make_agent_runner(subject.background(),
                                      nc::RunnerOptions{.thread_name = "jb-background", .cpu = ctx.cpu_background},
                                      ctx.background_idle);
  runner.start();

  const std::uint64_t warmup = std::max<std::uint64_t>(count / 20, 10);
  DriveOutcome measured;
  bool warm_ok = true;
  std::exception_ptr error;
  {
    nc::NamedThread t("jb-append", ctx.cpu_append, [&] {
      try {
        std::uint64_t seq = 1;
        warm_ok = drive(subject, seq, warmup, rate, sync_each_pass, cap_seconds, nullptr).ok;
        if (!warm_ok) return;
        const double steal_before = steal_ms(ctx.cpu_append);
        const ThreadUsage before = thread_usage();
        measured = drive(subject, seq, count, rate, sync_each_pass, cap_seconds, &r.ns);
        r.usage = thread_usage() - before;
        const double steal_after = steal_ms(ctx.cpu_append);
        if (steal_before >= 0 && steal_after >= 0) r.steal_ms = steal_after - steal_before;
      } catch (...) {
        error = std::current_exception();
      }
    });
    if (t.pin_error())
      std::fprintf(stderr, "warning: could not pin the appending thread to CPU %d: %s (numbers will be noisier)\n",
                   ctx.cpu_append, t.pin_error().message().c_str());
  }  // joined
  if (error) std::rethrow_exception(error);
  const std::string what = std::string(S::kName) + ", fsync " + std::string(nx::to_string(policy));
  if (!warm_ok || !measured.ok) throw std::runtime_error(what + ": append failed: " + subject.error());
  // Batch: the background duty must make everything durable within a window
  // or so; if it does not, it was not driven as the exchange drives it.
  if (policy == FsyncPolicy::kBatch) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (subject.durable_seq() < subject.appended_seq() && !subject.background_failed() &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (subject.durable_seq() < subject.appended_seq())
      throw std::runtime_error(what + ": the background thread left records " + std::to_string(subject.durable_seq()) +
                               ".." + std::to_string(subject.appended_seq()) +
                               " unsynced after 5 s: " + subject.error());
  }
  runner.stop();  // rethrows a failure of the background agent
  if (subject.background_failed()) throw std::runtime_error(what + ": background sync failed: " + subject.error());
  if (!subject.finish(policy)) throw std::runtime_error(what + ": finishing the journal failed: " + subject.error());
  if (subject.appended_seq() != warmup + measured.records)
    throw std::runtime_error(what + ": appended_seq() is " + std::to_string(subject.appended_seq()) + ", expected " +
                             std::to_string(warmup + measured.records));
  r.records = measured.records;
  r.samples = measured.passes;
  r.waits = measured.waits;
  r.slow = measured.slow;
  r.seconds = static_cast<double>(nc::TscClock::global().to_ns(static_cast<std::int64_t>(measured.ticks))) / 1e9;
  r.capped = measured.records < count;
  return r;
}

// ---- one fdatasync -------------------------------------------------------------------

struct FsyncRow {
  std::string name;
  nc::LatencyHistogram ns;
};

class Fd {
 public:
  Fd(const std::filesystem::path& p, int flags) : path_(p.string()), fd_(::open(path_.c_str(), flags, 0600)) {
    if (fd_ < 0) throw std::runtime_error(errno_text("cannot open " + path_, errno));
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_;
};

void check_io(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(errno_text(what, errno));
}

// One fdatasync after writing one 4 KiB page, `reps` times per file kind,
// the three kinds interleaved; only the fdatasync is timed. Appending thread.
std::vector<FsyncRow> time_fdatasync(const Context& ctx, std::size_t reps) {
  rest(ctx);
  const nb::TempDir dir;
  std::vector<FsyncRow> rows;
  rows.push_back({"fresh 4 KiB page in a preallocated file", nc::LatencyHistogram()});
  rows.push_back({"4 KiB appended to a growing file", nc::LatencyHistogram()});
  rows.push_back({"the same 4 KiB page rewritten", nc::LatencyHistogram()});
  std::exception_ptr error;
  {
    nc::NamedThread t("jb-fdatasync", ctx.cpu_append, [&] {
      try {
        const nc::TscClock& clock = nc::TscClock::global();
        const Fd pre(dir.path() / "preallocated", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
        const Fd grow(dir.path() / "growing", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC);
        const Fd same(dir.path() / "same", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
        const auto size = static_cast<off_t>((reps + 1) * kPage);
        if (const int err = ::posix_fallocate(pre.get(), 0, size); err != 0)
          throw std::runtime_error(errno_text("posix_fallocate " + pre.path(), err));
        std::array<unsigned char, kPage> page{};
        check_io(::fdatasync(pre.get()) == 0, "fdatasync " + pre.path());
        check_io(::pwrite(same.get(), page.data(), kPage, 0) == static_cast<ssize_t>(kPage), "write " + same.path());
        check_io(::fdatasync(same.get()) == 0, "fdatasync " + same.path());
        const auto timed_sync = [&](const Fd& f, FsyncRow& row) {
          const std::uint64_t t0 = nb::stamp_begin();
          const int rc = ::fdatasync(f.get());
          const std::uint64_t t1 = nb::stamp_end();
          check_io(rc == 0, "fdatasync " + f.path());
          row.ns.record(nb::elapsed_ns(clock, t0, t1));
        };
        for (std::size_t i = 0; i < reps; ++i) {
          std::memset(page.data(), static_cast<int>(i & 0xff), kPage);
          check_io(
              ::pwrite(pre.get(), page.data(), kPage, static_cast<off_t>(i * kPage)) == static_cast<ssize_t>(kPage),
              "write " + pre.path());
          timed_sync(pre, rows[0]);
          check_io(::write(grow.get(), page.data(), kPage) == static_cast<ssize_t>(kPage), "write " + grow.path());
          timed_sync(grow, rows[1]);
          check_io(::pwrite(same.get(), page.data(), kPage, 0) == static_cast<ssize_t>(kPage), "write " + same.path());
          timed_sync(same, rows[2]);
        }
      } catch (...) {
        error = std::current_exception();
      }
    });
  }
  if (error) std::rethrow_exception(error);
  return rows;
}

}  // namespace
