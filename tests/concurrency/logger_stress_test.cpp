// Stress tests for the async logger with real threads (run under TSan too).
// Several producers log many records each through small rings that wrap and
// fill constantly; the file is read back and every record is checked: present
// exactly once, intact, and in its thread's order. Records per thread come
// from NANOTICK_STRESS_ITEMS when set.
#include "core/logger.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support/stress.hpp"

namespace nc = nanotick::core;

namespace {

// Records per thread: NANOTICK_STRESS_ITEMS, else 200,000 (sanitizers too).
int items_per_thread() {
  return static_cast<int>(nanotick::test::stress_items(200'000, 200'000, std::numeric_limits<int>::max()));
}

class TempLog {
 public:
  explicit TempLog(const char* tag)
      : path_(std::filesystem::temp_directory_path() /
              (std::string("nanotick_logger_stress_") + tag + "_" + std::to_string(::getpid()) + ".log")) {}
  ~TempLog() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A payload string whose length and content depend on (t, i), so a torn or
// misplaced record shows up as a mismatch.
std::string_view payload(int t, int i) {
  static const std::string letters = [] {
    std::string s;
    for (int k = 0; k < 200; ++k) s.push_back(static_cast<char>('a' + k % 26));
    return s;
  }();
  return std::string_view(letters).substr(static_cast<std::size_t>((t + i) % 26), static_cast<std::size_t>(i % 97));
}

struct Checker {
  explicit Checker(int threads) : next(static_cast<std::size_t>(threads), 0), last_ts(next.size(), "") {}

  // Returns an error description, or an empty string if the line is fine.
  std::string check(const std::string& line) {
    // "YYYY-MM-DD HH:MM:SS.nnnnnnnnn INFO  [tid] file:line t=T i=I s=PAYLOAD"
    const auto msg = line.find(" t=");
    if (msg == std::string::npos || line.size() < 29) return "malformed line: " + line;
    int t = -1, i = -1, consumed = 0;
    if (std::sscanf(line.c_str() + msg, " t=%d i=%d s=%n", &t, &i, &consumed) != 2 || consumed == 0)
      return "unparsable message: " + line;
    if (t < 0 || static_cast<std::size_t>(t) >= next.size()) return "bad thread: " + line;
    if (i != next[static_cast<std::size_t>(t)])
      return "thread " + std::to_string(t) + ": expected i=" + std::to_string(next[static_cast<std::size_t>(t)]) +
             " got " + line;
    if (line.compare(msg + static_cast<std::size_t>(consumed), std::string::npos, payload(t, i)) != 0)
      return "payload mismatch: " + line;
    const std::string ts = line.substr(0, 29);  // fixed-width: compares as text
    if (ts < last_ts[static_cast<std::size_t>(t)]) return "time went backwards: " + line;
    last_ts[static_cast<std::size_t>(t)] = ts;
    ++next[static_cast<std::size_t>(t)];
    return {};
  }

  std::vector<int> next;
  std::vector<std::string> last_ts;
};

// Reads the log at `path` back through `checker`, failing the test if any line
// is wrong (the first five are shown); returns the number of lines read.
std::size_t check_log(const std::string& path, Checker& checker) {
  std::ifstream in(path);
  std::size_t lines = 0, errors = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const std::string err = checker.check(line);
    if (!err.empty() && ++errors <= 5) ADD_FAILURE() << err;
  }
  EXPECT_EQ(errors, 0u);
  return lines;
}

}  // namespace

