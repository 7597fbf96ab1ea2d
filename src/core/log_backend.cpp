// The async logger's back end (core/log_backend.hpp): the sink, and the
// draining and formatting thread.
#include "core/log_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace nanotick::core {

namespace {

constexpr std::size_t kWriteThreshold = 64 * 1024;  // sink write size while busy
constexpr std::size_t kDrainBatch = 4096;           // records per pass between housekeeping

std::string_view level_name(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO ";
    case LogLevel::kWarn: return "WARN ";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kCritical: return "CRIT ";
    case LogLevel::kOff: break;
  }
  return "?????";
}

}  // namespace

LogBackend::LogBackend(const LoggerOptions& options, const TscClock& clock) : clock_(clock) {
  if (options.path.empty()) {
    fd_ = STDERR_FILENO;
  } else {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (options.append ? O_APPEND : O_TRUNC);
    // Owner only: the lines carry clients' orders. An existing regular file
    // (appended to, or truncated: either keeps its mode) is made 0600 too;
    // a device such as /dev/null is left alone.
    fd_ = ::open(options.path.c_str(), flags, 0600);
    if (fd_ < 0)
      throw std::runtime_error("logger: cannot open '" + options.path + "' for writing: " + std::strerror(errno) +
                               "; check that the directory exists and is writable");
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0 && ::fchmod(fd_, 0600) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error("logger: cannot make '" + options.path + "' mode 0600: " + std::strerror(err) +
                               "; check who owns it");
    }
    owns_fd_ = true;
  }
  idle_sleep_ = options.idle_sleep;
  detailed_ = options.layout == LogLayout::kDetailed;
  line_prefix_ = options.line_prefix;
  try {
    thread_ = std::make_unique<NamedThread>(options.backend_name, options.backend_cpu, [this] { run(); });
  } catch (...) {
    if (owns_fd_) ::close(fd_);
    throw;
  }
  if (const std::error_code ec = thread_->pin_error()) {
    stop();
    if (owns_fd_) ::close(fd_);
    throw std::runtime_error("logger: cannot pin the back-end thread to CPU " + std::to_string(options.backend_cpu) +
                             ": " + ec.message() + "; set backend_cpu to an allowed CPU or to -1");
  }
}

LogBackend::~LogBackend() {
  stop();
  if (owns_fd_) ::close(fd_);
}

void LogBackend::flush() {
  const std::uint64_t ticket = flush_requested_.fetch_add(1, std::memory_order_acq_rel) + 1;
  wake();
  while (flush_done_.load(std::memory_order_acquire) < ticket) {
    if (finished_.load(std::memory_order_acquire)) return;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void LogBackend::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_requested_.store(true, std::memory_order_release);
  }
  wake();
  if (thread_) thread_->join();
}

std::uint64_t LogBackend::dropped() const {
  std::lock_guard lock(mutex_);
  std::uint64_t total = retired_dropped_;
  for (const auto& p : registered_) total += p->dropped.load(std::memory_order_relaxed);
  return total;
}

// Drains in passes. After a pass that found less than a full batch the
// thread sleeps `idle_sleep`: it never chases producers record by record
// (which would make them take a cache miss on every line it just read), it
// leaves the CPU to others on small machines, and the rings absorb the
// records logged meanwhile.
void LogBackend::run() {
  for (;;) {
    // Read the requests before looking for new rings and records, so
    // everything published before a request is seen by the drain below.
    const bool stopping = stop_requested_.load(std::memory_order_acquire);
    const std::uint64_t flush_req = flush_requested_.load(std::memory_order_acquire);
    refresh_sources();
    if (stopping || flush_req != flush_served_) {
      drain_published();
      write_out();
      reclaim_exited();
      flush_served_ = flush_req;
      flush_done_.store(flush_req, std::memory_order_release);
      if (stopping) break;
      continue;
    }
    const std::size_t n = drain(kDrainBatch);
    reclaim_exited();
    if (n == kDrainBatch) {  // more is waiting: keep going
      if (out_.size() >= kWriteThreshold) write_out();
      continue;
    }
    write_out();
    wait_for_work();
  }
  write_out();
  finished_.store(true, std::memory_order_release);
}

// Sleeps idle_sleep, waking early for a flush or stop request.
void LogBackend::wait_for_work() {
  std::unique_lock lock(wake_mutex_);
  wake_.wait_for(lock, idle_sleep_, [this] {
    return stop_requested_.load(std::memory_order_relaxed) ||
           flush_requested_.load(std::memory_order_relaxed) != flush_served_;
  });
}

