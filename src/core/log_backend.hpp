// The async logger's back end (core/logger.hpp is the front end): the thread
// that drains every producer's ring in timestamp order, formats the records
// and writes them to the sink. Internal to src/core: only logger.cpp and
// log_backend.cpp include it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/args.h>
#include <fmt/format.h>

#include "core/logger.hpp"
#include "core/thread.hpp"

namespace nanotick::core {

// Owns the sink and the back-end thread. Registration (register_producer,
// counters) is guarded by mutex_; everything else is touched only by the
// back-end thread, except the atomics, whose writers are named below.
class LogBackend {
 public:
  LogBackend(const LoggerOptions& options, const TscClock& clock);

  ~LogBackend();

  // Any thread (cold). False once stopping: nobody would drain the ring.
  bool register_producer(std::shared_ptr<LogProducer> producer) {
    std::lock_guard lock(mutex_);
    if (stop_requested_.load(std::memory_order_relaxed)) return false;
    registered_.push_back(std::move(producer));
    registry_changed_.store(true, std::memory_order_release);
    return true;
  }

  void flush();

  void stop();

  std::uint64_t dropped() const;

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
  void run();

  // Sleeps idle_sleep, waking early for a flush or stop request.
  void wait_for_work();

  void refresh_sources();

  // Loads the head record of `s` if it has none.
  static bool load_head(Source& s);

  // Formats up to `limit` records, always taking the oldest head among all
  // rings, so records from different threads come out in timestamp order.
  // Only records stamped before the pass began are taken: a ring seen empty
  // may publish an older record a moment later, and a record another thread
  // logs after that one (so after this pass began) must not overtake it. Later
  // records wait for the next pass.
  std::size_t drain(std::size_t limit);

  // Drains every record published before this call (records published while
  // it runs may be drained too), bounded even if producers keep logging. A
  // pass that finds nothing old enough (a record stamped on another core a
  // hair ahead of this one's clock) is simply repeated: time moves on.
  void drain_published();

  // A ring whose thread exited is reclaimed once it is empty: the thread set
  // thread_exited after its last commit, so the acquire below makes those
  // commits visible to front().
  void reclaim_exited();

  void retire(const std::shared_ptr<LogProducer>& p);

  void format_record(const Source& s);

  void append(std::string_view text) { out_.append(text.data(), text.data() + text.size()); }
  template <class Int>
  void append_int(Int value) {
    const fmt::format_int text(value);
    out_.append(text.data(), text.data() + text.size());
  }

  // "2024-05-01 12:34:56.123456789 INFO  [tid] file.cpp:42 " (UTC). Written by
  // hand: this runs for every record and fmt's format-string parsing would
  // dominate it.
  void append_prefix(const LogRecordView& r, int tid);

  void write_out();

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

}  // namespace nanotick::core
