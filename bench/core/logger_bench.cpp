// Async logger: hot-path cost per call, ours beside its peers in one run.
//
//   nanotick       core::Logger (binary copy into a per-thread byte ring)
//   spdlog async   spdlog::async_logger, one-thread pool, basic_file_sink
//                  (formats the message on the caller's thread, then queues it)
//   naive chars    the design nanotick replaces: formats on the caller's thread
//                  and pushes every character into a lock-free SPSC queue
//                  (boost::lockfree::spsc_queue<char>); a consumer writes them
//
// Latency: the producer (pinned on cpu_a) logs in bursts of 100 calls with a
// random 50-500 us pause between bursts so every back end (pinned on cpu_b
// where the library allows) drains. Two timings per case: each call between
// its own rdtsc/rdtscp pair (converted to ns with the calibrated TscClock; the
// "timing floor" row is an empty timed region, included in every other row),
// and the whole burst timed once and divided by 100 (floor and TSC tick size
// amortized away; the distribution is over bursts). Throughput: records per second sustained end to end
// (log N as fast as possible, until the back end has written them all).
// Output goes to files in a temporary directory, removed at the end.
// Peers linked: spdlog (bench/CMakeLists.txt), boost headers.
#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/bench_util.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/histogram.hpp"
#include "core/logger.hpp"
#include "core/thread.hpp"
#include "core/tsc_clock.hpp"

namespace nb = nanotick::bench;
namespace nc = nanotick::core;

namespace {

constexpr int kBurst = 100;

struct Plan {
  int warmup_bursts;
  int bursts;
  int throughput_records;
};

const std::string& long_string() {
  static const std::string s = [] {
    std::string r;
    for (int i = 0; i < 128; ++i) r.push_back(static_cast<char>('A' + i % 26));
    return r;
  }();
  return s;
}

// Spins for `ns` nanoseconds (a sleep would give the CPU away and add wake-up
// noise to the next burst).
void pause_ns(const nc::TscClock& clock, std::int64_t ns) {
  const std::uint64_t start = clock.now();
  while (clock.to_ns(static_cast<std::int64_t>(clock.now() - start)) < ns) _mm_pause();
}

// Times `call(i)` in bursts with pauses. Per call: each call between its own
// rdtsc/rdtscp pair (includes the timing floor; this TSC may tick in coarse
// steps). Amortized: one pair around the whole burst, divided by its length,
// so the floor and the tick size shrink 100-fold.
enum class Timing { kPerCall, kAmortized };

template <class Call>
nc::LatencyHistogram measure(const Plan& plan, Timing timing, Call&& call) {
  const auto& clock = nc::TscClock::global();
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::int64_t> gap_ns(50'000, 500'000);
  nc::LatencyHistogram hist;
  int i = 0;
  for (int b = 0; b < plan.warmup_bursts + plan.bursts; ++b) {
    const bool record = b >= plan.warmup_bursts;
    if (timing == Timing::kPerCall) {
      for (int k = 0; k < kBurst; ++k, ++i) {
        const std::uint64_t t0 = nc::rdtsc();
        call(i);
        const std::uint64_t t1 = nc::rdtscp();
        if (record) hist.record(nb::elapsed_ns(clock, t0, t1));
      }
    } else {
      const std::uint64_t t0 = nc::rdtsc();
      for (int k = 0; k < kBurst; ++k, ++i) call(i);
      const std::uint64_t t1 = nc::rdtscp();
      const double ns = static_cast<double>(clock.to_ns(static_cast<std::int64_t>(t1 - t0))) / kBurst;
      if (record) hist.record(static_cast<std::uint64_t>(ns + 0.5));
    }
    pause_ns(clock, gap_ns(rng));
  }
  return hist;
}

// ---- the naive reference: one queue element per character -------------------

class NaiveCharLogger {
 public:
  NaiveCharLogger(const std::string& path, int cpu) : file_(std::fopen(path.c_str(), "w")) {
    if (file_ == nullptr) throw std::runtime_error("naive logger: cannot open " + path);
    consumer_ = std::make_unique<nc::NamedThread>("naive-log", cpu, [this] { consume(); });
    if (consumer_->pin_error())
      std::fprintf(stderr, "warning: could not pin the naive consumer to CPU %d: %s\n", cpu,
                   consumer_->pin_error().message().c_str());
  }
  ~NaiveCharLogger() {
    stop();
    std::fclose(file_);
  }

