// A unique path under the temp directory, removed when the test ends; shared
// by the telemetry tests. One per test; not thread-safe.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

namespace nanotick::test {

class TempTelemetryFile {
 public:
  explicit TempTelemetryFile(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("nanotick_" + tag + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".ntt");
  }
  ~TempTelemetryFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempTelemetryFile(const TempTelemetryFile&) = delete;
  TempTelemetryFile& operator=(const TempTelemetryFile&) = delete;

  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace nanotick::test
