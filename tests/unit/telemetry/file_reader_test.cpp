// Unit tests for the telemetry file reader: a file cut short keeps its whole
// records, and every way a file can break the format is a specific error.
#include "telemetry/file_reader.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "telemetry/file_format.hpp"
#include "telemetry/writer.hpp"
#include "unit/telemetry/temp_file.hpp"

namespace nt = nanotick::telemetry;
namespace ff = nanotick::telemetry::file_format;
using nanotick::test::TempTelemetryFile;

namespace {

// A valid file: one recorder, `n` records with key i at tsc 100 + i.
std::vector<char> valid_file(std::size_t n) {
  TempTelemetryFile file("reader_src");
  {
    nt::WriterOptions o;
    o.path = file.path();
    o.process_name = "exchange";
    nt::Writer w(o);
    nt::Recorder& r = w.create_recorder("main");
    for (std::size_t i = 0; i < n; ++i) EXPECT_TRUE(r.record_at(100 + i, nt::Point::ex_engine_in, i, 0, 0));
    w.start();
    w.stop();
  }
  std::ifstream in(file.path(), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
void poke(std::vector<char>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

std::string read_error(const std::vector<char>& bytes) {
  TempTelemetryFile file("reader_bad");
  write_bytes(file.path(), bytes);
  try {
    static_cast<void>(nt::read_telemetry_file(file.path()));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr std::size_t kRecords = ff::records_offset(nt::kPoints.size());

TEST(TelemetryFileReader, ShouldReadAFileCutShortUpToItsLastWholeRecord) {
  std::vector<char> bytes = valid_file(10);
  bytes.resize(kRecords + 7 * ff::kRecordBytes + 13);  // footer gone, record 8 torn
  TempTelemetryFile file("reader_cut");
  write_bytes(file.path(), bytes);
  const nt::TelemetryFile f = nt::read_telemetry_file(file.path());
  EXPECT_FALSE(f.trailer.has_value());
  ASSERT_EQ(f.records.size(), 7u);
  for (std::uint64_t i = 0; i < 7; ++i) {
    EXPECT_EQ(f.records[i].key, i);
    EXPECT_EQ(f.records[i].tsc, 100 + i);
  }
}

TEST(TelemetryFileReader, ShouldNameWhatIsWrongWithABrokenFile) {
  const std::vector<char> good = valid_file(3);
  {
    auto b = good;
    b.resize(100);
    EXPECT_NE(read_error(b).find("too short for the 128-byte header"), std::string::npos);
  }
  {
    auto b = good;
    b[0] = 'X';
    EXPECT_NE(read_error(b).find("bad magic"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint16_t>(b, 8, 2);
    EXPECT_NE(read_error(b).find("format version 2"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint32_t>(b, 16, 24);
    EXPECT_NE(read_error(b).find("record size 24"), std::string::npos);
  }
  {
    auto b = good;
    poke<double>(b, 24, 0.0);
    EXPECT_NE(read_error(b).find("ticks per ns"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint8_t>(b, 48, 7);
    EXPECT_NE(read_error(b).find("clock source 7"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint8_t>(b, 49, 0);
    EXPECT_NE(read_error(b).find("process name"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint8_t>(b, ff::kHeaderBytes + 2, 9);  // first point's kind
    EXPECT_NE(read_error(b).find("has kind 9"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint16_t>(b, ff::kHeaderBytes + ff::kPointEntryBytes, 1);  // second point's id = first's
    EXPECT_NE(read_error(b).find("appears twice"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint16_t>(b, kRecords + 24, 999);  // first record's point
    EXPECT_NE(read_error(b).find("point id 999"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint64_t>(b, b.size() - 16, kRecords + 1);
    EXPECT_NE(read_error(b).find("does not end a whole record"), std::string::npos);
  }
  {
    auto b = good;
    poke<std::uint64_t>(b, b.size() - 16, std::uint64_t{1} << 40);
    EXPECT_NE(read_error(b).find("outside the file"), std::string::npos);
  }
  {
    auto b = good;
    const std::size_t trailer = kRecords + 3 * ff::kRecordBytes;
    poke<std::uint64_t>(b, trailer + 32, 4);  // total records
    EXPECT_NE(read_error(b).find("differ from the sum"), std::string::npos);
  }
  {
    auto b = good;
    const std::size_t trailer = kRecords + 3 * ff::kRecordBytes;
    poke<std::uint64_t>(b, trailer + 32, 4);
    poke<std::uint64_t>(b, trailer + ff::kTrailerFixedBytes + 32, 4);  // recorder's records
    EXPECT_NE(read_error(b).find("trailer counts 4 records but the file holds 3"), std::string::npos);
  }
  EXPECT_EQ(read_error(good), "(no error)");
  try {
    static_cast<void>(nt::read_telemetry_file("/nonexistent-nanotick-dir/x.ntt"));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

}  // namespace
