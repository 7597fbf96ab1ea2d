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

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/bench_util.hpp"
#include "common/child_process.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/agent_runner.hpp"
#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "engine/request.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_writer.hpp"
#include "exchange/sequencing/sequencer.hpp"

namespace {

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace ne = nanotick::engine;
namespace nx = nanotick::exchange;

using nx::FsyncPolicy;

constexpr std::uint64_t kFingerprint = 0x6a6f75726e616c31ULL;  // any value: nothing reads these journals back

// Records one sequencer pass takes at most with fsync = every (its group
// commit): kGroupCommitBatch where the Sequencer has one, else kBatch.
template <typename Seq>
constexpr std::size_t group_commit_batch() {
  if constexpr (requires { Seq::kGroupCommitBatch; }) return Seq::kGroupCommitBatch;
  else return Seq::kBatch;
}
constexpr std::size_t kMaxPass = group_commit_batch<nx::Sequencer>();
constexpr std::size_t kPage = 4096;
// Calls slower than this are counted apart: the bound on the max
// (journal append at 100 k/s, max <= 100 us).
constexpr std::uint64_t kSlowNs = 100'000;

std::string errno_text(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// The record every subject writes: the journal's own encoding, so the peers
// differ from ours only in how the bytes reach the file.
NT_ALWAYS_INLINE nx::JournalRecord encode(std::uint64_t seq, const ne::Request& rq) noexcept {
  nx::JournalRecord r;
  r.length = sizeof(nx::JournalRecord);
  r.type = nx::RecordType::kEngineRequest;
  r.reserved = 0;
  r.seq = seq;
  r.request = rq;
  r.crc = nx::record_crc(r);
  return r;
}

// ---- subjects ----------------------------------------------------------------------

// The JournalSyncer's batch duty, for a peer: at most one sync per window, and
// only when something was appended since the last one. Policies none and
// every: nothing (every syncs on the appending thread). Runs on the
// background runner; `P` has sync(), appended_seq() and durable_seq().
template <typename P>
class PeerSyncer {
 public:
  PeerSyncer(P& peer, FsyncPolicy policy, std::uint32_t window_us) noexcept
      : peer_(peer), policy_(policy), window_ns_(nc::ns_from_us(window_us)) {}

  std::string_view role_name() const noexcept { return "peer-sync"; }

  int do_work() noexcept {
    if (policy_ != FsyncPolicy::kBatch) return 0;
    const std::uint64_t now = clock_.now_ns();
    if (now - last_sync_ns_ < window_ns_) return 0;
    if (peer_.durable_seq() == peer_.appended_seq()) return 0;
    last_sync_ns_ = now;
    if (!peer_.sync()) failed_.store(true, std::memory_order_release);
    return 1;
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

 private:
  P& peer_;
  const nc::TscClock& clock_ = nc::TscClock::global();
  FsyncPolicy policy_;
  std::uint64_t window_ns_;
  std::uint64_t last_sync_ns_ = 0;
  std::atomic<bool> failed_{false};
};

// The sequencer's sync under policy every: a journal that stages records and
// writes them on flush() is flushed first (as the sequencer does), one that
// writes on append() just syncs. A template, so either API compiles.
template <typename J>
bool flush_and_sync(J& journal) {
  if constexpr (requires { journal.flush(); }) {
    if (!journal.flush()) return false;
  }
  return journal.sync();
}

// The clean shutdown the exchange does, for a journal that has one (it also
// removes the staging ring it keeps outside the directory); true otherwise.
template <typename J>
bool finish_journal(J& journal, bool sync) {
  if constexpr (requires { journal.finish(sync); }) return journal.finish(sync);
  return true;
}

// Ours: only the JournalWriter API the exchange uses (constructor, append,
// sync, failed, appended_seq, durable_seq, error, sync_error; flush and
// finish where they exist) and JournalSyncer, so the bench measures whatever
// the writer does inside. An append that returns false without failed() is
// back-pressure (a staging ring full): the caller tries again.
class OursSubject {
 public:
  static constexpr const char* kName = "ours (JournalWriter)";

  OursSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
              std::uint64_t segment_bytes)
      : journal_(dir.string(), segment_bytes, kFingerprint, nx::JournalTail{}), syncer_(journal_, policy, window_us) {}

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept { return journal_.append(rq); }
  bool sync() { return flush_and_sync(journal_); }
  bool failed() const noexcept { return journal_.failed(); }
  bool finish(FsyncPolicy policy) { return finish_journal(journal_, policy != FsyncPolicy::kNone); }
  std::uint64_t appended_seq() const noexcept { return journal_.appended_seq(); }
  std::uint64_t durable_seq() const noexcept { return journal_.durable_seq(); }
  nx::JournalSyncer& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const { return !journal_.error().empty() ? journal_.error() : journal_.sync_error(); }

 private:
  nx::JournalWriter journal_;
  nx::JournalSyncer syncer_;
};

// What both peers share: the appended / durable sequence numbers (published
// as the journal publishes its own) and the errno of a failure.
class PeerState {
 public:
  std::uint64_t appended_seq() const noexcept { return appended_.load(std::memory_order_acquire); }
  std::uint64_t durable_seq() const noexcept { return durable_.load(std::memory_order_acquire); }
  bool failed() const noexcept { return append_errno_.load() != 0; }
  bool finish(FsyncPolicy /*policy*/) noexcept { return true; }  // nothing outside the directory

 protected:
  std::atomic<std::uint64_t> appended_{0};
  std::atomic<std::uint64_t> durable_{0};
  std::uint64_t next_seq_ = 1;        // appending thread
  std::atomic<int> append_errno_{0};  // set by append() (noexcept: no strings there)
  std::atomic<int> sync_errno_{0};
  const char* failed_call_ = "";
};

// Peer "write(2)": one write() per record to an O_APPEND file.
class WriteSubject : public PeerState {
 public:
  static constexpr const char* kName = "write(2)";

  WriteSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
               std::uint64_t /*segment_bytes: one growing file*/)
      : path_((dir / "journal.log").string()), syncer_(*this, policy, window_us) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error(errno_text("write(2) peer: cannot create " + path_, errno));
  }
  ~WriteSubject() { ::close(fd_); }
  WriteSubject(const WriteSubject&) = delete;
  WriteSubject& operator=(const WriteSubject&) = delete;

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept {
    const nx::JournalRecord r = encode(next_seq_, rq);
    const ssize_t n = ::write(fd_, &r, sizeof r);
    if (n != static_cast<ssize_t>(sizeof r)) [[unlikely]] {
      append_errno_.store(n < 0 ? errno : ENOSPC);  // a short write: the disk filled
      return false;
    }
    appended_.store(next_seq_++, std::memory_order_release);
    return true;
  }
  bool sync() noexcept {
    const std::uint64_t target = appended_.load(std::memory_order_acquire);
    if (::fdatasync(fd_) != 0) {
      sync_errno_.store(errno);
      return false;
    }
    durable_.store(target, std::memory_order_release);
    return true;
  }
  PeerSyncer<WriteSubject>& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const {
    if (const int e = append_errno_.load()) return errno_text("write to " + path_, e);
    if (const int e = sync_errno_.load()) return errno_text("fdatasync of " + path_, e);
    return "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  PeerSyncer<WriteSubject> syncer_;
};

// Peer "naive mmap": memcpy into a MAP_SHARED | MAP_POPULATE mapping of a
// posix_fallocate'd file; a full file is replaced inline by a new one of the
// same size (its descriptor handed to the syncer, as the journal did).
class MmapSubject : public PeerState {
 public:
  static constexpr const char* kName = "naive mmap";

  MmapSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
              std::uint64_t segment_bytes)
      : dir_(dir.string()), segment_bytes_(segment_bytes), syncer_(*this, policy, window_us) {
    replaced_.reserve(64);
    spare_.reserve(64);
    if (!roll()) throw std::runtime_error("naive mmap peer: " + error());
  }
  ~MmapSubject() {
    if (map_ != nullptr) ::munmap(map_, segment_bytes_);
    if (const int fd = current_fd_.load(); fd >= 0) ::close(fd);
    for (const int fd : replaced_) ::close(fd);
  }
  MmapSubject(const MmapSubject&) = delete;
  MmapSubject& operator=(const MmapSubject&) = delete;

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept {
    if (offset_ + sizeof(nx::JournalRecord) > segment_bytes_) [[unlikely]] {
      if (!roll()) return false;
    }
    const nx::JournalRecord r = encode(next_seq_, rq);
    std::memcpy(map_ + offset_, &r, sizeof r);
    offset_ += sizeof r;
    appended_.store(next_seq_++, std::memory_order_release);
    return true;
  }
  // One thread at a time (the background runner, or the appending thread
  // under policy every): it alone closes replaced files.
  bool sync() noexcept {
    std::uint64_t target;
    int fd;
    {
      std::lock_guard lock(fds_mutex_);
      target = appended_.load(std::memory_order_acquire);
      spare_.swap(replaced_);  // both reserved: no allocation here
      fd = current_fd_.load(std::memory_order_acquire);
    }
    bool ok = true;
    for (const int old : spare_) {
      if (::fdatasync(old) != 0 && ok) {
        sync_errno_.store(errno);
        ok = false;
      }
      ::close(old);
    }
    spare_.clear();
    if (::fdatasync(fd) != 0 && ok) {
      sync_errno_.store(errno);
      ok = false;
    }
    if (ok) durable_.store(target, std::memory_order_release);
    return ok;
  }
  PeerSyncer<MmapSubject>& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const {
    if (const int e = append_errno_.load()) return errno_text(std::string(failed_call_) + " in " + dir_, e);
    if (const int e = sync_errno_.load()) return errno_text("fdatasync in " + dir_, e);
    return "";
  }

 private:
  bool roll() noexcept {
    char path[4096];
    std::snprintf(path, sizeof path, "%s/segment-%06llu.log", dir_.c_str(), static_cast<unsigned long long>(files_));
    const auto fail = [&](const char* call, int err, int fd) {
      failed_call_ = call;
      append_errno_.store(err);
      if (fd >= 0) ::close(fd);
      return false;
    };
    const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail("open", errno, -1);
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(segment_bytes_)); err != 0)
      return fail("posix_fallocate", err, fd);
    void* p = ::mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) return fail("mmap", errno, fd);
    if (map_ != nullptr) ::munmap(map_, segment_bytes_);
    map_ = static_cast<unsigned char*>(p);
    offset_ = 0;
    {
      std::lock_guard lock(fds_mutex_);
      if (const int old = current_fd_.load(std::memory_order_relaxed); old >= 0) replaced_.push_back(old);
      current_fd_.store(fd, std::memory_order_release);
    }
    ++files_;
    return true;
  }

  std::string dir_;
  std::uint64_t segment_bytes_;
  unsigned char* map_ = nullptr;  // appending thread
  std::uint64_t offset_ = 0;
  std::uint64_t files_ = 0;
  std::mutex fds_mutex_;  // replaced_ and current_fd_ changes
  std::atomic<int> current_fd_{-1};
  std::vector<int> replaced_;
  std::vector<int> spare_;  // the syncer's
  PeerSyncer<MmapSubject> syncer_;
};

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
