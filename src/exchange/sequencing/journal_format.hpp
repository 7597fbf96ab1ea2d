// On-disk layout of the journal (docs/EXCHANGE.md "Journal"): segment files of
// fixed-size 64-byte records, each a sequenced engine Request with its
// CRC-32C. Shared by the writer and the recovery scan. Plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/crc32c.hpp"
#include "engine/request.hpp"

namespace nanotick::exchange {

inline constexpr char kJournalMagic[8] = {'N', 'T', 'J', 'R', 'N', 'L', '0', '1'};
inline constexpr std::uint32_t kJournalVersion = 1;

struct SegmentHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t record_size;
  std::uint64_t first_seq;    // seq of the segment's first record
  std::uint64_t fingerprint;  // ExchangeConfig::engine_fingerprint() of the writer
  // The file's size as made (preallocated whole before the header is
  // written): a file shorter than this was cut by something other than the
  // writer, and records may be missing from it. 0 in segments written before
  // the field existed (their size is unknown).
  std::uint64_t segment_bytes;
  std::uint8_t reserved[24];
};
static_assert(sizeof(SegmentHeader) == 64 && std::is_trivially_copyable_v<SegmentHeader>);

enum class RecordType : std::uint8_t { kEngineRequest = 1 };

struct JournalRecord {
  std::uint16_t length;  // 64; 0 = end of data (the preallocated file is zeros)
  RecordType type;
  std::uint8_t reserved;
  std::uint32_t crc;     // CRC-32C of the record with this field taken as absent
  std::uint64_t seq;     // from 1, +1 per record, = the engine's request_seq
  engine::Request request;
};
static_assert(sizeof(JournalRecord) == 64 && offsetof(JournalRecord, crc) == 4 && offsetof(JournalRecord, seq) == 8 &&
              offsetof(JournalRecord, request) == 16 && std::is_trivially_copyable_v<JournalRecord>);

// CRC over bytes [0, 4) and [8, 64): everything but the crc field itself.
inline std::uint32_t record_crc(const JournalRecord& r) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(&r);
  return core::crc32c(core::crc32c(0, p, 4), p + 8, sizeof(JournalRecord) - 8);
}

// "<prefix><20 decimal digits><suffix>" -> the number; false for any other
// name. The journal's segments and the engine snapshots are named this way.
inline bool parse_numbered_name(std::string_view name, std::string_view prefix, std::string_view suffix,
                                std::uint64_t& number) noexcept {
  if (name.size() != prefix.size() + 20 + suffix.size() || name.substr(0, prefix.size()) != prefix ||
      name.substr(name.size() - suffix.size()) != suffix)
    return false;
  number = 0;
  for (const char c : name.substr(prefix.size(), 20)) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

inline bool parse_segment_file_name(std::string_view name, std::uint64_t& first_seq) noexcept {
  return parse_numbered_name(name, "journal-", ".log", first_seq);
}

// A segment is made under this name (segment_file_name + ".tmp") and renamed
// once its size and header are durable, so a file with a segment's own name
// always had its whole size and its header: a leftover .tmp is a creation a
// crash interrupted (ignored by the scan, replaced by the next creation).
inline constexpr std::string_view kSegmentTempSuffix = ".tmp";

inline std::string segment_file_name(std::uint64_t first_seq) {
  char name[64];
  std::snprintf(name, sizeof name, "journal-%020llu.log", static_cast<unsigned long long>(first_seq));
  return name;
}

}  // namespace nanotick::exchange