  template <class... Args>
  void log(fmt::format_string<Args...> format, Args&&... args) {
    char buf[512];
    auto res = fmt::format_to_n(buf, sizeof buf - 1, "{} ", nc::TscClock::global().now());
    res = fmt::format_to_n(res.out, static_cast<std::size_t>(buf + sizeof buf - 1 - res.out), format,
                           std::forward<Args>(args)...);
    *res.out++ = '\n';
    for (const char* p = buf; p != res.out; ++p)
      while (!queue_->push(*p)) _mm_pause();
  }

  // Returns once everything pushed so far is written.
  void stop() {
    done_.store(true, std::memory_order_release);
    if (consumer_) consumer_->join();
  }

 private:
  void consume() {
    char buf[4096];
    for (;;) {
      const bool done = done_.load(std::memory_order_acquire);
      const std::size_t n = queue_->pop(buf, sizeof buf);
      if (n > 0) {
        std::fwrite(buf, 1, n, file_);
      } else if (done) {
        break;
      } else {
        std::fflush(file_);
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    std::fflush(file_);
  }

  using Queue = boost::lockfree::spsc_queue<char, boost::lockfree::capacity<(1u << 20)>>;
  std::FILE* file_;
  std::unique_ptr<Queue> queue_ = std::make_unique<Queue>();
  std::atomic<bool> done_{false};
  std::unique_ptr<nc::NamedThread> consumer_;
};

// ---- the three cases, for each implementation ---------------------------------

// One table per (case, timing).
struct CaseRows {
  std::vector<nb::LatencyRow> rows[3][2];  // [int, int+double, string][per call, amortized]
};

template <class Call>
void measure_case(const Plan& plan, CaseRows& out, int which, const char* name, Call&& call) {
  out.rows[which][0].push_back({name, measure(plan, Timing::kPerCall, call)});
  out.rows[which][1].push_back({name, measure(plan, Timing::kAmortized, call)});
}

void measure_floor(const Plan& plan, CaseRows& out) {
  for (int which = 0; which < 3; ++which)
    measure_case(plan, out, which, "timing floor (empty)", [](int i) { asm volatile("" : : "r"(i) : "memory"); });
}

// Our logger with its back end pinned on `cpu`, unpinned (with a warning) if
// that CPU is not available here.
std::unique_ptr<nc::Logger> open_logger(const std::string& path, int cpu) {
  nc::LoggerOptions o;
  o.path = path;
  o.backend_cpu = cpu;
  o.full_policy = nc::LogFullPolicy::kBlock;
  try {
    return std::make_unique<nc::Logger>(o);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "warning: %s (running it unpinned)\n", e.what());
    o.backend_cpu = -1;
    return std::make_unique<nc::Logger>(o);
  }
}

void run_nanotick(const Plan& plan, const nb::Args& args, const std::string& dir, CaseRows& rows,
                  std::vector<nb::ThroughputRow>& tput) {
  {
    auto logger = open_logger(dir + "/nanotick.log", args.cpu_b);
    nc::Logger& log = *logger;
    const std::string& s = long_string();
    measure_case(plan, rows, 0, "nanotick", [&](int i) { NT_LOG_INFO(log, "int={}", i); });
    measure_case(plan, rows, 1, "nanotick", [&](int i) { NT_LOG_INFO(log, "int={} double={}", i, i * 0.5 + 0.25); });
    measure_case(plan, rows, 2, "nanotick", [&](int) { NT_LOG_INFO(log, "str={}", s); });
    log.stop();
    if (log.dropped() != 0)
      std::fprintf(stderr, "warning: nanotick dropped %llu records\n", static_cast<unsigned long long>(log.dropped()));
  }
  auto logger = open_logger(dir + "/nanotick_tput.log", args.cpu_b);
  nc::Logger& log = *logger;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < plan.throughput_records; ++i) NT_LOG_INFO(log, "int={} double={}", i, i * 0.5 + 0.25);
  log.stop();
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  tput.push_back({"nanotick", plan.throughput_records / dt.count()});
}

std::shared_ptr<spdlog::async_logger> make_spdlog(const std::string& path,
                                                  const std::shared_ptr<spdlog::details::thread_pool>& pool) {
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, true);
  return std::make_shared<spdlog::async_logger>("bench", sink, pool, spdlog::async_overflow_policy::block);
}

