// Unit tests for the async logger: the whole path from NT_LOG_* to the file
// (read back and parsed) on one thread, the file's mode, start-up errors.
// Several threads, full rings and stop: logger_threads_test.cpp.
#include "core/logger.hpp"

#include "support/allocation_counter.hpp"
#include "support/stress.hpp"
#include "unit/core/log_test_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nc = nanotick::core;
using namespace nanotick::test::logfile;

// ---- Logger: output ----------------------------------------------------------

TEST(Logger, ShouldFormatEverySupportedArgumentType) {
  TempLog file;
  int x = 0;
  const int* px = &x;
  {
    nc::Logger log(file_options(file));
    const bool b = true;
    const char c = 'z';
    const signed char sc = -5;
    const unsigned char uc = 250;
    const short s = -12345;
    const unsigned short us = 54321;
    const int i = INT_MIN;
    const unsigned u = UINT_MAX;
    const long l = LONG_MIN;
    const unsigned long ul = ULONG_MAX;
    const long long ll = -1234567890123LL;
    const unsigned long long ull = 12345678901234ULL;
    const float f = 0.1f;
    const double d = 3.141592653589793;
    const std::string str = "std::string";
    const std::string_view sv = "string_view";
    const char* cs = "c string";
    const char* null_cs = nullptr;
    char arr[16] = "char array";
    NT_LOG_INFO(log, "bool={} {}", b, false);
    NT_LOG_INFO(log, "char={} {:d}", c, c);
    NT_LOG_INFO(log, "small={} {} {} {}", sc, uc, s, us);
    NT_LOG_INFO(log, "int={} {} {:x}", i, u, u);
    NT_LOG_INFO(log, "long={} {} {} {}", l, ul, ll, ull);
    NT_LOG_INFO(log, "float={} double={} {:.3f} {} {:e}", f, d, d, 1e-300, 2.5);
    NT_LOG_INFO(log, "ptr={} null={}", px, nullptr);
    NT_LOG_INFO(log, "str={} sv={} cs={} null={} arr={} lit={}", str, sv, cs, null_cs, arr, "literal");
    NT_LOG_INFO(log, "no arguments");
    NT_LOG_INFO(log, "width=[{:>6}] [{:<4}] [{:^5}]", 42, "ab", 'c');
    NT_LOG_INFO(log, "empty=[{}]", std::string());
  }
  const auto lines = parse_all(file);
  std::vector<std::string> msgs;
  for (const auto& l : lines) msgs.push_back(l.message);
  const std::vector<std::string> expected = {
      "bool=true false",
      "char=z 122",
      "small=-5 250 -12345 54321",
      fmt::format("int={} {} {:x}", INT_MIN, UINT_MAX, UINT_MAX),
      fmt::format("long={} {} -1234567890123 12345678901234", LONG_MIN, ULONG_MAX),
      "float=0.1 double=3.141592653589793 3.142 1e-300 2.500000e+00",
      fmt::format("ptr={} null=0x0", static_cast<const void*>(px)),
      "str=std::string sv=string_view cs=c string null=(null) arr=char array lit=literal",
      "no arguments",
      "width=[    42] [ab  ] [  c  ]",
      "empty=[]",
  };
  EXPECT_EQ(msgs, expected);
}

TEST(Logger, ShouldNotAllocateOnTheHotPathAfterTheFirstCall) {
  TempLog file;
  nc::Logger log(file_options(file));
  NT_LOG_INFO(log, "first call creates the ring {}", 0);
  const std::string s(100, 's');
  const std::size_t before = nanotick::test::allocations_on_this_thread();
  for (int i = 0; i < 1000; ++i) {
    NT_LOG_INFO(log, "i={} d={} s={} c={} p={} b={}", i, i * 0.5, s, "c string", static_cast<const void*>(&s), true);
    NT_LOG_DEBUG(log, "no args");
  }
  EXPECT_EQ(nanotick::test::allocations_on_this_thread() - before, 0u);
  // The counter does see the one allocating call: a new thread's first log.
  std::size_t first_call = 0;
  std::thread([&] {
    const std::size_t at_start = nanotick::test::allocations_on_this_thread();
    NT_LOG_INFO(log, "new thread");
    first_call = nanotick::test::allocations_on_this_thread() - at_start;
  }).join();
  EXPECT_GT(first_call, 0u);
}

