// Telemetry file reader and validator (see file_reader.hpp).
#include "telemetry/file_reader.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace nanotick::telemetry {

namespace {

namespace ff = file_format;

class Parser {
 public:
  Parser(const std::string& path, std::vector<char> bytes) : path_(path), bytes_(std::move(bytes)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw std::runtime_error("telemetry file '" + path_ + "': " + problem);
  }

  std::size_t size() const { return bytes_.size(); }

  template <class T>
  T get(std::size_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof value);
    return value;
  }
  bool magic_at(std::size_t offset, const std::array<char, 8>& magic) const {
    return std::memcmp(bytes_.data() + offset, magic.data(), magic.size()) == 0;
  }
  // A NUL-padded name field: `len` bytes of printable ASCII, NUL after them.
  std::string name_at(std::size_t offset, std::size_t len, std::size_t field, const char* what) const {
    if (len == 0 || len > field) {
      fail(std::string(what) + " at offset " + std::to_string(offset) + " has length " + std::to_string(len) +
           " (must be 1.." + std::to_string(field) + ")");
    }
    std::string name(bytes_.data() + offset, len);
    for (const char c : name) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u > 0x7e)
        fail(std::string(what) + " at offset " + std::to_string(offset) + " is not printable ASCII");
    }
    for (std::size_t i = len; i < field; ++i) {
      if (bytes_[offset + i] != 0)
        fail(std::string(what) + " at offset " + std::to_string(offset) + " is not NUL-padded");
    }
    return name;
  }
  // A NUL-terminated name field (the trailer's recorder names carry no length).
  std::string padded_name_at(std::size_t offset, std::size_t field, const char* what) const {
    std::size_t len = 0;
    while (len < field && bytes_[offset + len] != 0) ++len;
    if (len == field) fail(std::string(what) + " at offset " + std::to_string(offset) + " is not NUL-terminated");
    return name_at(offset, len, field, what);
  }

 private:
  const std::string& path_;
  std::vector<char> bytes_;
};

std::vector<char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("telemetry file '" + path + "': cannot open it for reading");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("telemetry file '" + path + "': read error");
  return bytes;
}

ff::FileHeader parse_header(const Parser& p) {
  if (p.size() < ff::kHeaderBytes) {
    p.fail("only " + std::to_string(p.size()) + " bytes: too short for the 128-byte header");
  }
  if (!p.magic_at(0, ff::kMagic)) p.fail("bad magic (expected \"NTTELEM1\"): not a telemetry file");
  ff::FileHeader h;
  h.version = p.get<std::uint16_t>(8);
  if (h.version != ff::kVersion) {
    p.fail("format version " + std::to_string(h.version) + "; this reader knows version 1");
  }
  const auto header_bytes = p.get<std::uint16_t>(10);
  const auto entry_bytes = p.get<std::uint16_t>(12);
  const auto record_bytes = p.get<std::uint32_t>(16);
  if (header_bytes != ff::kHeaderBytes) p.fail("header size " + std::to_string(header_bytes) + " (version 1 has 128)");
  if (entry_bytes != ff::kPointEntryBytes)
    p.fail("point entry size " + std::to_string(entry_bytes) + " (version 1 has 32)");
  if (record_bytes != ff::kRecordBytes) p.fail("record size " + std::to_string(record_bytes) + " (version 1 has 32)");
  h.point_count = p.get<std::uint16_t>(14);
  h.pid = p.get<std::uint32_t>(20);
  h.ticks_per_ns = p.get<double>(24);
  if (!std::isfinite(h.ticks_per_ns) || h.ticks_per_ns <= 0) {
    p.fail("ticks per ns is " + std::to_string(h.ticks_per_ns) + " (must be a positive number)");
  }
  h.start_tsc = p.get<std::uint64_t>(32);
  h.start_epoch_ns = p.get<std::int64_t>(40);
  const auto source = p.get<std::uint8_t>(48);
  if (source > 1) p.fail("clock source " + std::to_string(source) + " (0 = steady ns, 1 = TSC)");
  h.clock_source = static_cast<ff::ClockSource>(source);
  h.process_name = p.name_at(ff::kProcessNameOffset, p.get<std::uint8_t>(49), ff::kMaxProcessNameBytes, "process name");
  return h;
}

