#include "exchange/sequencing/journal_scan.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace nanotick::exchange {

namespace {

namespace fs = std::filesystem;

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// A read-only mapping of one whole file (empty files map nothing).
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw JournalError(sys_error("journal: cannot open " + path));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw JournalError(sys_error("journal: cannot stat " + path));
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) throw JournalError(sys_error("journal: cannot map " + path));
    data_ = static_cast<const unsigned char*>(p);
  }
  ~ReadOnlyFile() {
    if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  std::size_t size() const { return size_; }
  const unsigned char* data() const { return data_; }

 private:
  int fd_ = -1;
  std::size_t size_ = 0;
  const unsigned char* data_ = nullptr;
};

bool all_zero(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

struct NamedSegment {
  std::uint64_t first_seq;
  std::string path;
};

std::vector<NamedSegment> list_segments(const std::string& dir) {
  std::vector<NamedSegment> out;
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

std::string header_problem(const SegmentHeader& h, std::uint64_t name_seq) {
  if (std::memcmp(h.magic, kJournalMagic, sizeof h.magic) != 0) return "not a nanotick journal segment (bad magic)";
  if (h.version != kJournalVersion) return "unsupported segment version " + std::to_string(h.version);
  if (h.record_size != sizeof(JournalRecord))
    return "record size " + std::to_string(h.record_size) + " in the header, expected 64";
  if (h.first_seq != name_seq)
    return "header says first seq " + std::to_string(h.first_seq) + ", the file name " + std::to_string(name_seq);
  return "";
}

std::string record_problem(const JournalRecord& r, std::uint64_t expect) {
  if (r.length != sizeof(JournalRecord)) return "bad record length " + std::to_string(r.length);
  if (r.type != RecordType::kEngineRequest) return "unknown record type " + std::to_string(unsigned(r.type));
  if (r.crc != record_crc(r)) return "CRC mismatch (stored seq " + std::to_string(r.seq) + ")";
  return "record passes its CRC but holds seq " + std::to_string(r.seq) + ", expected " + std::to_string(expect);
}

}  // namespace

const char* to_string(JournalDamage d) noexcept {
  switch (d) {
    case JournalDamage::kNone: return "clean";
    case JournalDamage::kTornTail: return "torn tail";
    case JournalDamage::kCorrupt: return "corrupt";
  }
  return "?";
}

std::string JournalScan::describe_break() const {
  if (!has_break) return "";
  const JournalSegmentInfo& s = segments[first_break.segment];
  std::string out = s.path;
  if (first_break.offset != 0) out += " offset " + std::to_string(first_break.offset);
  out += " (seq " + std::to_string(first_break.expected_seq) + " expected): " + first_break.what;
  if (loss_proven && proof != first_break.what) out += "; and " + proof;
  if (valid_after_break == 0) {
    out += "; nothing after it passes its CRC";
  } else {
    out += "; " + std::to_string(valid_after_break) + " record(s) after it pass their CRC (seq " +
           std::to_string(valid_after_min_seq) + ".." + std::to_string(valid_after_max_seq) + ")";
  }
  return out;
}

JournalScan scan_journal(const std::string& dir, std::uint64_t fingerprint, const SlotVisitor& visit) {
  JournalScan out;
  out.dir = dir;
  const std::vector<NamedSegment> named = list_segments(dir);
  out.segments.reserve(named.size());
  std::uint64_t expect = 0;  // next seq of the good run; 0 until a good header sets it
  bool foreign_header = false;
  // `proven`: records were written where the break is (see the header's "corrupt").
  auto set_break = [&](std::size_t si, std::uint64_t off, std::string what, bool proven = false) {
    if (proven && !out.loss_proven) {
      out.loss_proven = true;
      out.proof = what;
    }
    if (out.has_break) return;
    out.has_break = true;
    out.first_break = JournalBreak{si, off, expect, std::move(what)};
  };
  auto after_break = [&](const JournalSegmentInfo& info, std::uint64_t off, const JournalRecord& r) {
    const bool valid = record_passes_crc(r);
    if (valid) {
      if (out.valid_after_break == 0 || r.seq < out.valid_after_min_seq) out.valid_after_min_seq = r.seq;
      if (out.valid_after_break == 0 || r.seq > out.valid_after_max_seq) out.valid_after_max_seq = r.seq;
      ++out.valid_after_break;
    }
    if (visit) visit(info, off, r, valid ? SlotStatus::kAfterBreak : SlotStatus::kBad);
  };

  for (std::size_t si = 0; si < named.size(); ++si) {
    out.segments.push_back({});
    JournalSegmentInfo& info = out.segments.back();
    info.path = named[si].path;
    info.name_seq = named[si].first_seq;
    const ReadOnlyFile file(info.path);
    const std::size_t size = file.size();
    const unsigned char* data = file.data();
    info.file_bytes = size;
    info.end_offset = sizeof(SegmentHeader);
    SegmentHeader h{};
    if (size < sizeof h) {
      info.header_zero = data == nullptr || all_zero(data, size);
      info.header_problem = "shorter than a segment header (" + std::to_string(size) + " bytes)";
      info.end_offset = 0;
    } else {
      std::memcpy(&h, data, sizeof h);
      if (all_zero(data, sizeof h)) {
        info.header_zero = true;
        info.header_problem = "the header is zeros (the segment's creation did not finish)";
      } else {
        info.header_problem = header_problem(h, info.name_seq);
      }
    }
    if (!info.header_problem.empty()) {
      if (!info.header_zero) foreign_header = true;
      set_break(si, 0,
                info.header_zero ? info.header_problem +
                                       ": a file with a segment's name had its header once (segments are renamed "
                                       "to it only after), so it was cut or overwritten"
                                 : info.header_problem,
                info.header_zero);
    } else {
      info.fingerprint = h.fingerprint;
      info.made_bytes = h.segment_bytes;
      if (fingerprint != 0 && h.fingerprint != fingerprint) out.fingerprint_mismatch.push_back(si);
      if (expect == 0) {
        expect = h.first_seq;
        out.first_seq = h.first_seq;
      } else if (!out.has_break && h.first_seq != expect) {
        set_break(si, 0,
                  "the segment starts at seq " + std::to_string(h.first_seq) + ", expected " + std::to_string(expect) +
                      " (records missing between segments: a segment is started only when the one before is full)",
                  true);
      }
    }
    if (size < sizeof h) continue;
    bool ended = false;  // a zero slot ended the good run in this segment
    const bool in_run = info.header_problem.empty();
    std::size_t off = sizeof(SegmentHeader);
    for (; off + sizeof(JournalRecord) <= size; off += sizeof(JournalRecord)) {
      if (all_zero(data + off, sizeof(JournalRecord))) {
        if (!out.has_break) ended = true;
        continue;
      }
      JournalRecord r;
      std::memcpy(&r, data + off, sizeof r);
      if (out.has_break || !in_run) {
        after_break(info, off, r);
        continue;
      }
      if (ended) {
        set_break(si, off, "data after the end of the records");
        after_break(info, off, r);
        continue;
      }
      if (record_passes_crc(r) && r.seq == expect) {
        if (info.good_records++ == 0) info.first_seq = r.seq;
        info.last_seq = r.seq;
        info.end_offset = off + sizeof r;
        ++out.good_records;
        ++expect;
        if (visit) visit(info, off, r, SlotStatus::kGood);
        continue;
      }
      set_break(si, off, record_problem(r, expect));
      after_break(info, off, r);
    }
    if (in_run && info.made_bytes != 0 && size < info.made_bytes) {
      info.cut_short = true;
      set_break(si, info.end_offset,
                "the file is " + std::to_string(size) + " bytes but the segment was made with " +
                    std::to_string(info.made_bytes) + ": it was cut short (the writer preallocates every segment " +
                    "whole), and records written after seq " + std::to_string(expect - 1) + " may be missing",
                true);
    }
    if (off < size && !all_zero(data + off, size - off) && !out.has_break)
      set_break(si, off,
                "a partial record of " + std::to_string(size - off) +
                    " bytes at the end of the file (the segment was cut short)");
  }
  out.next_seq = expect;
  if (out.has_break)
    out.damage = foreign_header || out.loss_proven || out.valid_after_break != 0 ? JournalDamage::kCorrupt
                                                                                 : JournalDamage::kTornTail;
  return out;
}

}  // namespace nanotick::exchange