TEST(Logger, ShouldPrintLevelTidAndLocation) {
  TempLog file;
  int line = 0;
  {
    nc::Logger log(file_options(file));
    NT_LOG_WARN(log, "where am I");
    line = __LINE__ - 1;
  }
  const auto lines = parse_all(file);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, "WARN ");
  EXPECT_EQ(lines[0].tid, static_cast<int>(::gettid()));
  EXPECT_EQ(lines[0].location, "logger_test.cpp:" + std::to_string(line));
}

TEST(Logger, ShouldCopyStringsSoTheCallerMayReuseThemAtOnce) {
  TempLog file;
  {
    nc::Logger log(file_options(file));
    std::string s;
    char buf[64];
    for (int i = 0; i < 100; ++i) {
      s = "string number " + std::to_string(i);
      std::snprintf(buf, sizeof buf, "buffer %d", i);
      NT_LOG_INFO(log, "{} / {}", s, buf);
      s.assign(s.size(), '#');  // overwrite right after the call
      std::memset(buf, '#', sizeof buf - 1);
    }
    const std::string big(5000, 'x');
    NT_LOG_INFO(log, "big={}", big);
  }
  const auto lines = parse_all(file);
  ASSERT_EQ(lines.size(), 101u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(lines[i].message, "string number " + std::to_string(i) + " / buffer " + std::to_string(i));
  EXPECT_EQ(lines[100].message, "big=" + std::string(5000, 'x'));
}

TEST(Logger, ShouldKeepOrderWithinAThreadAcrossManyRingWraps) {
  TempLog file;
  auto options = file_options(file);
  options.ring_bytes = 1024;  // wraps every ~30 records
  options.full_policy = nc::LogFullPolicy::kBlock;
  constexpr int kCount = 20000;
  {
    nc::Logger log(options);
    for (int i = 0; i < kCount; ++i)
      NT_LOG_INFO(log, "seq={} pad={}", i, std::string_view("abc", static_cast<std::size_t>(i % 4)));
    EXPECT_EQ(log.dropped(), 0u);
  }
  const auto lines = parse_all(file);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kCount));
  for (int i = 0; i < kCount; ++i)
    ASSERT_EQ(lines[i].message,
              fmt::format("seq={} pad={}", i, std::string_view("abc", static_cast<std::size_t>(i % 4))));
}

TEST(Logger, ShouldFilterBelowTheMinimumLevelWithoutEvaluatingArguments) {
  TempLog file;
  int evaluated = 0;
  auto count = [&evaluated] { return ++evaluated; };
  {
    auto options = file_options(file);
    options.min_level = nc::LogLevel::kWarn;
    nc::Logger log(options);
    NT_LOG_TRACE(log, "t {}", count());
    NT_LOG_DEBUG(log, "d {}", count());
    NT_LOG_INFO(log, "i {}", count());
    NT_LOG_WARN(log, "w {}", count());
    NT_LOG_ERROR(log, "e {}", count());
    NT_LOG_CRITICAL(log, "c {}", count());
    log.set_min_level(nc::LogLevel::kTrace);
    NT_LOG_TRACE(log, "t {}", count());
    log.set_min_level(nc::LogLevel::kOff);
    NT_LOG_CRITICAL(log, "off {}", count());
  }
  EXPECT_EQ(evaluated, 4);
  const auto lines = parse_all(file);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].level, "WARN ");
  EXPECT_EQ(lines[0].message, "w 1");
  EXPECT_EQ(lines[1].level, "ERROR");
  EXPECT_EQ(lines[2].level, "CRIT ");
  EXPECT_EQ(lines[3].level, "TRACE");
  EXPECT_EQ(lines[3].message, "t 4");
}

