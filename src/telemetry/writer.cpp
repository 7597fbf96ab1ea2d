// Telemetry writer: the file, the back-end thread that drains the recorders,
// and start/stop (see writer.hpp).
#include "telemetry/writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/thread.hpp"
#include "telemetry/file_format.hpp"
#include "telemetry/names.hpp"

namespace nanotick::telemetry {

namespace ff = file_format;

static_assert(Recorder::kMaxNameBytes == ff::kMaxRecorderNameBytes, "recorder names must fit the trailer's name field");

namespace {
constexpr std::size_t kBufferBytes = 256 * 1024;                  // the back end's one buffer
constexpr std::size_t kFlushBytes = 64 * 1024;                    // write once this much waits
constexpr std::chrono::milliseconds kMaxWriteDelay{50};           // ... or this long passed
}  // namespace

// The file and the back-end thread. Fields are touched by the back-end thread
// while it runs and by the owner only before start and after the join,
// except the atomics (written by the back end, read by anyone) and the stop
// request (written by the owner under wake_mutex_).
class WriterBackend {
 public:
  WriterBackend(const std::string& path, const core::TscClock& clock)
      : path_(path), clock_(clock), buffer_(std::make_unique<std::byte[]>(kBufferBytes)) {
    // Owner only: the records are keyed by client and order. An existing
    // file keeps its mode through O_TRUNC, so a regular one is made 0600 too
    // (a device such as /dev/null is left alone).
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      throw std::runtime_error("telemetry: cannot create '" + path + "': " + std::strerror(errno) +
                               "; check that its directory exists and is writable");
    }
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0077) != 0 && ::fchmod(fd_, 0600) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error("telemetry: cannot make '" + path + "' mode 0600: " + std::strerror(err));
    }
  }

  ~WriterBackend() {
    if (fd_ >= 0) ::close(fd_);
  }

  WriterBackend(const WriterBackend&) = delete;
  WriterBackend& operator=(const WriterBackend&) = delete;

  // Owner, before the thread runs. Throws when the header cannot be written.
  void write_header(const std::string& process_name) {
    ff::FileHeader h;
    h.pid = static_cast<std::uint32_t>(::getpid());
    h.ticks_per_ns = clock_.ticks_per_ns();
    h.start_tsc = clock_.now();
    h.start_epoch_ns = clock_.to_epoch_ns(h.start_tsc);
    h.clock_source = clock_.uses_tsc() ? ff::ClockSource::kTsc : ff::ClockSource::kSteadyNs;
    h.process_name = process_name;
    const std::vector<std::byte> bytes = ff::encode_header_and_points(h);
    if (!write_all(bytes.data(), bytes.size())) {
      throw std::runtime_error("telemetry: cannot write the header of '" + path_ + "': " + error_);
    }
  }

  void set_recorders(const std::vector<std::unique_ptr<Recorder>>& recorders) {
    recorders_.clear();
    for (const auto& r : recorders) recorders_.push_back(r.get());
    counts_.assign(recorders_.size(), 0);
  }

  void start_thread(const WriterOptions& options) {
    period_ = options.drain_period;
    thread_ = std::make_unique<core::NamedThread>(options.thread_name, options.cpu, [this] { run(); });
    if (const std::error_code ec = thread_->pin_error()) {
      stop_thread();
      throw std::runtime_error("telemetry: cannot pin the writer thread to CPU " + std::to_string(options.cpu) + ": " +
                               ec.message() + "; set cpu to an allowed CPU or to -1");
    }
  }

  void stop_thread() {
    {
      const std::lock_guard lock(wake_mutex_);
      stop_requested_.store(true, std::memory_order_release);
    }
    wake_.notify_one();
    if (thread_) {
      thread_->join();
      thread_.reset();
    }
  }

  // Owner, after the thread stopped (or never ran): drains what is left,
  // writes the trailer and footer, closes the file.
  void finish() {
    drain_published();
    write_out();
    if (fd_ < 0) return;
    ff::FileTrailer t;
    t.end_tsc = clock_.now();
    t.end_epoch_ns = clock_.to_epoch_ns(t.end_tsc);
    for (std::size_t i = 0; i < recorders_.size(); ++i) {
      const std::uint64_t dropped = recorders_[i]->dropped();
      t.recorders.push_back({recorders_[i]->name(), counts_[i], dropped});
      t.records += counts_[i];
      t.dropped += dropped;
    }
    if (!broken_) {
      const std::vector<std::byte> bytes = ff::encode_trailer_and_footer(t, file_bytes_);
      static_cast<void>(write_all(bytes.data(), bytes.size()));
    }
    ::close(fd_);
    fd_ = -1;
  }

  std::uint64_t records_written() const noexcept { return records_written_.load(std::memory_order_relaxed); }
  std::uint64_t write_errors() const noexcept { return write_errors_.load(std::memory_order_relaxed); }
  const std::string& error() const noexcept { return error_; }

 private:
  // Drains every drain period; a pass that filled the buffer is followed by
  // another at once (the rings are busy), any other by a sleep, which leaves
  // the CPU to the recording threads on small machines.
  void run() {
    auto last_write = std::chrono::steady_clock::now();
    for (;;) {
      // Read the request before draining: everything published before stop()
      // is then drained by finish() at the latest.
      if (stop_requested_.load(std::memory_order_acquire)) break;
      const bool busy = drain_pass();
      const auto now = std::chrono::steady_clock::now();
      if (used_ >= kFlushBytes || (used_ > 0 && now - last_write >= kMaxWriteDelay)) {
        write_out();
        last_write = now;
      }
      if (busy) continue;
      std::unique_lock lock(wake_mutex_);
      wake_.wait_for(lock, period_, [this] { return stop_requested_.load(std::memory_order_relaxed); });
    }
  }

  // One pass over every ring, each drained as far as the buffer allows.
  // True when the buffer filled up (more may be waiting).
  bool drain_pass() {
    bool filled = false;
    for (std::size_t i = 0; i < recorders_.size(); ++i) {
      if (used_ + ff::kRecordBytes > kBufferBytes) {
        write_out();
        filled = true;
      }
      drain_one(i, (kBufferBytes - used_) / ff::kRecordBytes);
    }
    return filled || used_ + ff::kRecordBytes > kBufferBytes;
  }

  // Drains up to `max` records of recorder `i` into the buffer.
  std::size_t drain_one(std::size_t i, std::size_t max) {
    std::byte* const out = buffer_.get();
    std::size_t& used = used_;
    const std::size_t n = recorders_[i]->drain(
        [out, &used](const Record& r) noexcept {
          std::memcpy(out + used, &r, sizeof r);
          used += sizeof r;
        },
        max);
    counts_[i] += n;
    records_written_.store(records_written_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    return n;
  }

  // Every record each ring held when this was called; bounded even if a
  // producer keeps recording.
  void drain_published() {
    for (std::size_t i = 0; i < recorders_.size(); ++i) {
      std::size_t left = recorders_[i]->pending();
      while (left > 0) {
        if (used_ + ff::kRecordBytes > kBufferBytes) write_out();
        const std::size_t n = drain_one(i, std::min(left, (kBufferBytes - used_) / ff::kRecordBytes));
        if (n == 0) break;
        left -= n;
      }
    }
  }

  void write_out() {
    if (used_ > 0 && !broken_) static_cast<void>(write_all(buffer_.get(), used_));
    used_ = 0;
  }

  // Writes all of [data, data + size) or marks the file broken (the first
  // failure ends its writing: see writer.hpp).
  bool write_all(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_errors_.store(write_errors_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        error_ = "writing '" + path_ + "' failed after " + std::to_string(file_bytes_) +
                 " bytes: " + (n < 0 ? std::strerror(errno) : "no progress") + "; the file has no trailer";
        broken_ = true;
        return false;
      }
      p += n;
      size -= static_cast<std::size_t>(n);
      file_bytes_ += static_cast<std::uint64_t>(n);
    }
    return true;
  }

  const std::string path_;
  const core::TscClock& clock_;
  int fd_ = -1;
  std::chrono::microseconds period_{1000};

  // Back-end state (the owner's only before start and after the join).
  std::vector<Recorder*> recorders_;
  std::vector<std::uint64_t> counts_;  // records drained per recorder
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t used_ = 0;
  std::uint64_t file_bytes_ = 0;
  bool broken_ = false;
  std::string error_;

  // Written by the back end, read by any thread.
  std::atomic<std::uint64_t> records_written_{0};
  std::atomic<std::uint64_t> write_errors_{0};

  // Stop request and the back end's idle sleep.
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> stop_requested_{false};

  std::unique_ptr<core::NamedThread> thread_;  // last: started after everything above exists
};

