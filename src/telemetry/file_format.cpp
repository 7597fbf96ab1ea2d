// Encoders of the telemetry file's header, point table, trailer and footer
// (layouts in file_format.hpp and docs/TELEMETRY.md).
#include "telemetry/file_format.hpp"

#include <cstring>
#include <type_traits>

namespace nanotick::telemetry::file_format {

namespace {

// Little-endian field writer into a zero-filled buffer (hosts are
// little-endian: asserted in the header, so memcpy writes the file order).
class Encoder {
 public:
  explicit Encoder(std::vector<std::byte>& out) : out_(out) {}

  template <class T>
    requires std::is_arithmetic_v<T>
  void put(std::size_t offset, T value) {
    std::memcpy(out_.data() + offset, &value, sizeof value);
  }
  void put_bytes(std::size_t offset, const void* data, std::size_t size) {
    std::memcpy(out_.data() + offset, data, size);
  }
  void put_text(std::size_t offset, std::string_view text) {
    put_bytes(offset, text.data(), text.size());  // the rest stays NUL
  }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace

std::vector<std::byte> encode_header_and_points(const FileHeader& header) {
  std::vector<std::byte> out(records_offset(kPoints.size()), std::byte{0});
  Encoder e(out);
  e.put_bytes(0, kMagic.data(), kMagic.size());
  e.put<std::uint16_t>(8, header.version);
  e.put<std::uint16_t>(10, static_cast<std::uint16_t>(kHeaderBytes));
  e.put<std::uint16_t>(12, static_cast<std::uint16_t>(kPointEntryBytes));
  e.put<std::uint16_t>(14, static_cast<std::uint16_t>(kPoints.size()));
  e.put<std::uint32_t>(16, static_cast<std::uint32_t>(kRecordBytes));
  e.put<std::uint32_t>(20, header.pid);
  e.put<double>(24, header.ticks_per_ns);
  e.put<std::uint64_t>(32, header.start_tsc);
  e.put<std::int64_t>(40, header.start_epoch_ns);
  e.put<std::uint8_t>(48, static_cast<std::uint8_t>(header.clock_source));
  e.put<std::uint8_t>(49, static_cast<std::uint8_t>(header.process_name.size()));
  e.put_text(kProcessNameOffset, header.process_name);
  for (std::size_t i = 0; i < kPoints.size(); ++i) {
    const std::size_t at = kHeaderBytes + i * kPointEntryBytes;
    e.put<std::uint16_t>(at, static_cast<std::uint16_t>(kPoints[i].point));
    e.put<std::uint8_t>(at + 2, static_cast<std::uint8_t>(kPoints[i].kind));
    e.put<std::uint8_t>(at + 3, static_cast<std::uint8_t>(kPoints[i].name.size()));
    e.put_text(at + 4, kPoints[i].name);
  }
  return out;
}

std::vector<std::byte> encode_trailer_and_footer(const FileTrailer& trailer, std::uint64_t trailer_offset) {
  const std::size_t body = kTrailerFixedBytes + trailer.recorders.size() * kRecorderEntryBytes;
  std::vector<std::byte> out(body + kFooterBytes, std::byte{0});
  Encoder e(out);
  e.put_bytes(0, kTrailerMagic.data(), kTrailerMagic.size());
  e.put<std::uint32_t>(8, static_cast<std::uint32_t>(trailer.recorders.size()));
  e.put<std::uint32_t>(12, static_cast<std::uint32_t>(kRecorderEntryBytes));
  e.put<std::uint64_t>(16, trailer.end_tsc);
  e.put<std::int64_t>(24, trailer.end_epoch_ns);
  e.put<std::uint64_t>(32, trailer.records);
  e.put<std::uint64_t>(40, trailer.dropped);
  for (std::size_t i = 0; i < trailer.recorders.size(); ++i) {
    const std::size_t at = kTrailerFixedBytes + i * kRecorderEntryBytes;
    e.put_text(at, trailer.recorders[i].name);
    e.put<std::uint64_t>(at + 32, trailer.recorders[i].records);
    e.put<std::uint64_t>(at + 40, trailer.recorders[i].dropped);
  }
  e.put<std::uint64_t>(body, trailer_offset);
  e.put_bytes(body + 8, kFooterMagic.data(), kFooterMagic.size());
  return out;
}

}  // namespace nanotick::telemetry::file_format
