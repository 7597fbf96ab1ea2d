// Fuzz target: a journal directory holding one segment file with the input's
// bytes (and, when the input is long enough, a second one from its tail), as
// start-up recovery and `nanotick journal verify` read it. The scan must
// classify anything (clean, torn tail, corrupt) without crashing; recovery
// must either refuse with a JournalError having changed no byte of the
// directory, or recover a journal that then scans clean (the cut it made
// left nothing behind).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_recovery.hpp"
#include "exchange/sequencing/journal_scan.hpp"

namespace nx = nanotick::exchange;
namespace fs = std::filesystem;

namespace {

const std::string& work_dir() {
  static const std::string dir = [] {
    const char* shm = fs::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    return std::string(shm) + "/nanotick-fuzz-journal-" + std::to_string(::getpid());
  }();
  return dir;
}

// Every file's name and bytes: what "changed nothing" compares.
std::string directory_bytes(const std::string& dir) {
  std::string out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    out += e.path().filename().string() + '\0' + std::string(std::istreambuf_iterator<char>(f), {}) + '\0';
  }
  return out;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& dir = work_dir();
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The first segment's header names seq 1 when the input's does: split the
  // input at a record boundary into two segments so the cross-segment rules run too.
  std::size_t first = size;
  std::uint64_t second_seq = 0;
  if (size > 256) {
    first = 64 + ((size - 64) / 2) / 64 * 64;
    nx::SegmentHeader h{};
    std::memcpy(&h, data + first, std::min(sizeof h, size - first));
    second_seq = h.first_seq;
  }
  write_file(dir + "/" + nx::segment_file_name(1), data, first);
  if (first < size && second_seq > 1)
    write_file(dir + "/" + nx::segment_file_name(second_seq), data + first, size - first);

  constexpr std::uint64_t kFingerprint = 0x5eed;
  const nx::JournalScan scan = nx::scan_journal(dir, kFingerprint);
  const std::string before = directory_bytes(dir);
  try {
    std::uint64_t replayed = 0;
    const nx::JournalRecovery rec =
        nx::recover_journal(dir, kFingerprint, 0, [&](const nx::JournalRecord&) { ++replayed; });
    if (replayed != scan.good_records) std::abort();  // recovery replayed what the scan did not call good
    const nx::JournalScan after = nx::scan_journal(dir, kFingerprint);
    if (after.has_break || after.good_records != scan.good_records) std::abort();  // the cut left damage behind
    (void)rec;
  } catch (const nx::JournalError&) {
    if (directory_bytes(dir) != before) std::abort();  // a refused start changed the journal
    if (scan.damage == nx::JournalDamage::kTornTail && scan.fingerprint_mismatch.empty() && scan.first_seq <= 1)
      std::abort();  // a torn tail must be recoverable
  }
  return 0;
}