Writer::Writer(WriterOptions options)
    : options_(std::move(options)), clock_(options_.clock != nullptr ? options_.clock : &core::TscClock::global()) {
  if (options_.path.empty()) {
    throw std::invalid_argument("telemetry: writer path is empty; give the .ntt file to create");
  }
  validate_name("process name", options_.process_name, ff::kMaxProcessNameBytes);
  if (options_.drain_period < std::chrono::microseconds(1) || options_.drain_period > std::chrono::seconds(1)) {
    throw std::invalid_argument("telemetry: drain period of " + std::to_string(options_.drain_period.count()) +
                                " us is outside 1 us .. 1 s (the default is 1000 us)");
  }
  backend_ = std::make_unique<WriterBackend>(options_.path, *clock_);
}

Writer::~Writer() {
  try {
    stop();
  } catch (...) {
    // Only allocation can throw in stop(); a destructor must not.
  }
}

Recorder& Writer::create_recorder(std::string name) {
  if (started_ || stopped_) {
    throw std::logic_error("telemetry: create_recorder('" + name + "') after start(); create every recorder first");
  }
  for (const auto& r : recorders_) {
    if (r->name() == name) {
      throw std::invalid_argument("telemetry: recorder '" + name + "' exists already in '" + options_.path +
                                  "'; recorder names must be unique per file");
    }
  }
  recorders_.push_back(Recorder::create(std::move(name), *clock_));
  return *recorders_.back();
}

void Writer::start() {
  if (started_ || stopped_) {
    throw std::logic_error(std::string("telemetry: start() called ") + (stopped_ ? "after stop()" : "twice") +
                           " for '" + options_.path + "'");
  }
  backend_->write_header(options_.process_name);
  backend_->set_recorders(recorders_);
  backend_->start_thread(options_);
  started_ = true;
}

void Writer::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) {
    try {
      backend_->write_header(options_.process_name);
    } catch (const std::runtime_error&) {
      // error() says why; finish() writes nothing more to a broken file.
    }
    backend_->set_recorders(recorders_);
  } else {
    backend_->stop_thread();
  }
  backend_->finish();
}

std::uint64_t Writer::records_written() const noexcept { return backend_->records_written(); }

std::uint64_t Writer::dropped() const noexcept {
  std::uint64_t total = 0;
  for (const auto& r : recorders_) total += r->dropped();
  return total;
}

std::uint64_t Writer::write_errors() const noexcept { return backend_->write_errors(); }

std::string Writer::error() const { return backend_->error(); }

}  // namespace nanotick::telemetry
