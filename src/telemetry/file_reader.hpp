// Reads and validates a telemetry file (file_format.hpp). Start-up / offline
// code: allocates, and throws std::runtime_error naming the file, the offset
// and what is wrong. Stateless functions, safe from any thread.
//
// The report (tools/report/ntt.py) has its own reader, written from
// docs/TELEMETRY.md; this one serves the C++ tests and any C++ tool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/file_format.hpp"
#include "telemetry/points.hpp"
#include "telemetry/record.hpp"

namespace nanotick::telemetry {

struct FilePoint {
  std::uint16_t id = 0;
  PointKind kind = PointKind::kHop;
  std::string name;
};

struct TelemetryFile {
  file_format::FileHeader header;
  std::vector<FilePoint> points;
  std::vector<Record> records;
  // Absent when the file has no valid footer (the writer did not finish:
  // the process died before Writer::stop()); records are then every whole
  // record present.
  std::optional<file_format::FileTrailer> trailer;
};

// Throws std::runtime_error("telemetry file '<path>': <problem>") when the
// file cannot be read or breaks the format: bad magic, unknown version, a
// layout size that is not this version's, a bad name, a non-positive tick
// rate, a malformed point table, a record naming a point the table lacks, or
// a footer whose trailer is inconsistent with the records.
TelemetryFile read_telemetry_file(const std::string& path);

}  // namespace nanotick::telemetry