std::shared_ptr<spdlog::details::thread_pool> make_spdlog_pool(int cpu) {
  return std::make_shared<spdlog::details::thread_pool>(8192, 1, [cpu] {
    nc::set_current_thread_name("spdlog-pool");
    if (auto ec = nc::pin_current_thread(cpu))
      std::fprintf(stderr, "warning: could not pin spdlog worker to CPU %d: %s\n", cpu, ec.message().c_str());
  });
}

void run_spdlog(const Plan& plan, const nb::Args& args, const std::string& dir, CaseRows& rows,
                std::vector<nb::ThroughputRow>& tput) {
  {
    auto pool = make_spdlog_pool(args.cpu_b);
    auto logger = make_spdlog(dir + "/spdlog.log", pool);
    const std::string& s = long_string();
    measure_case(plan, rows, 0, "spdlog async", [&](int i) { logger->info("int={}", i); });
    measure_case(plan, rows, 1, "spdlog async", [&](int i) { logger->info("int={} double={}", i, i * 0.5 + 0.25); });
    measure_case(plan, rows, 2, "spdlog async", [&](int) { logger->info("str={}", s); });
  }  // the pool's destructor processes every queued message, then joins
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto pool = make_spdlog_pool(args.cpu_b);
    auto logger = make_spdlog(dir + "/spdlog_tput.log", pool);
    for (int i = 0; i < plan.throughput_records; ++i) logger->info("int={} double={}", i, i * 0.5 + 0.25);
    logger.reset();
  }
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  tput.push_back({"spdlog async", plan.throughput_records / dt.count()});
}

void run_naive(const Plan& plan, const nb::Args& args, const std::string& dir, CaseRows& rows,
               std::vector<nb::ThroughputRow>& tput) {
  {
    NaiveCharLogger log(dir + "/naive.log", args.cpu_b);
    const std::string& s = long_string();
    measure_case(plan, rows, 0, "naive chars", [&](int i) { log.log("int={}", i); });
    measure_case(plan, rows, 1, "naive chars", [&](int i) { log.log("int={} double={}", i, i * 0.5 + 0.25); });
    measure_case(plan, rows, 2, "naive chars", [&](int) { log.log("str={}", s); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  {
    NaiveCharLogger log(dir + "/naive_tput.log", args.cpu_b);
    for (int i = 0; i < plan.throughput_records; ++i) log.log("int={} double={}", i, i * 0.5 + 0.25);
  }
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  tput.push_back({"naive chars", plan.throughput_records / dt.count()});
}

}  // namespace

int main(int argc, char** argv) {
  const nb::Args args = nb::parse_args(argc, argv);
  nb::print_machine_header("logger_bench");
  nb::pin_or_warn(args.cpu_a);
  const Plan plan = args.quick ? Plan{5, 20, 20'000} : Plan{100, 1500, 1'000'000};

  const auto dir = std::filesystem::temp_directory_path() / ("nanotick_logger_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int rc = 0;
  try {
    CaseRows rows;
    std::vector<nb::ThroughputRow> tput;
    measure_floor(plan, rows);
    run_nanotick(plan, args, dir.string(), rows, tput);
    run_spdlog(plan, args, dir.string(), rows, tput);
    run_naive(plan, args, dir.string(), rows, tput);

    std::printf("Bursts of %d calls, random 50-500 us pauses; producer on CPU %d, back ends on CPU %d.\n\n", kBurst,
                args.cpu_a, args.cpu_b);
    const char* cases[3] = {"one int", "int + double", "128-char string"};
    for (int which = 0; which < 3; ++which) {
      nb::print_latency_table(std::string("hot path, each call timed: ") + cases[which], rows.rows[which][0],
                              "spdlog async");
      nb::print_latency_table(std::string("hot path, burst time / 100 calls: ") + cases[which], rows.rows[which][1],
                              "spdlog async");
    }
    nb::print_throughput_table("end to end: records/s logged and written (int + double)", tput, "spdlog async");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "logger_bench: %s\n", e.what());
    rc = 1;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
