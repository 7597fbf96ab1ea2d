// Asynchronous binary logger: the front end (this header) and its options.
//
// Thread-safety: any number of threads may log to one Logger concurrently;
// each thread gets its own SPSC byte ring on its first log call. set_min_level,
// dropped, records_written and flush may be called from any thread; stop and the
// destructor from one thread (the owner), after other threads stopped logging.
//
// Hot path (NT_LOG_INFO(logger, "px={} qty={}", px, qty)):
//   1. runtime level check (one relaxed load) - arguments are not evaluated
//      when the level is filtered out;
//   2. the thread's ring from a one-entry thread-local cache;
//   3. claim, then copy: the address of the call site's static constexpr
//      LogSite (format, level, file, line, arg types), TscClock::now(), and the
//      raw argument bytes (strings as length + one memcpy);
//   4. commit (one release store).
// No allocation (except the first call on a new thread, which creates the
// ring), no locks, no exceptions, no formatting. The back-end thread drains all
// rings, merges records in timestamp order, formats them with fmt, converts
// ticks to wall-clock time and writes to the sink in large buffered writes.
//
// When a ring is full the options decide (or the call site, with
// NT_LOG_WITH): drop the record and count it (dropped()), or block (spin, then
// yield) until the back end makes room.
//
// Each line is "<date> <time> <LEVEL> [tid] file:line <line_prefix><message>"
// (LogLayout::kDetailed), or "<line_prefix><message>" (LogLayout::kPlain: for
// programs whose lines other programs parse, e.g. "nanotick-exchange: ready").
// stop() / ~Logger() write everything accepted before stop() was called.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "core/compiler.hpp"
#include "core/log_byte_ring.hpp"
#include "core/log_codec.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::core {

enum class LogFullPolicy : std::uint8_t {
  kDrop,   // the call returns false and dropped() counts it
  kBlock,  // the call waits for room (gives up, counting a drop, only if the logger stops)
};

enum class LogLayout : std::uint8_t {
  kDetailed,  // UTC date and time (ns), level, thread id, file:line, then the line prefix and message
  kPlain,     // the line prefix and message only
};

struct LoggerOptions {
  std::string path;                         // output file; empty = stderr
  bool append = false;                      // append to `path` instead of truncating it
  std::size_t ring_bytes = 1u << 20;        // per producer thread; power of two in [64, 2^31]
  LogFullPolicy full_policy = LogFullPolicy::kDrop;
  LogLevel min_level = LogLevel::kInfo;
  LogLayout layout = LogLayout::kDetailed;
  std::string line_prefix;                  // written before every message (e.g. "nanotick-exchange: ")
  int backend_cpu = -1;                     // pin the back-end thread; -1 = don't pin
  std::string backend_name = "nt-logger";   // back-end thread name
  std::chrono::microseconds idle_sleep{100};  // back-end sleep when all rings are empty
  const TscClock* clock = nullptr;          // must outlive the logger; nullptr = TscClock::global()
};

// One producer thread's ring plus the counters it owns. Shared (shared_ptr)
// between the producer thread and the back end; written by the producer,
// read by the back end.
struct LogProducer {
  LogProducer(std::size_t ring_bytes, int thread_id) : ring(ring_bytes), tid(thread_id) {}

  LogByteRing ring;
  // Written by the producer thread only (relaxed: read for statistics).
  alignas(kCacheLine) std::atomic<std::uint64_t> dropped{0};
  std::atomic<bool> thread_exited{false};  // release: after its last commit
  const int tid;                           // OS thread id, printed with each record
};

namespace log_detail {
// The calling thread's ring for the logger it used last. Constant-initialized
// and trivially destructible, so reading it is a plain %fs-relative load.
struct ProducerCache {
  std::uint64_t logger_id = 0;
  LogProducer* producer = nullptr;
};
inline constinit thread_local ProducerCache tl_producer_cache{};
}  // namespace log_detail

class LogBackend;

class Logger {
 public:
  // Opens the sink and starts the back-end thread. Throws std::runtime_error /
  // std::invalid_argument with the reason and the fix on a bad path, a CPU the
  // back end cannot be pinned to, or a bad ring size.
  explicit Logger(LoggerOptions options);
  ~Logger();  // stop()

  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  NT_ALWAYS_INLINE bool should_log(LogLevel level) const noexcept {
    return level >= min_level_.load(std::memory_order_relaxed) && level != LogLevel::kOff;
  }
  void set_min_level(LogLevel level) noexcept;
  LogLevel min_level() const noexcept { return min_level_.load(std::memory_order_relaxed); }

