// Fuzz target: the journal's staging ring file (src/exchange/sequencing/journal_staging.hpp)
// as start-up reads it back after a kill -9. The file sits in a shared,
// world-visible directory (/dev/shm), so its bytes are not trusted: whatever
// they are, read_staged_records must either refuse with a JournalError or
// return only whole records (length, type, CRC) with consecutive seqs from
// the seq asked for, never more than the ring holds -- and never crash.
// The first input byte chooses whether the header is made valid (magic,
// version, this journal's id, a capacity matching the file's size), so
// that most inputs reach the slot checks; the second and third give the
// seq the files continue at.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_scan.hpp"
#include "exchange/sequencing/journal_staging.hpp"

namespace nx = nanotick::exchange;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kFingerprint = 0x5eed;

struct Dirs {
  std::string journal;
  std::string staging;
  std::uint64_t id = 0;
};

const Dirs& dirs() {
  static const Dirs d = [] {
    const std::string base = std::string(fs::exists("/dev/shm") ? "/dev/shm" : "/tmp") + "/nanotick-fuzz-staging-" +
                             std::to_string(::getpid());
    Dirs out{base + "/journal", base + "/rings", 0};
    fs::remove_all(base);
    fs::create_directories(out.journal);
    fs::create_directories(out.staging);
    ::setenv("NANOTICK_STAGING_DIR", out.staging.c_str(), 1);
    out.id = nx::journal_id(out.journal, true);
    return out;
  }();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Dirs& d = dirs();
  if (size < 3) return 0;
  const bool make_header_valid = (data[0] & 1) != 0;
  const std::uint64_t from_seq = 1 + (static_cast<std::uint64_t>(data[1]) << 8 | data[2]);
  std::vector<unsigned char> bytes(data + 3, data + size);
  if (make_header_valid) {
    std::uint64_t capacity = 1;
    const std::size_t slots =
        bytes.size() > nx::kStagingHeaderBytes ? (bytes.size() - nx::kStagingHeaderBytes) / 64 : 0;
    while (capacity * 2 <= std::max<std::size_t>(slots, 1)) capacity *= 2;
    bytes.resize(nx::kStagingHeaderBytes + capacity * sizeof(nx::JournalRecord));
    std::memcpy(bytes.data(), nx::kStagingMagic, 8);
    const std::uint32_t version = nx::kStagingVersion;
    const std::uint32_t record_size = sizeof(nx::JournalRecord);
    std::memcpy(bytes.data() + 8, &version, 4);
    std::memcpy(bytes.data() + 12, &record_size, 4);
    std::memcpy(bytes.data() + 16, &capacity, 8);
    std::memcpy(bytes.data() + 24, &d.id, 8);
    std::memcpy(bytes.data() + 32, &kFingerprint, 8);
  }
  const std::string ring = nx::staging_ring_path(d.journal);
  {
    std::ofstream f(ring, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    const nx::StagedRecords staged = nx::read_staged_records(d.journal, kFingerprint, from_seq);
    if (!staged.ignored.empty() && !staged.records.empty()) std::abort();  // an ignored ring gave records
    if (staged.records.size() > nx::kStagingRecords * 256) std::abort();  // more than any ring can hold
    std::uint64_t seq = from_seq;
    for (const nx::JournalRecord& r : staged.records) {
      if (r.seq != seq++ || r.length != sizeof(nx::JournalRecord) || r.type != nx::RecordType::kEngineRequest ||
          r.crc != nx::record_crc(r))
        std::abort();  // a record start-up would replay that is not whole or not the next
    }
  } catch (const nx::JournalError&) {
    // Refused: start-up stops and changes nothing.
  }
  return 0;
}
