// Async logger back end: producer registration, the draining/formatting
// thread, the sink, and the front end's cold paths.
#include "core/logger.hpp"

#include <fcntl.h>
#include <immintrin.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/args.h>
#include <fmt/format.h>

#include "core/thread.hpp"

namespace nanotick::core {

namespace {

std::atomic<std::uint64_t> g_next_logger_id{1};

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

// The calling thread's rings, one per logger it has logged to. On thread exit
// every ring is marked so the back end drains and reclaims it.
struct ThreadProducers {
  std::vector<std::pair<std::uint64_t, std::shared_ptr<LogProducer>>> entries;
  ~ThreadProducers();
};
constinit thread_local bool tl_producers_destroyed = false;
thread_local ThreadProducers tl_producers;

ThreadProducers::~ThreadProducers() {
  log_detail::tl_producer_cache = {};
  tl_producers_destroyed = true;
  for (auto& entry : entries) entry.second->thread_exited.store(true, std::memory_order_release);
}

}  // namespace

// Owns the sink and the back-end thread. Registration (register_producer,
// counters) is guarded by mutex_; everything else is touched only by the
// back-end thread, except the atomics, whose writers are named below.
class LogBackend {
 public:
  LogBackend(const LoggerOptions& options, const TscClock& clock) : clock_(clock) {
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

  ~LogBackend() {
    stop();
    if (owns_fd_) ::close(fd_);
  }

  // Any thread (cold). False once stopping: nobody would drain the ring.
  bool register_producer(std::shared_ptr<LogProducer> producer) {
    std::lock_guard lock(mutex_);
    if (stop_requested_.load(std::memory_order_relaxed)) return false;
    registered_.push_back(std::move(producer));
    registry_changed_.store(true, std::memory_order_release);
    return true;
  }

  void flush() {
    const std::uint64_t ticket = flush_requested_.fetch_add(1, std::memory_order_acq_rel) + 1;
    wake();
    while (flush_done_.load(std::memory_order_acquire) < ticket) {
      if (finished_.load(std::memory_order_acquire)) return;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stop_requested_.store(true, std::memory_order_release);
    }
    wake();
    if (thread_) thread_->join();
  }

  std::uint64_t dropped() const {
    std::lock_guard lock(mutex_);
    std::uint64_t total = retired_dropped_;
    for (const auto& p : registered_) total += p->dropped.load(std::memory_order_relaxed);
    return total;
  }

  // Wakes the back end from its idle sleep (cold: flush and stop only).
  void wake() {
    { std::lock_guard lock(wake_mutex_); }
    wake_.notify_one();
  }

  std::uint64_t records_written() const { return records_written_.load(std::memory_order_relaxed); }
  std::uint64_t write_errors() const { return write_errors_.load(std::memory_order_relaxed); }

  std::size_t producer_count() const {
    std::lock_guard lock(mutex_);
    return registered_.size();
  }

 private:
  // A producer as the back end sees it: the record at the head of its ring.
  struct Source {
    std::shared_ptr<LogProducer> producer;
    std::span<const std::byte> head;  // empty: nothing pending
    std::uint64_t ticks = 0;          // head record's timestamp
  };

  // Drains in passes. After a pass that found less than a full batch the
  // thread sleeps `idle_sleep`: it never chases producers record by record
  // (which would make them take a cache miss on every line it just read), it
  // leaves the CPU to others on small machines, and the rings absorb the
  // records logged meanwhile.
  void run() {
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
  void wait_for_work() {
    std::unique_lock lock(wake_mutex_);
    wake_.wait_for(lock, idle_sleep_, [this] {
      return stop_requested_.load(std::memory_order_relaxed) ||
             flush_requested_.load(std::memory_order_relaxed) != flush_served_;
    });
  }

  void refresh_sources() {
    if (!registry_changed_.exchange(false, std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    for (const auto& p : registered_) {
      const bool known =
          std::any_of(sources_.begin(), sources_.end(), [&](const Source& s) { return s.producer == p; });
      if (!known) sources_.push_back(Source{p, {}, 0});
    }
  }

  // Loads the head record of `s` if it has none.
  static bool load_head(Source& s) {
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
  std::size_t drain(std::size_t limit) {
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
  void drain_published() {
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
  void reclaim_exited() {
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

  void retire(const std::shared_ptr<LogProducer>& p) {
    std::lock_guard lock(mutex_);
    retired_dropped_ += p->dropped.load(std::memory_order_relaxed);
    std::erase(registered_, p);
  }

  void format_record(const Source& s) {
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

  void append(std::string_view text) { out_.append(text.data(), text.data() + text.size()); }
  template <class Int>
  void append_int(Int value) {
    const fmt::format_int text(value);
    out_.append(text.data(), text.data() + text.size());
  }

  // "2024-05-01 12:34:56.123456789 INFO  [tid] file.cpp:42 " (UTC). Written by
  // hand: this runs for every record and fmt's format-string parsing would
  // dominate it.
  void append_prefix(const LogRecordView& r, int tid) {
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

  void write_out() {
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

  const TscClock& clock_;
  int fd_ = -1;
  bool owns_fd_ = false;
  std::chrono::microseconds idle_sleep_{100};
  bool detailed_ = true;     // LogLayout::kDetailed: date, level, tid, location before each line
  std::string line_prefix_;  // then this, then the message

  // Registration: guarded by mutex_.
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<LogProducer>> registered_;
  std::uint64_t retired_dropped_ = 0;

  // Idle sleep of the back end; flush() and stop() wake it early.
  std::mutex wake_mutex_;
  std::condition_variable wake_;

  // Written by front-end threads, read by the back end.
  std::atomic<bool> registry_changed_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::uint64_t> flush_requested_{0};
  // Written by the back end.
  std::atomic<std::uint64_t> flush_done_{0};
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> records_written_{0};
  std::atomic<std::uint64_t> write_errors_{0};

  // Back-end thread only.
  std::vector<Source> sources_;
  std::uint64_t flush_served_ = 0;
  fmt::memory_buffer out_;
  fmt::dynamic_format_arg_store<fmt::format_context> args_;
  std::int64_t cached_second_ = INT64_MIN;
  fmt::memory_buffer cached_date_;

  std::unique_ptr<NamedThread> thread_;  // last: started after everything above exists
};

Logger::Logger(LoggerOptions options)
    : id_(g_next_logger_id.fetch_add(1, std::memory_order_relaxed)),
      clock_(options.clock != nullptr ? options.clock : &TscClock::global()),
      min_level_(options.min_level),
      full_policy_(options.full_policy),
      ring_bytes_(options.ring_bytes) {
  // Validate ring_bytes now rather than on some thread's first log call.
  if (ring_bytes_ < 64 || ring_bytes_ > (std::size_t{1} << 31) || (ring_bytes_ & (ring_bytes_ - 1)) != 0)
    throw std::invalid_argument("logger: ring_bytes " + std::to_string(ring_bytes_) +
                                " must be a power of two between 64 and 2^31; fix LoggerOptions");
  backend_ = std::make_unique<LogBackend>(options, *clock_);
}

Logger::~Logger() { stop(); }

void Logger::set_min_level(LogLevel level) noexcept {
  min_level_.store(level, std::memory_order_relaxed);
  if (stopped_.load(std::memory_order_acquire)) min_level_.store(LogLevel::kOff, std::memory_order_relaxed);
}

void Logger::flush() {
  if (!stopped_.load(std::memory_order_acquire)) backend_->flush();
}

void Logger::stop() {
  if (stopped_.exchange(true, std::memory_order_acq_rel)) return;
  min_level_.store(LogLevel::kOff, std::memory_order_seq_cst);
  backend_->stop();
}

std::uint64_t Logger::dropped() const { return backend_->dropped() + attach_failures_.load(std::memory_order_relaxed); }

std::uint64_t Logger::records_written() const { return backend_->records_written(); }

std::uint64_t Logger::write_errors() const { return backend_->write_errors(); }

std::size_t Logger::producer_count() const { return backend_->producer_count(); }

LogProducer* Logger::attach_current_thread() noexcept {
  if (tl_producers_destroyed) {  // logging from a thread-exit destructor
    attach_failures_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  try {
    auto& entries = tl_producers.entries;
    // Forget rings of loggers that are gone (we hold the last reference).
    std::erase_if(entries, [](const auto& e) { return e.second.use_count() == 1; });
    for (const auto& e : entries) {
      if (e.first == id_) {
        log_detail::tl_producer_cache = {id_, e.second.get()};
        return e.second.get();
      }
    }
    auto producer = std::make_shared<LogProducer>(ring_bytes_, static_cast<int>(::gettid()));
    if (!backend_->register_producer(producer)) {
      attach_failures_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    entries.emplace_back(id_, producer);
    log_detail::tl_producer_cache = {id_, producer.get()};
    return producer.get();
  } catch (...) {
    attach_failures_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
}

std::byte* Logger::claim_slow(LogProducer& p, std::size_t size, LogFullPolicy policy) noexcept {
  auto count_drop = [&p] { p.dropped.store(p.dropped.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); };
  if (size > p.ring.max_payload() || policy == LogFullPolicy::kDrop) {
    count_drop();
    return nullptr;
  }
  const auto n = static_cast<std::uint32_t>(size);
  for (unsigned spins = 0;; ++spins) {
    if (std::byte* dst = p.ring.try_claim(n)) return dst;
    if (min_level_.load(std::memory_order_relaxed) == LogLevel::kOff) {  // stopping
      count_drop();
      return nullptr;
    }
    if (spins < 64) {
      _mm_pause();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace nanotick::core