  // Enqueues one record for `site`. Returns false if the record was dropped.
  // Does not check the level (one load saved): use the NT_LOG_* macros, which
  // build the site and call should_log() first, or call should_log() yourself.
  template <class... Args>
  NT_ALWAYS_INLINE bool log(const LogSite& site, const Args&... args) noexcept {
    return write(full_policy_, site, log_detail::to_wire(args)...);
  }
  // As above, with the ring-full policy chosen by the call site instead of
  // the options (NT_LOG_WITH): a hot thread drops, a line that must not be
  // lost waits.
  template <class... Args>
  NT_ALWAYS_INLINE bool log(LogFullPolicy policy, const LogSite& site, const Args&... args) noexcept {
    return write(policy, site, log_detail::to_wire(args)...);
  }
  LogFullPolicy full_policy() const noexcept { return full_policy_; }

  // Blocks until every record accepted before the call is written to the sink.
  void flush();
  // Writes every record accepted before the call, then stops the back end and
  // closes the sink. Later log calls return false. Idempotent.
  void stop();

  std::uint64_t dropped() const;          // records refused (ring full / oversized / no ring)
  std::uint64_t records_written() const;  // records formatted into the sink
  std::uint64_t write_errors() const;     // failed writes to the sink (each loses a buffer)
  std::size_t producer_count() const;     // rings currently registered (not yet reclaimed)

 private:
  template <class... W>
  NT_ALWAYS_INLINE bool write(LogFullPolicy policy, const LogSite& site, const W&... w) noexcept {
    LogProducer* p = current_producer();
    if (p == nullptr) [[unlikely]]
      return false;
    const std::uint64_t ticks = clock_->now();
    const std::size_t size = kLogRecordHeader + (std::size_t{0} + ... + log_detail::wire_size(w));
    std::byte* dst = nullptr;
    if (size <= p->ring.max_payload()) [[likely]]
      dst = p->ring.try_claim(static_cast<std::uint32_t>(size));
    if (dst == nullptr) [[unlikely]] {
      dst = claim_slow(*p, size, policy);
      if (dst == nullptr) return false;
    }
    const LogSite* site_ptr = &site;
    std::memcpy(dst, &site_ptr, sizeof site_ptr);
    std::memcpy(dst + 8, &ticks, sizeof ticks);
    dst += kLogRecordHeader;
    ((dst = log_detail::put(dst, w)), ...);
    p->ring.commit();
    return true;
  }

  NT_ALWAYS_INLINE LogProducer* current_producer() noexcept {
    const auto& cache = log_detail::tl_producer_cache;
    if (cache.logger_id == id_) [[likely]]
      return cache.producer;
    return attach_current_thread();
  }

  NT_NOINLINE LogProducer* attach_current_thread() noexcept;
  NT_NOINLINE std::byte* claim_slow(LogProducer& p, std::size_t size, LogFullPolicy policy) noexcept;

  // Read on the hot path; written only at start-up / by set_min_level / stop.
  const std::uint64_t id_;
  const TscClock* const clock_;
  std::atomic<LogLevel> min_level_;
  const LogFullPolicy full_policy_;
  const std::size_t ring_bytes_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> attach_failures_{0};
  std::unique_ptr<LogBackend> backend_;
};

}  // namespace nanotick::core

// NT_LOG(logger, level, "format {}", args...): logs if `level` passes the
// logger's minimum; arguments are evaluated only then. The format string is
// checked against the arguments at compile time (fmt::format_string). A full
// ring is handled as the logger's options say.
// (The policy argument names NT_LOG_WITH's reference to the logger.)
#define NT_LOG(logger_, level_, format_, ...) \
  NT_LOG_WITH(logger_, level_, nt_log_logger_.full_policy(), format_ __VA_OPT__(, ) __VA_ARGS__)

// NT_LOG_WITH(logger, level, policy, "format {}", args...): NT_LOG with the
// ring-full policy (core::LogFullPolicy) of this call site, whatever the
// logger's options say. `policy` is evaluated only if the level passes.
#define NT_LOG_WITH(logger_, level_, policy_, format_, ...)                                                   \
  do {                                                                                                        \
    auto& nt_log_logger_ = (logger_);                                                                         \
    if (nt_log_logger_.should_log(level_)) {                                                                  \
      static constexpr ::nanotick::core::LogSite nt_log_site_ =                                               \
          decltype(::nanotick::core::log_detail::arg_list(__VA_ARGS__))::make_site(level_, format_, __FILE__, \
                                                                                   __LINE__);                 \
      static_cast<void>(nt_log_logger_.log(policy_, nt_log_site_ __VA_OPT__(, ) __VA_ARGS__));                \
    }                                                                                                         \
  } while (false)

#define NT_LOG_TRACE(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kTrace, __VA_ARGS__)
#define NT_LOG_DEBUG(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kDebug, __VA_ARGS__)
#define NT_LOG_INFO(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kInfo, __VA_ARGS__)
#define NT_LOG_WARN(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kWarn, __VA_ARGS__)
#define NT_LOG_ERROR(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kError, __VA_ARGS__)
#define NT_LOG_CRITICAL(logger_, ...) NT_LOG(logger_, ::nanotick::core::LogLevel::kCritical, __VA_ARGS__)
