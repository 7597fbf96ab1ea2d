// Concurrency test of the telemetry writer (run under TSan too): two threads
// record through NT_HOP into their own recorders while the writer's back end
// drains both rings into the file. Each thread records more than a ring holds
// and waits whenever its ring is full, so the test only finishes if the back
// end drains concurrently. The file must then hold every record of each
// thread exactly once, in the thread's order, with non-decreasing times, and
// the trailer's drop counts must equal the full rings each thread met.
// Records per thread come from NANOTICK_STRESS_ITEMS when set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/stress.hpp"
#include "telemetry/file_reader.hpp"
#include "telemetry/instrument.hpp"
#include "telemetry/writer.hpp"

namespace nt = nanotick::telemetry;

namespace {

std::uint64_t items_per_thread() {
  // Above 2 ring capacities by default, so the back end must drain mid-run.
  return nanotick::test::stress_items(300'000, 150'000, std::uint64_t{1} << 31);
}

class TempFile {
 public:
  TempFile()
      : path_(std::filesystem::temp_directory_path() /
              ("nanotick_telemetry_writer_stress_" + std::to_string(::getpid()) + ".ntt")) {}
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(TelemetryWriterConcurrency, ShouldWriteEveryRecordOfTwoThreadsWhileDraining) {
  const std::uint64_t n = items_per_thread();
  TempFile file;
  std::uint64_t full[2] = {0, 0};
  {
    nt::WriterOptions options;
    options.path = file.path();
    options.process_name = "stress";
    nt::Writer writer(options);
    nt::Recorder* recorders[2] = {&writer.create_recorder("t0"), &writer.create_recorder("t1")};
    writer.start();
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        nt::Recorder& r = *recorders[t];
        const nt::ThreadBinding binding(r);
        const std::uint64_t tag = static_cast<std::uint64_t>(t + 1) << 32;
        for (std::uint64_t i = 0; i < n; ++i) {
          // Through the macro as instrumented code records; a full ring drops
          // the hop (counted), and the record is then retried directly so
          // that every record reaches the file.
          const std::uint64_t before = r.dropped();
#if NANOTICK_TELEMETRY
          NT_HOP(tr_udp_read, tag | i, i * 7);
#else
          static_cast<void>(r.record(nt::Point::tr_udp_read, tag | i, i * 7));
#endif
          if (r.dropped() == before) continue;
          ++full[t];
          while (!r.record(nt::Point::tr_udp_read, tag | i, i * 7)) {
            ++full[t];
            std::this_thread::yield();
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    writer.stop();
    ASSERT_TRUE(writer.error().empty()) << writer.error();
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  ASSERT_EQ(f.records.size(), 2 * n);
  std::uint64_t next[2] = {0, 0};
  std::uint64_t last_tsc[2] = {0, 0};
  for (const nt::Record& r : f.records) {
    const std::uint64_t t = (r.key >> 32) - 1;
    ASSERT_LT(t, 2u) << "corrupt key " << r.key;
    const std::uint64_t i = r.key & 0xFFFF'FFFFu;
    ASSERT_EQ(i, next[t]) << "thread " << t << " record out of order or duplicated";
    ASSERT_EQ(r.aux, i * 7);
    ASSERT_EQ(r.point, static_cast<std::uint16_t>(nt::Point::tr_udp_read));
    ASSERT_GE(r.tsc, last_tsc[t]);
    last_tsc[t] = r.tsc;
    ++next[t];
  }
  EXPECT_EQ(next[0], n);
  EXPECT_EQ(next[1], n);
  ASSERT_TRUE(f.trailer.has_value());
  ASSERT_EQ(f.trailer->recorders.size(), 2u);
  EXPECT_EQ(f.trailer->recorders[0].records, n);
  EXPECT_EQ(f.trailer->recorders[1].records, n);
  EXPECT_EQ(f.trailer->recorders[0].dropped, full[0]);
  EXPECT_EQ(f.trailer->recorders[1].dropped, full[1]);
}

}  // namespace