TEST(Logger, ShouldStampMonotonicTimesCloseToTheWallClock) {
  TempLog file;
  std::int64_t before = 0, after = 0;
  {
    nc::Logger log(file_options(file));
    before = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
    for (int i = 0; i < 1000; ++i) NT_LOG_INFO(log, "{}", i);
    after = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
  }
  const auto lines = parse_all(file);
  ASSERT_EQ(lines.size(), 1000u);
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_LE(lines[i - 1].epoch_ns, lines[i].epoch_ns);
  // TSC-to-wall conversion drifts a little from the system clock: allow 50 ms.
  constexpr std::int64_t kSlack = 50'000'000;
  EXPECT_GE(lines.front().epoch_ns, before - kSlack);
  EXPECT_LE(lines.back().epoch_ns, after + kSlack);
}

TEST(Logger, ShouldReclaimTheRingOfAnExitedThread) {
  TempLog file;
  nc::Logger log(file_options(file));
  std::thread([&log] { NT_LOG_INFO(log, "from a short-lived thread"); }).join();
  log.flush();
  for (int i = 0; i < 2000 && log.producer_count() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(log.producer_count(), 0u);
  EXPECT_EQ(file.lines().size(), 1u);
}

TEST(Logger, ShouldKeepSeparateRingsForSeveralLoggersOnOneThread) {
  TempLog fa, fb;
  {
    nc::Logger a(file_options(fa));
    nc::Logger b(file_options(fb));
    for (int i = 0; i < 100; ++i) {
      NT_LOG_INFO(a, "a{}", i);
      NT_LOG_INFO(b, "b{}", i);
    }
  }
  const auto la = parse_all(fa), lb = parse_all(fb);
  ASSERT_EQ(la.size(), 100u);
  ASSERT_EQ(lb.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(la[i].message, fmt::format("a{}", i));
    EXPECT_EQ(lb[i].message, fmt::format("b{}", i));
  }
}

// Issue 30: a log carries clients' orders. Under the usual umask 022 the file
// would be 0644 without the explicit mode; an existing one is tightened, a
// device is left alone.
TEST(Logger, ShouldCreateItsFileOwnerOnlyAndTightenAnExistingOne) {
  const mode_t old_umask = ::umask(022);
  const auto mode_of = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  };
  TempLog fresh;
  {
    nc::Logger log(file_options(fresh));
    NT_LOG_INFO(log, "order {}", 1);
  }
  EXPECT_EQ(mode_of(fresh.path()), 0600u);
  TempLog existing;
  std::ofstream(existing.path()) << "before\n";
  ASSERT_EQ(::chmod(existing.path().c_str(), 0644), 0);
  for (const bool append : {true, false}) {
    nc::LoggerOptions o = file_options(existing);
    o.append = append;
    ASSERT_EQ(::chmod(existing.path().c_str(), 0644), 0);
    nc::Logger log(o);
    EXPECT_EQ(mode_of(existing.path()), 0600u) << "append " << append;
  }
  const unsigned null_mode = mode_of("/dev/null");
  {
    nc::LoggerOptions o = file_options(fresh);
    o.path = "/dev/null";
    nc::Logger log(o);
  }
  EXPECT_EQ(mode_of("/dev/null"), null_mode);
  ::umask(old_umask);
}

TEST(Logger, ShouldExplainABadPathRingSizeOrCpu) {
  nc::LoggerOptions o;
  o.path = "/nonexistent-dir/x.log";
  try {
    nc::Logger log(o);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.log"), std::string::npos);
  }
  o.path.clear();
  o.ring_bytes = 1000;
  EXPECT_THROW(nc::Logger{o}, std::invalid_argument);
  o.ring_bytes = 1u << 16;
  o.backend_cpu = 100000;
  try {
    nc::Logger log(o);
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("backend_cpu"), std::string::npos) << e.what();
  }
}