// The logger tests' file helpers: a temporary log file, and its lines parsed
// back ("YYYY-MM-DD HH:MM:SS.nnnnnnnnn LEVEL [tid] file:line message"). Shared
// by logger_test.cpp and logger_threads_test.cpp.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/logger.hpp"

namespace nanotick::test::logfile {

namespace nc = nanotick::core;

// A unique file under the temp dir, removed at the end of the test.
class TempLog {
 public:
  TempLog() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() / ("nanotick_logger_test_" + std::to_string(::getpid()) + "_" +
                                                      std::to_string(counter.fetch_add(1)) + ".log");
  }
  ~TempLog() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }
  std::vector<std::string> lines() const {
    std::ifstream in(path_);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

 private:
  std::filesystem::path path_;
};

// One parsed output line: "YYYY-MM-DD HH:MM:SS.nnnnnnnnn LEVEL [tid] file:line message".
struct Line {
  std::string date_time;
  std::string level;
  int tid = 0;
  std::string location;
  std::string message;
  std::int64_t epoch_ns = 0;
};

inline std::int64_t parse_epoch_ns(const std::string& dt) {
  int y, mo, d, h, mi, s;
  long ns;
  EXPECT_EQ(std::sscanf(dt.c_str(), "%d-%d-%d %d:%d:%d.%ld", &y, &mo, &d, &h, &mi, &s, &ns), 7) << dt;
  using namespace std::chrono;
  const sys_days day = year{y} / month{static_cast<unsigned>(mo)} / ::std::chrono::day{static_cast<unsigned>(d)};
  const auto tp = day + hours{h} + minutes{mi} + seconds{s};
  return duration_cast<nanoseconds>(tp.time_since_epoch()).count() + ns;
}

inline Line parse(const std::string& text) {
  Line l;
  // date(10) ' ' time(18) ' ' level(5) ' ' '[' tid ']' ' ' location ' ' message
  EXPECT_GE(text.size(), 36u) << text;
  if (text.size() < 36) return l;
  l.date_time = text.substr(0, 29);
  l.epoch_ns = parse_epoch_ns(l.date_time);
  l.level = text.substr(30, 5);
  const auto close = text.find(']', 37);
  l.tid = std::stoi(text.substr(37, close - 37));
  const auto loc_end = text.find(' ', close + 2);
  l.location = text.substr(close + 2, loc_end - close - 2);
  l.message = loc_end == std::string::npos ? "" : text.substr(loc_end + 1);
  return l;
}

inline std::vector<Line> parse_all(const TempLog& log) {
  std::vector<Line> out;
  for (const auto& l : log.lines()) out.push_back(parse(l));
  return out;
}

inline nc::LoggerOptions file_options(const TempLog& log) {
  nc::LoggerOptions o;
  o.path = log.path();
  o.ring_bytes = 1u << 16;
  o.min_level = nc::LogLevel::kTrace;
  o.idle_sleep = std::chrono::microseconds(50);
  return o;
}

}  // namespace nanotick::test::logfile
