// The telemetry file format (".ntt", version 1): constants, layouts and the
// encoders the Writer uses. docs/TELEMETRY.md is the specification; this file
// and tools/report/ntt.py implement it. Constants and pure functions only, so
// thread-safe.
//
// A file, all integers little-endian:
//
//   header        128 bytes at offset 0 (FileHeader below)
//   point table   point_count entries of 32 bytes: the catalogue of the
//                 writing build, so the file is self-describing
//   records       32-byte Records (record.hpp), from the record section's
//                 start up to the trailer
//   trailer       written by Writer::stop(): end time, totals, and per
//                 recorder its name, records written and records dropped
//   footer        the last 16 bytes: trailer offset + "NTTEND01"
//
// A file without a valid footer was cut short (the process died before
// stop()): its header, point table and every whole record are still
// readable, and readers say that the trailer (and so the drop counts) is
// missing.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/points.hpp"
#include "telemetry/record.hpp"

namespace nanotick::telemetry::file_format {

static_assert(std::endian::native == std::endian::little,
              "telemetry files are little-endian and records are written as they lie in memory");

inline constexpr std::array<char, 8> kMagic = {'N', 'T', 'T', 'E', 'L', 'E', 'M', '1'};
inline constexpr std::array<char, 8> kTrailerMagic = {'N', 'T', 'T', 'T', 'R', 'A', 'I', 'L'};
inline constexpr std::array<char, 8> kFooterMagic = {'N', 'T', 'T', 'E', 'N', 'D', '0', '1'};
inline constexpr std::uint16_t kVersion = 1;

inline constexpr std::size_t kHeaderBytes = 128;
inline constexpr std::size_t kPointEntryBytes = 32;
inline constexpr std::size_t kRecordBytes = sizeof(Record);
inline constexpr std::size_t kTrailerFixedBytes = 48;
inline constexpr std::size_t kRecorderEntryBytes = 48;
inline constexpr std::size_t kFooterBytes = 16;
inline constexpr std::size_t kMaxProcessNameBytes = 63;  // NUL-padded in 64 bytes
inline constexpr std::size_t kMaxRecorderNameBytes = 31;  // NUL-padded in 32 bytes
inline constexpr std::size_t kProcessNameOffset = 64;

// How Record::tsc values were read (header byte 48).
enum class ClockSource : std::uint8_t {
  kSteadyNs = 0,  // steady-clock nanoseconds (no invariant TSC): ticks_per_ns is 1
  kTsc = 1,       // the invariant TSC, shared by every process on the host
};

// Header fields (offsets in docs/TELEMETRY.md and encode_header()).
struct FileHeader {
  std::uint16_t version = kVersion;
  std::uint16_t point_count = 0;
  std::uint32_t pid = 0;
  double ticks_per_ns = 0;           // the calibrated TscClock's rate
  std::uint64_t start_tsc = 0;       // clock reading when the writer started
  std::int64_t start_epoch_ns = 0;   // the same instant, ns since the Unix epoch
  ClockSource clock_source = ClockSource::kTsc;
  std::string process_name;          // 1..63 printable ASCII bytes
};

struct RecorderTotals {
  std::string name;  // 1..31 printable ASCII bytes
  std::uint64_t records = 0;
  std::uint64_t dropped = 0;
};

struct FileTrailer {
  std::uint64_t end_tsc = 0;
  std::int64_t end_epoch_ns = 0;
  std::uint64_t records = 0;  // sum over recorders
  std::uint64_t dropped = 0;  // sum over recorders
  std::vector<RecorderTotals> recorders;
};

// Offset of the first record for a file with `point_count` table entries.
constexpr std::size_t records_offset(std::size_t point_count) noexcept {
  return kHeaderBytes + point_count * kPointEntryBytes;
}

// Header followed by the point table of this build's catalogue (kPoints);
// header.point_count is ignored and written as kPoints.size().
std::vector<std::byte> encode_header_and_points(const FileHeader& header);

// Trailer followed by the footer, for a trailer starting at `trailer_offset`.
std::vector<std::byte> encode_trailer_and_footer(const FileTrailer& trailer, std::uint64_t trailer_offset);

}  // namespace nanotick::telemetry::file_format