void LogBackend::refresh_sources() {
  if (!registry_changed_.exchange(false, std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  for (const auto& p : registered_) {
    const bool known = std::any_of(sources_.begin(), sources_.end(), [&](const Source& s) { return s.producer == p; });
    if (!known) sources_.push_back(Source{p, {}, 0});
  }
}

// Loads the head record of `s` if it has none.
bool LogBackend::load_head(Source& s) {
  if (s.head.empty()) {
    s.head = s.producer->ring.front();
    if (s.head.empty()) return false;
    std::memcpy(&s.ticks, s.head.data() + 8, sizeof s.ticks);
  }
  return true;
}

// Formats up to `limit` records, always taking the oldest head among all
// rings, so records from different threads come out in timestamp order.
// Only records stamped before the pass began are taken: a ring seen empty
// may publish an older record a moment later, and a record another thread
// logs after that one (so after this pass began) must not overtake it. Later
// records wait for the next pass.
std::size_t LogBackend::drain(std::size_t limit) {
  const std::uint64_t pass_start = clock_.now();
  std::size_t done = 0;
  while (done < limit) {
    Source* oldest = nullptr;
    for (auto& s : sources_)
      if (load_head(s) && (oldest == nullptr || s.ticks < oldest->ticks)) oldest = &s;
    if (oldest == nullptr || oldest->ticks > pass_start) break;
    format_record(*oldest);
    oldest->producer->ring.pop();
    oldest->head = {};
    ++done;
  }
  // Hand the space back once per batch, not per record: a producer waiting
  // for room polls that cache line.
  for (auto& s : sources_) s.producer->ring.publish_consumed();
  if (done > 0)
    records_written_.store(records_written_.load(std::memory_order_relaxed) + done, std::memory_order_relaxed);
  return done;
}

// Drains every record published before this call (records published while
// it runs may be drained too), bounded even if producers keep logging. A
// pass that finds nothing old enough (a record stamped on another core a
// hair ahead of this one's clock) is simply repeated: time moves on.
void LogBackend::drain_published() {
  std::vector<std::uint64_t> targets;
  targets.reserve(sources_.size());
  for (const auto& s : sources_) targets.push_back(s.producer->ring.committed_position());
  for (;;) {
    bool behind = false;
    for (std::size_t i = 0; i < sources_.size(); ++i)
      if (sources_[i].producer->ring.consumed_position() < targets[i]) behind = true;
    if (!behind) break;
    drain(kDrainBatch);
    if (out_.size() >= kWriteThreshold) write_out();
  }
}

// A ring whose thread exited is reclaimed once it is empty: the thread set
// thread_exited after its last commit, so the acquire below makes those
// commits visible to front().
void LogBackend::reclaim_exited() {
  for (std::size_t i = 0; i < sources_.size();) {
    Source& s = sources_[i];
    if (s.producer->thread_exited.load(std::memory_order_acquire) && !load_head(s)) {
      retire(s.producer);
      sources_[i] = std::move(sources_.back());
      sources_.pop_back();
    } else {
      ++i;
    }
  }
}

void LogBackend::retire(const std::shared_ptr<LogProducer>& p) {
  std::lock_guard lock(mutex_);
  retired_dropped_ += p->dropped.load(std::memory_order_relaxed);
  std::erase(registered_, p);
}

void LogBackend::format_record(const Source& s) {
  const LogRecordView r = decode_log_record(s.head.data(), s.head.size());
  if (detailed_) append_prefix(r, s.producer->tid);
  append({line_prefix_.data(), line_prefix_.size()});
  args_.clear();
  const bool ok = decode_log_args(r, [this](auto value) { args_.push_back(value); });
  const fmt::appender out(out_);
  try {
    if (ok) {
      fmt::vformat_to(out, fmt::string_view(r.site->format), args_);
    } else {
      fmt::format_to(out, "[logger: corrupt record for \"{}\"]", r.site->format);
    }
  } catch (const std::exception& e) {
    fmt::format_to(out, "[logger: {} formatting \"{}\"]", e.what(), r.site->format);
  }
  out_.push_back('\n');
}

// "2024-05-01 12:34:56.123456789 INFO  [tid] file.cpp:42 " (UTC). Written by
// hand: this runs for every record and fmt's format-string parsing would
// dominate it.
void LogBackend::append_prefix(const LogRecordView& r, int tid) {
  const std::int64_t ns = clock_.to_epoch_ns(r.ticks);
  std::int64_t secs = ns / 1'000'000'000;
  std::int64_t frac = ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  if (secs != cached_second_) {
    using namespace std::chrono;
    const sys_seconds tp{seconds(secs)};
    const auto day = floor<days>(tp);
    const year_month_day ymd{day};
    const hh_mm_ss hms{tp - day};
    cached_date_.clear();
    fmt::format_to(fmt::appender(cached_date_), "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.", static_cast<int>(ymd.year()),
                   static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), hms.hours().count(),
                   hms.minutes().count(), hms.seconds().count());
    cached_second_ = secs;
  }
  append({cached_date_.data(), cached_date_.size()});
  char digits[9];
  for (int i = 8; i >= 0; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
  append({digits, sizeof digits});
  out_.push_back(' ');
  append(level_name(r.site->level));
  append(" [");
  append_int(tid);
  append("] ");
  append(r.site->file);
  out_.push_back(':');
  append_int(r.site->line);
  out_.push_back(' ');
}

void LogBackend::write_out() {
  const char* p = out_.data();
  std::size_t left = out_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_errors_.fetch_add(1, std::memory_order_relaxed);
      break;  // the sink is broken: drop this buffer rather than spin
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  out_.clear();
}
}  // namespace nanotick::core