TEST(LoggerStress, ShouldDeliverEveryRecordInPerThreadOrderInBlockMode) {
  constexpr int kThreads = 4;
  const int per_thread = items_per_thread();
  TempLog file("block");
  {
    nc::LoggerOptions options;
    options.path = file.path();
    options.ring_bytes = 1u << 16;  // small: wraps and fills all the time
    options.full_policy = nc::LogFullPolicy::kBlock;
    options.idle_sleep = std::chrono::microseconds(20);
    nc::Logger log(options);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        for (int i = 0; i < per_thread; ++i) NT_LOG_INFO(log, "t={} i={} s={}", t, i, payload(t, i));
      });
    go.store(true, std::memory_order_release);
    for (auto& th : threads) th.join();
    EXPECT_EQ(log.dropped(), 0u);
  }  // destructor: drains everything, joins the back end

  Checker checker(kThreads);
  const std::size_t lines = check_log(file.path(), checker);
  EXPECT_EQ(lines, static_cast<std::size_t>(kThreads) * static_cast<std::size_t>(per_thread));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(checker.next[static_cast<std::size_t>(t)], per_thread) << t;
}

TEST(LoggerStress, ShouldCountDropsExactlyUnderContention) {
  constexpr int kThreads = 4;
  const int per_thread = items_per_thread() / 2;
  TempLog file("drop");
  std::atomic<std::uint64_t> accepted{0};
  std::uint64_t dropped = 0, written = 0;
  {
    nc::LoggerOptions options;
    options.path = file.path();
    options.ring_bytes = 1u << 12;
    options.full_policy = nc::LogFullPolicy::kDrop;
    nc::Logger log(options);
    static constexpr nc::LogSite site = decltype(nc::log_detail::arg_list(1, 1, std::string_view()))::make_site(
        nc::LogLevel::kInfo, "t={} i={} s={}", __FILE__, __LINE__);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        std::uint64_t ok = 0;
        for (int i = 0; i < per_thread; ++i) ok += log.log(site, t, i, payload(t, i)) ? 1 : 0;
        accepted.fetch_add(ok, std::memory_order_relaxed);
      });
    for (auto& th : threads) th.join();
    log.stop();
    dropped = log.dropped();
    written = log.records_written();
  }
  EXPECT_EQ(accepted.load() + dropped, static_cast<std::uint64_t>(kThreads) * static_cast<std::uint64_t>(per_thread));
  EXPECT_EQ(written, accepted.load());

  // What was accepted is intact and in order (gaps are the drops).
  std::vector<int> last(kThreads, -1);
  std::ifstream in(file.path());
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto msg = line.find(" t=");
    int t = -1, i = -1;
    ASSERT_NE(msg, std::string::npos) << line;
    ASSERT_EQ(std::sscanf(line.c_str() + msg, " t=%d i=%d", &t, &i), 2) << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    ASSERT_GT(i, last[static_cast<std::size_t>(t)]) << line;
    last[static_cast<std::size_t>(t)] = i;
  }
  EXPECT_EQ(lines, accepted.load());
}

TEST(LoggerStress, ShouldDrainAndReclaimRingsOfThreadsThatComeAndGo) {
  constexpr int kWaves = 20, kThreadsPerWave = 3;
  const int per_thread = std::max(1, items_per_thread() / 100);
  TempLog file("waves");
  std::size_t producers_left = 1;
  {
    nc::LoggerOptions options;
    options.path = file.path();
    options.ring_bytes = 1u << 12;
    options.full_policy = nc::LogFullPolicy::kBlock;
    options.idle_sleep = std::chrono::microseconds(20);
    nc::Logger log(options);
    for (int w = 0; w < kWaves; ++w) {
      std::vector<std::thread> threads;
      for (int k = 0; k < kThreadsPerWave; ++k) {
        const int t = w * kThreadsPerWave + k;
        threads.emplace_back([&log, t, per_thread] {
          for (int i = 0; i < per_thread; ++i) NT_LOG_INFO(log, "t={} i={} s={}", t, i, payload(t, i));
        });
      }
      for (auto& th : threads) th.join();
    }
    log.flush();
    for (int i = 0; i < 5000 && log.producer_count() != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    producers_left = log.producer_count();
    EXPECT_EQ(log.dropped(), 0u);
  }
  EXPECT_EQ(producers_left, 0u);
  Checker checker(kWaves * kThreadsPerWave);
  const std::size_t lines = check_log(file.path(), checker);
  EXPECT_EQ(lines, static_cast<std::size_t>(kWaves * kThreadsPerWave * per_thread));
}
