#include "exchange/sequencing/journal_repair.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "exchange/sequencing/journal_recovery.hpp"

namespace nanotick::exchange {

namespace {

namespace fs = std::filesystem;

}  // namespace

std::string repair_backup_dir_name(const std::string& dir) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string base = dir + "/repair-" + stamp;
  std::string name = base;
  for (int n = 2; fs::exists(name); ++n) name = base + "-" + std::to_string(n);
  return name;
}

namespace {

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

// Snapshots named for a journal seq >= `seq`.
std::vector<std::string> snapshots_from(const std::string& dir, std::uint64_t seq) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::uint64_t s = 0;
    if (e.is_regular_file() && parse_numbered_name(e.path().filename().string(), "snapshot-", ".snap", s) && s >= seq)
      out.push_back(e.path().string());
  }
  return out;
}

}  // namespace

JournalRepair repair_journal(const JournalScan& scan, bool dry_run) {
  JournalRepair out;
  if (!scan.has_break) return out;
  out.cut_seq = scan.first_break.expected_seq;
  out.removed_valid = scan.valid_after_break;
  out.removed_valid_min_seq = scan.valid_after_min_seq;
  out.removed_valid_max_seq = scan.valid_after_max_seq;
  const std::size_t k = scan.first_break.segment;
  const bool cut_in_place = scan.first_break.offset != 0;
  if (cut_in_place) out.copied.push_back(scan.segments[k].path);
  for (std::size_t i = cut_in_place ? k + 1 : k; i < scan.segments.size(); ++i)
    out.moved.push_back(scan.segments[i].path);
  // With no break seq known (a first segment without a header) every snapshot goes.
  for (auto& s : snapshots_from(scan.dir, out.cut_seq)) out.moved.push_back(std::move(s));
  out.backup_dir = repair_backup_dir_name(scan.dir);
  if (dry_run) return out;

  std::error_code ec;
  fs::create_directory(out.backup_dir, ec);
  if (ec) throw JournalError("journal repair: cannot create " + out.backup_dir + ": " + ec.message());
  for (const auto& path : out.copied) {
    const std::string to = out.backup_dir + "/" + fs::path(path).filename().string();
    fs::copy_file(path, to, ec);
    if (ec) throw JournalError("journal repair: cannot copy " + path + " to " + to + ": " + ec.message());
    const int fd = ::open(to.c_str(), O_RDONLY | O_CLOEXEC);  // the copy is durable before the original changes
    if (fd < 0 || ::fsync(fd) != 0) {
      if (fd >= 0) ::close(fd);
      throw JournalError("journal repair: cannot fsync the copy " + to);
    }
    ::close(fd);
  }
  for (const auto& path : out.moved) {
    const std::string to = out.backup_dir + "/" + fs::path(path).filename().string();
    fs::rename(path, to, ec);
    if (ec) throw JournalError("journal repair: cannot move " + path + " to " + to + ": " + ec.message());
  }
  fsync_dir(out.backup_dir);
  fsync_dir(scan.dir);
  // A segment cut short gets its size back (zeros after its good records):
  // the scan would otherwise find it short again.
  if (cut_in_place)
    out.bytes_zeroed =
        cut_segment_after(scan.segments[k].path, scan.segments[k].end_offset, scan.segments[k].made_bytes);
  return out;
}

}  // namespace nanotick::exchange