std::vector<FilePoint> parse_points(const Parser& p, std::size_t count) {
  if (p.size() < ff::records_offset(count)) {
    p.fail("the header announces " + std::to_string(count) + " points but the file ends inside the point table");
  }
  std::vector<FilePoint> points;
  std::unordered_set<std::uint16_t> ids;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = ff::kHeaderBytes + i * ff::kPointEntryBytes;
    FilePoint fp;
    fp.id = p.get<std::uint16_t>(at);
    const auto kind = p.get<std::uint8_t>(at + 2);
    if (kind != static_cast<std::uint8_t>(PointKind::kHop) && kind != static_cast<std::uint8_t>(PointKind::kTimer)) {
      p.fail("point table entry " + std::to_string(i) + " has kind " + std::to_string(kind) + " (1 = hop, 2 = timer)");
    }
    fp.kind = static_cast<PointKind>(kind);
    fp.name = p.name_at(at + 4, p.get<std::uint8_t>(at + 3), kMaxPointNameBytes, "point name");
    if (!ids.insert(fp.id).second) p.fail("point id " + std::to_string(fp.id) + " appears twice in the point table");
    points.push_back(std::move(fp));
  }
  return points;
}

// The trailer, when the file ends with a valid footer; nullopt when it has
// none (cut short). A footer that is present but wrong is an error.
std::optional<ff::FileTrailer> parse_trailer(const Parser& p, std::size_t records_start, std::size_t& records_end) {
  records_end = p.size();
  if (p.size() < records_start + ff::kFooterBytes || !p.magic_at(p.size() - 8, ff::kFooterMagic)) {
    return std::nullopt;
  }
  const auto offset = p.get<std::uint64_t>(p.size() - ff::kFooterBytes);
  if (offset < records_start || offset + ff::kTrailerFixedBytes + ff::kFooterBytes > p.size()) {
    p.fail("footer points to a trailer at offset " + std::to_string(offset) + ", outside the file");
  }
  if ((offset - records_start) % ff::kRecordBytes != 0) {
    p.fail("trailer offset " + std::to_string(offset) + " does not end a whole record");
  }
  if (!p.magic_at(offset, ff::kTrailerMagic)) p.fail("no \"NTTTRAIL\" at the trailer offset " + std::to_string(offset));
  const auto count = p.get<std::uint32_t>(offset + 8);
  const auto entry_bytes = p.get<std::uint32_t>(offset + 12);
  if (entry_bytes != ff::kRecorderEntryBytes)
    p.fail("recorder entry size " + std::to_string(entry_bytes) + " (version 1 has 48)");
  if (offset + ff::kTrailerFixedBytes + std::uint64_t{count} * ff::kRecorderEntryBytes + ff::kFooterBytes != p.size()) {
    p.fail("trailer of " + std::to_string(count) + " recorders does not end where the footer starts");
  }
  ff::FileTrailer t;
  t.end_tsc = p.get<std::uint64_t>(offset + 16);
  t.end_epoch_ns = p.get<std::int64_t>(offset + 24);
  t.records = p.get<std::uint64_t>(offset + 32);
  t.dropped = p.get<std::uint64_t>(offset + 40);
  std::uint64_t records = 0, dropped = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = offset + ff::kTrailerFixedBytes + std::size_t{i} * ff::kRecorderEntryBytes;
    ff::RecorderTotals r;
    r.name = p.padded_name_at(at, ff::kMaxRecorderNameBytes + 1, "recorder name");
    r.records = p.get<std::uint64_t>(at + 32);
    r.dropped = p.get<std::uint64_t>(at + 40);
    records += r.records;
    dropped += r.dropped;
    t.recorders.push_back(std::move(r));
  }
  if (records != t.records || dropped != t.dropped) {
    p.fail("trailer totals (" + std::to_string(t.records) + " records, " + std::to_string(t.dropped) +
           " dropped) differ from the sum of its recorders (" + std::to_string(records) + ", " +
           std::to_string(dropped) + ")");
  }
  const std::uint64_t in_file = (offset - records_start) / ff::kRecordBytes;
  if (in_file != t.records) {
    p.fail("trailer counts " + std::to_string(t.records) + " records but the file holds " + std::to_string(in_file));
  }
  records_end = offset;
  return t;
}

}  // namespace

TelemetryFile read_telemetry_file(const std::string& path) {
  const Parser p(path, slurp(path));
  TelemetryFile file;
  file.header = parse_header(p);
  file.points = parse_points(p, file.header.point_count);
  const std::size_t start = ff::records_offset(file.header.point_count);
  std::size_t end = start;
  file.trailer = parse_trailer(p, start, end);
  std::unordered_set<std::uint16_t> known;
  for (const FilePoint& fp : file.points) known.insert(fp.id);
  const std::size_t n = (end - start) / ff::kRecordBytes;  // a cut file: whole records only
  file.records.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    file.records[i] = p.get<Record>(start + i * ff::kRecordBytes);
    if (known.count(file.records[i].point) == 0) {
      p.fail("record " + std::to_string(i) + " names point id " + std::to_string(file.records[i].point) +
             ", which the file's point table lacks");
    }
  }
  return file;
}

}  // namespace nanotick::telemetry
