// Unit tests for the telemetry Writer and Recorder: records round trip
// through a real file, drops are counted when a ring is full, every option
// and name is validated, and recording allocates nothing.
#include "telemetry/writer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/allocation_counter.hpp"
#include "telemetry/file_format.hpp"
#include "telemetry/file_reader.hpp"
#include "telemetry/recorder.hpp"
#include "unit/telemetry/temp_file.hpp"

namespace nt = nanotick::telemetry;
namespace nc = nanotick::core;
using nanotick::test::TempTelemetryFile;

namespace {

nt::WriterOptions options_for(const TempTelemetryFile& file, std::string process = "exchange") {
  nt::WriterOptions o;
  o.path = file.path();
  o.process_name = std::move(process);
  return o;
}

std::vector<nt::Record> records_with_point(const nt::TelemetryFile& f, nt::Point point) {
  std::vector<nt::Record> out;
  for (const nt::Record& r : f.records)
    if (r.point == static_cast<std::uint16_t>(point)) out.push_back(r);
  return out;
}

TEST(TelemetryWriter, ShouldRoundTripRecordsHeaderAndTrailerThroughAFile) {
  TempTelemetryFile file("writer_roundtrip");
  const nc::TscClock& clock = nc::TscClock::global();
  std::uint64_t before = 0;
  {
    nt::Writer writer(options_for(file, "exchange-7"));
    nt::Recorder& gateway = writer.create_recorder("gateway");
    nt::Recorder& engine = writer.create_recorder("engine");
    writer.start();
    before = clock.now();
    for (std::uint64_t i = 0; i < 1000; ++i) {
      ASSERT_TRUE(gateway.record_at(5'000 + i, nt::Point::ex_tcp_read, (7ull << 32) | i, 0, 0));
      ASSERT_TRUE(engine.record_at(9'000 + i, nt::Point::fn_book_match, i, i * 3, static_cast<std::uint32_t>(i + 1)));
    }
    ASSERT_TRUE(gateway.record(nt::Point::ex_md_write, 77, 88));
    writer.stop();
    EXPECT_EQ(writer.records_written(), 2001u);
    EXPECT_EQ(writer.dropped(), 0u);
    EXPECT_TRUE(writer.error().empty()) << writer.error();
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());

  EXPECT_EQ(f.header.version, 1);
  EXPECT_EQ(f.header.process_name, "exchange-7");
  EXPECT_EQ(f.header.pid, static_cast<std::uint32_t>(::getpid()));
  EXPECT_DOUBLE_EQ(f.header.ticks_per_ns, clock.ticks_per_ns());
  EXPECT_EQ(f.header.clock_source,
            clock.uses_tsc() ? nt::file_format::ClockSource::kTsc : nt::file_format::ClockSource::kSteadyNs);
  EXPECT_LE(f.header.start_tsc, before);
  EXPECT_NEAR(static_cast<double>(f.header.start_epoch_ns), static_cast<double>(clock.to_epoch_ns(before)), 1e9);

  ASSERT_EQ(f.points.size(), nt::kPoints.size());
  for (std::size_t i = 0; i < f.points.size(); ++i) {
    EXPECT_EQ(f.points[i].id, static_cast<std::uint16_t>(nt::kPoints[i].point));
    EXPECT_EQ(f.points[i].kind, nt::kPoints[i].kind);
    EXPECT_EQ(f.points[i].name, nt::kPoints[i].name);
  }

  ASSERT_EQ(f.records.size(), 2001u);
  const auto reads = records_with_point(f, nt::Point::ex_tcp_read);
  const auto matches = records_with_point(f, nt::Point::fn_book_match);
  ASSERT_EQ(reads.size(), 1000u);
  ASSERT_EQ(matches.size(), 1000u);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(reads[i].tsc, 5'000 + i);
    EXPECT_EQ(reads[i].key, (7ull << 32) | i);
    EXPECT_EQ(reads[i].aux, 0u);
    EXPECT_EQ(reads[i].cycles, 0u);
    EXPECT_EQ(reads[i].reserved, 0u);
    EXPECT_EQ(matches[i].tsc, 9'000 + i);
    EXPECT_EQ(matches[i].key, i);
    EXPECT_EQ(matches[i].aux, i * 3);
    EXPECT_EQ(matches[i].cycles, i + 1);
  }
  const auto md = records_with_point(f, nt::Point::ex_md_write);
  ASSERT_EQ(md.size(), 1u);
  EXPECT_EQ(md[0].key, 77u);
  EXPECT_EQ(md[0].aux, 88u);
  EXPECT_GE(md[0].tsc, before);

  ASSERT_TRUE(f.trailer.has_value());
  EXPECT_EQ(f.trailer->records, 2001u);
  EXPECT_EQ(f.trailer->dropped, 0u);
  EXPECT_GE(f.trailer->end_tsc, md[0].tsc);
  ASSERT_EQ(f.trailer->recorders.size(), 2u);
  EXPECT_EQ(f.trailer->recorders[0].name, "gateway");
  EXPECT_EQ(f.trailer->recorders[0].records, 1001u);
  EXPECT_EQ(f.trailer->recorders[1].name, "engine");
  EXPECT_EQ(f.trailer->recorders[1].records, 1000u);
}

TEST(TelemetryWriter, ShouldCountDropsWhenARingIsFullAndWriteThemInTheTrailer) {
  TempTelemetryFile file("writer_drops");
  {
    nt::Writer writer(options_for(file));
    nt::Recorder& r = writer.create_recorder("engine");
    // Not started: nothing drains, so the ring fills at exactly its capacity.
    for (std::uint64_t i = 0; i < nt::Recorder::kCapacity; ++i) {
      ASSERT_TRUE(r.record_at(i, nt::Point::ex_engine_in, i, 0, 0)) << i;
    }
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(r.record(nt::Point::ex_engine_in, 999));
    EXPECT_EQ(r.dropped(), 5u);
    EXPECT_EQ(writer.dropped(), 5u);
    EXPECT_EQ(r.pending(), nt::Recorder::kCapacity);
    writer.start();  // records made before start are written too
    writer.stop();
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  ASSERT_EQ(f.records.size(), nt::Recorder::kCapacity);
  for (std::uint64_t i = 0; i < nt::Recorder::kCapacity; ++i) ASSERT_EQ(f.records[i].key, i);
  ASSERT_TRUE(f.trailer.has_value());
  EXPECT_EQ(f.trailer->dropped, 5u);
  ASSERT_EQ(f.trailer->recorders.size(), 1u);
  EXPECT_EQ(f.trailer->recorders[0].dropped, 5u);
  EXPECT_EQ(f.trailer->recorders[0].records, nt::Recorder::kCapacity);
}

TEST(TelemetryWriter, ShouldKeepEveryRecordWhenTheWriterDrainsWhileRecording) {
  TempTelemetryFile file("writer_drain");
  const std::uint64_t total = 4 * nt::Recorder::kCapacity;
  std::uint64_t full = 0;
  {
    nt::Writer writer(options_for(file));
    nt::Recorder& r = writer.create_recorder("main");
    writer.start();
    for (std::uint64_t i = 0; i < total; ++i) {
      while (!r.record_at(i, nt::Point::tr_udp_read, i, 0, 0)) {
        ++full;
        std::this_thread::yield();
      }
    }
    writer.stop();
    EXPECT_EQ(r.dropped(), full);
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  ASSERT_EQ(f.records.size(), total);
  for (std::uint64_t i = 0; i < total; ++i) ASSERT_EQ(f.records[i].key, i);
  ASSERT_TRUE(f.trailer.has_value());
  EXPECT_EQ(f.trailer->dropped, full);
}

// Issue 30: the records are keyed by client and order. Under the usual umask
// 022 the file would be 0644 without the explicit mode; a file left by an
// earlier run is tightened too.
TEST(TelemetryWriter, ShouldCreateItsFileOwnerOnly) {
  const mode_t old_umask = ::umask(022);
  TempTelemetryFile file("writer_mode");
  for (const bool existed : {false, true}) {
    if (existed) {
      ASSERT_EQ(::chmod(file.path().c_str(), 0644), 0);
    }
    {
      nt::Writer writer(options_for(file, "exchange-1"));
      writer.start();
      writer.stop();
    }
    struct stat st {};
    ASSERT_EQ(::stat(file.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "existed " << existed;
  }
  ::umask(old_umask);
}

TEST(TelemetryWriter, ShouldWriteAValidEmptyFileWhenStoppedWithoutStart) {
  TempTelemetryFile file("writer_nostart");
  {
    nt::Writer writer(options_for(file, "trader"));
    static_cast<void>(writer.create_recorder("main"));
    writer.stop();
    writer.stop();  // idempotent
    EXPECT_THROW(writer.start(), std::logic_error);
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  EXPECT_EQ(f.header.process_name, "trader");
  EXPECT_TRUE(f.records.empty());
  ASSERT_TRUE(f.trailer.has_value());
  ASSERT_EQ(f.trailer->recorders.size(), 1u);
  EXPECT_EQ(f.trailer->recorders[0].name, "main");
}

TEST(TelemetryWriter, ShouldFinishTheFileInItsDestructor) {
  TempTelemetryFile file("writer_dtor");
  {
    nt::Writer writer(options_for(file));
    nt::Recorder& r = writer.create_recorder("main");
    writer.start();
    ASSERT_TRUE(r.record(nt::Point::ex_tcp_write, 1, 2));
  }
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_TRUE(f.trailer.has_value());
}

template <class Ex, class Fn>
void expect_error(Fn&& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << fragment << "'";
  } catch (const Ex& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TelemetryWriter, ShouldRejectBadOptionsWithSpecificErrors) {
  TempTelemetryFile file("writer_options");
  expect_error<std::invalid_argument>([] { nt::Writer w(nt::WriterOptions{}); }, "path is empty");
  expect_error<std::invalid_argument>([&] { nt::Writer w(options_for(file, "")); }, "process name is empty");
  expect_error<std::invalid_argument>([&] { nt::Writer w(options_for(file, std::string(64, 'p'))); }, "at most 63");
  expect_error<std::invalid_argument>([&] { nt::Writer w(options_for(file, "bad\tname")); }, "byte 0x09");
  auto slow = options_for(file);
  slow.drain_period = std::chrono::seconds(2);
  expect_error<std::invalid_argument>([&] { nt::Writer w(slow); }, "drain period");
  auto zero = options_for(file);
  zero.drain_period = std::chrono::microseconds(0);
  expect_error<std::invalid_argument>([&] { nt::Writer w(zero); }, "drain period");
  auto missing_dir = options_for(file);
  missing_dir.path = "/nonexistent-nanotick-dir/x.ntt";
  expect_error<std::runtime_error>([&] { nt::Writer w(missing_dir); }, "directory exists");
}

TEST(TelemetryWriter, ShouldRejectBadRecorderNamesAndLateRecorders) {
  TempTelemetryFile file("writer_recorders");
  nt::Writer writer(options_for(file));
  static_cast<void>(writer.create_recorder("engine"));
  expect_error<std::invalid_argument>([&] { writer.create_recorder("engine"); }, "exists already");
  expect_error<std::invalid_argument>([&] { writer.create_recorder(""); }, "recorder name is empty");
  expect_error<std::invalid_argument>([&] { writer.create_recorder(std::string(32, 'r')); }, "at most 31");
  static_cast<void>(writer.create_recorder(std::string(31, 'r')));
  writer.start();
  expect_error<std::logic_error>([&] { writer.create_recorder("late"); }, "after start()");
  expect_error<std::logic_error>([&] { writer.start(); }, "twice");
  writer.stop();
}

TEST(TelemetryWriter, ShouldRecordWithoutAllocating) {
  TempTelemetryFile file("writer_alloc");
  nt::Writer writer(options_for(file));
  nt::Recorder& r = writer.create_recorder("main");
  writer.start();
  ASSERT_TRUE(r.record(nt::Point::ex_tcp_read, 0));  // warm
  {
    const nanotick::test::AllocationScope scope;
    for (std::uint64_t i = 0; i < 1000; ++i) static_cast<void>(r.record(nt::Point::ex_tcp_read, i, i));
    EXPECT_EQ(scope.count(), 0u);
  }
  writer.stop();
}

TEST(TelemetryRecord, ShouldSaturateElapsedTicksInsteadOfWrapping) {
  EXPECT_EQ(nt::saturate_ticks(100, 350), 250u);
  EXPECT_EQ(nt::saturate_ticks(100, 100), 0u);
  EXPECT_EQ(nt::saturate_ticks(200, 100), 0u);  // clock went backwards
  EXPECT_EQ(nt::saturate_ticks(0, 0xFFFF'FFFEull), 0xFFFF'FFFEu);
  EXPECT_EQ(nt::saturate_ticks(0, 0xFFFF'FFFFull), 0xFFFF'FFFFu);
  EXPECT_EQ(nt::saturate_ticks(10, 1ull << 40), 0xFFFF'FFFFu);
}

}  // namespace
