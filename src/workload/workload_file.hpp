// The binary workload file (docs/WORKLOADS.md: header, instrument table,
// fixed-size little-endian request records, CRC-32 trailer). Functions only;
// thread-safe for distinct files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace nanotick::workload {

inline constexpr char kFileMagic[8] = {'N', 'T', 'W', 'O', 'R', 'K', 'L', 'D'};
inline constexpr std::uint32_t kFileVersion = 1;
inline constexpr std::size_t kHeaderSize = 48;
inline constexpr std::size_t kInstrumentRecordSize = 64;
inline constexpr std::size_t kRequestRecordSize = 48;
inline constexpr std::size_t kTrailerSize = 4;
inline constexpr std::size_t kMaxSymbolLength = 16;
inline constexpr std::uint32_t kMaxInstruments = 65536;

// The file image. Throws std::invalid_argument if the workload cannot be
// represented (symbol longer than kMaxSymbolLength, too many instruments).
std::vector<std::uint8_t> encode_workload(const Workload& workload);
// Parses and validates a file image; throws std::runtime_error
// "workload file 'NAME': offset N: problem" on anything malformed.
Workload decode_workload(std::span<const std::uint8_t> bytes, const std::string& name);

// Writes atomically enough for tools (to PATH, then flushed); throws
// std::runtime_error naming the file on I/O failure.
void write_workload(const Workload& workload, const std::string& path);
// Reads and validates; throws std::runtime_error naming the file, the offset
// and the problem.
Workload read_workload(const std::string& path);

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32()).
std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept;

}  // namespace nanotick::workload
