// Async logger front end: the thread-local producer registry, the Logger's
// control calls and the cold paths of logging (attaching a thread, a full
// ring). The back end is core/log_backend.hpp.
#include "core/logger.hpp"

#include <immintrin.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/log_backend.hpp"

namespace nanotick::core {

namespace {

std::atomic<std::uint64_t> g_next_logger_id{1};

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
