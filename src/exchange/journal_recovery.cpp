#include "exchange/journal_recovery.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace nanotick::exchange {

namespace {

namespace fs = std::filesystem;

struct SegmentFile {
  std::uint64_t first_seq;
  std::string path;
};

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

std::vector<SegmentFile> list_segments(const std::string& dir) {
  std::vector<SegmentFile> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::uint64_t first = 0;
    if (entry.is_regular_file() && parse_segment_file_name(entry.path().filename().string(), first))
      out.push_back({first, entry.path().string()});
  }
  if (ec) throw JournalError("journal: cannot list " + dir + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first_seq < b.first_seq; });
  return out;
}

// A read-write mapping of one whole segment file.
class MappedSegment {
 public:
  explicit MappedSegment(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw JournalError(sys_error("journal: cannot open " + path));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw JournalError(sys_error("journal: cannot stat " + path));
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ < sizeof(SegmentHeader)) return;  // judged by the caller
    void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) throw JournalError(sys_error("journal: cannot map " + path));
    data_ = static_cast<unsigned char*>(p);
  }
  ~MappedSegment() {
    if (data_ != nullptr) {
      ::msync(data_, size_, MS_SYNC);
      ::munmap(data_, size_);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  MappedSegment(const MappedSegment&) = delete;
  MappedSegment& operator=(const MappedSegment&) = delete;

  std::size_t size() const { return size_; }
  unsigned char* data() const { return data_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::size_t size_ = 0;
  unsigned char* data_ = nullptr;
};

bool all_zero(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

std::string quarantine(const std::string& path) {
  const std::string to = path + ".corrupt-" + std::to_string(std::time(nullptr));
  if (::rename(path.c_str(), to.c_str()) != 0) throw JournalError(sys_error("journal: cannot rename " + path));
  return to;
}

}  // namespace

JournalRecovery recover_journal(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                const std::function<void(const JournalRecord&)>& on_record) {
  JournalRecovery out;
  out.tail.next_seq = after_seq + 1;
  const std::vector<SegmentFile> segments = list_segments(dir);
  std::uint64_t expect = 0;  // next seq; 0 until the first segment sets it
  bool cut = false;
  for (std::size_t si = 0; si < segments.size(); ++si) {
    const SegmentFile& seg = segments[si];
    if (cut) {
      out.quarantined.push_back(quarantine(seg.path));
      continue;
    }
    MappedSegment m(seg.path);
    SegmentHeader h{};
    if (m.size() >= sizeof h) std::memcpy(&h, m.data(), sizeof h);
    const bool header_ok = m.size() >= sizeof h && std::memcmp(h.magic, kJournalMagic, sizeof h.magic) == 0 &&
                           h.version == kJournalVersion && h.record_size == sizeof(JournalRecord) &&
                           h.first_seq == seg.first_seq && (m.size() - sizeof h) % sizeof(JournalRecord) == 0;
    if (!header_ok) {
      if (si == 0)
        throw JournalError("journal: " + seg.path + " is not a nanotick journal segment (bad header)");
      // A later segment whose header never made it to disk: the cut is here.
      out.truncation = seg.path + ": bad segment header";
      out.quarantined.push_back(quarantine(seg.path));
      cut = true;
      continue;
    }
    if (h.fingerprint != fingerprint)
      throw JournalError("journal: " + seg.path + " was written for another instrument table (fingerprint " +
                         std::to_string(h.fingerprint) + ", config " + std::to_string(fingerprint) +
                         "): restore the config it was written with, or move the journal directory away");
    if (expect == 0) {
      if (h.first_seq > after_seq + 1)
        throw JournalError("journal: " + seg.path + " starts at seq " + std::to_string(h.first_seq) +
                           " but the state to continue from ends at " + std::to_string(after_seq) +
                           ": records are missing");
      expect = h.first_seq;
    } else if (h.first_seq != expect) {
      out.truncation = seg.path + ": starts at seq " + std::to_string(h.first_seq) + ", expected " +
                       std::to_string(expect);
      out.quarantined.push_back(quarantine(seg.path));
      cut = true;
      continue;
    }
    ++out.segments;
    std::size_t off = sizeof(SegmentHeader);
    for (; off + sizeof(JournalRecord) <= m.size(); off += sizeof(JournalRecord)) {
      JournalRecord r;
      std::memcpy(&r, m.data() + off, sizeof r);
      if (r.length == 0 && all_zero(m.data() + off, sizeof r)) break;  // clean end of data
      if (r.length != sizeof(JournalRecord) || r.type != RecordType::kEngineRequest || r.crc != record_crc(r) ||
          r.seq != expect) {
        out.truncation = seg.path + " offset " + std::to_string(off) + ": bad record (expected seq " +
                         std::to_string(expect) + ", length " + std::to_string(r.length) + ", stored seq " +
                         std::to_string(r.seq) + (r.crc != record_crc(r) ? ", CRC mismatch" : "") + ")";
        cut = true;
        break;
      }
      ++out.records_scanned;
      if (r.seq > after_seq) {
        on_record(r);
        ++out.records_replayed;
      }
      ++expect;
    }
    // Anything after the end of data is a cut too (a record lost in the middle).
    if (!cut && off < m.size() && !all_zero(m.data() + off, m.size() - off)) {
      out.truncation = seg.path + " offset " + std::to_string(off) + ": data after the end of the records";
      cut = true;
    }
    if (cut && off < m.size()) {
      out.truncated_bytes = m.size() - off;
      std::memset(m.data() + off, 0, m.size() - off);
    }
    out.tail.segment_path = seg.path;
    out.tail.segment_first_seq = seg.first_seq;
    out.tail.offset = off;
    out.tail.next_seq = expect;
  }
  if (expect != 0 && expect <= after_seq)
    throw JournalError("journal in " + dir + " ends at seq " + std::to_string(expect - 1) +
                       " but the state to continue from is at " + std::to_string(after_seq) +
                       ": the journal lost records the snapshot has");
  if (expect == 0) out.tail.next_seq = after_seq + 1;
  return out;
}

}  // namespace nanotick::exchange
