#include "exchange/sequencing/journal_recovery.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "exchange/sequencing/journal_staging.hpp"

namespace nanotick::exchange {

namespace {

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

JournalError other_table(const JournalSegmentInfo& seg, std::uint64_t fingerprint) {
  return JournalError("journal: " + seg.path + " was written for another instrument table (fingerprint " +
                      std::to_string(seg.fingerprint) + ", config " + std::to_string(fingerprint) +
                      "): restore the config it was written with, or move the journal directory away");
}

JournalError records_missing(const std::string& path, std::uint64_t first_seq, std::uint64_t after_seq) {
  return JournalError("journal: " + path + " starts at seq " + std::to_string(first_seq) +
                      " but the state to continue from ends at " + std::to_string(after_seq) + ": records are missing");
}

}  // namespace

std::uint64_t cut_segment_after(const std::string& path, std::uint64_t from, std::uint64_t made_bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw JournalError(sys_error("journal: cannot open " + path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw JournalError(sys_error("journal: cannot stat " + path));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t whole =
      size < sizeof(SegmentHeader) ? size : size - (size - sizeof(SegmentHeader)) % sizeof(JournalRecord);
  std::uint64_t cut = 0;
  if (from < whole) {
    void* p = ::mmap(nullptr, whole, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw JournalError(sys_error("journal: cannot map " + path));
    }
    std::memset(static_cast<unsigned char*>(p) + from, 0, whole - from);
    ::msync(p, whole, MS_SYNC);
    ::munmap(p, whole);
    cut += whole - from;
  }
  if (whole < size) {
    if (::ftruncate(fd, static_cast<off_t>(whole)) != 0) {
      ::close(fd);
      throw JournalError(sys_error("journal: cannot cut the partial record off " + path));
    }
    cut += size - whole;
  }
  if (made_bytes > whole) {
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(made_bytes)); err != 0) {
      ::close(fd);
      errno = err;
      throw JournalError(
          sys_error("journal: cannot extend " + path + " back to " + std::to_string(made_bytes) + " bytes"));
    }
  }
  ::fdatasync(fd);
  ::close(fd);
  return cut;
}

std::string quarantine_segment(const std::string& path) {
  const std::string to = path + ".corrupt-" + std::to_string(std::time(nullptr));
  if (::rename(path.c_str(), to.c_str()) != 0) throw JournalError(sys_error("journal: cannot rename " + path));
  return to;
}

std::string corrupt_journal_message(const JournalScan& scan) {
  return "journal in " + scan.dir + " is damaged where acknowledged requests may be: " + scan.describe_break() +
         ". The exchange will not start on it and has changed nothing. See `./nanotick journal verify " + scan.dir +
         "` and `./nanotick journal dump " + scan.dir + "`; `./nanotick journal repair " + scan.dir +
         "` cuts the journal at the damage after keeping a copy of everything it removes";
}

JournalRecovery plan_journal_recovery(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                      const std::function<void(const JournalRecord&)>& on_record) {
  JournalRecovery out;
  const JournalScan scan = scan_journal(
      dir, fingerprint, [&](const JournalSegmentInfo& seg, std::uint64_t, const JournalRecord& r, SlotStatus st) {
        if (st != SlotStatus::kGood) return;
        // Checked before the first record reaches the engine.
        if (seg.fingerprint != fingerprint) throw other_table(seg, fingerprint);
        if (out.records_scanned == 0 && r.seq > after_seq + 1) throw records_missing(seg.path, r.seq, after_seq);
        ++out.records_scanned;
        if (r.seq > after_seq) {
          if (on_record) on_record(r);
          ++out.records_replayed;
        }
      });
  if (!scan.fingerprint_mismatch.empty()) throw other_table(scan.segments[scan.fingerprint_mismatch[0]], fingerprint);
  if (scan.damage == JournalDamage::kCorrupt) throw JournalError(corrupt_journal_message(scan));
  if (scan.first_seq > after_seq + 1 && scan.good_records == 0 && !scan.segments.empty() &&
      scan.segments[0].header_problem.empty())
    throw records_missing(scan.segments[0].path, scan.first_seq, after_seq);

  // Where appending continues: the segment holding the good run's end.
  std::size_t tail = scan.segments.size();  // none
  const std::size_t usable =
      scan.has_break ? scan.first_break.segment + (scan.first_break.offset != 0 ? 1 : 0) : scan.segments.size();
  for (std::size_t i = 0; i < usable; ++i)
    if (scan.segments[i].header_problem.empty()) tail = i;
  for (std::size_t i = 0; i < usable; ++i) out.segments += scan.segments[i].header_problem.empty();
  if (tail != scan.segments.size()) {
    const JournalSegmentInfo& seg = scan.segments[tail];
    out.tail.segment_path = seg.path;
    out.tail.segment_first_seq = seg.name_seq;
    out.tail.offset = seg.end_offset;
    out.tail.next_seq = scan.next_seq;
    // Decided before anything is cut: a refused start changes nothing.
    if (scan.next_seq <= after_seq)
      throw JournalError("journal in " + dir + " ends at seq " + std::to_string(scan.next_seq - 1) +
                         " but the engine snapshot to continue from is at seq " + std::to_string(after_seq) +
                         ": the journal lost records the snapshot has" +
                         (scan.has_break ? " (" + scan.describe_break() + ")" : std::string()) +
                         ". The exchange will not start on it and has changed nothing. See `./nanotick journal "
                         "verify " +
                         dir + "`; `./nanotick journal repair " + dir +
                         "` cuts the journal at the damage and moves the snapshots after it aside, keeping a copy");
  } else {
    out.tail.next_seq = after_seq + 1;
  }
  // What the files lack that the staging ring holds (a kill -9 between
  // an append and its write to the files).
  {
    StagedRecords staged = read_staged_records(dir, fingerprint, out.tail.next_seq);
    out.staging_path = staged.path;
    out.staging_ignored = staged.path.empty() || staged.ignored.empty() ? "" : staged.path + ": " + staged.ignored;
    for (const JournalRecord& r : staged.records) {
      if (r.seq > after_seq) {
        if (on_record) on_record(r);
        ++out.records_replayed;
      }
      ++out.records_staged;
    }
  }
  out.next_seq = out.tail.next_seq + out.records_staged;
  if (scan.damage == JournalDamage::kTornTail) {
    out.truncation = scan.describe_break();
    if (tail != scan.segments.size() && tail == scan.first_break.segment) {
      out.cut_path = scan.segments[tail].path;
      out.cut_offset = scan.segments[tail].end_offset;
    }
    for (std::size_t i = usable; i < scan.segments.size(); ++i) out.to_quarantine.push_back(scan.segments[i].path);
  }
  return out;
}

void apply_journal_recovery(JournalRecovery& plan) {
  if (plan.applied) return;
  plan.applied = true;
  if (!plan.cut_path.empty()) plan.truncated_bytes = cut_segment_after(plan.cut_path, plan.cut_offset);
  for (const auto& path : plan.to_quarantine) plan.quarantined.push_back(quarantine_segment(path));
}

JournalRecovery recover_journal(const std::string& dir, std::uint64_t fingerprint, std::uint64_t after_seq,
                                const std::function<void(const JournalRecord&)>& on_record) {
  JournalRecovery out = plan_journal_recovery(dir, fingerprint, after_seq, on_record);
  apply_journal_recovery(out);
  return out;
}

}  // namespace nanotick::exchange
