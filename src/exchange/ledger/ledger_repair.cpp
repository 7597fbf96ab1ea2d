#include "exchange/ledger/ledger_repair.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "exchange/sequencing/journal_repair.hpp"

namespace nanotick::exchange {

namespace {

namespace fs = std::filesystem;

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw LedgerError("ledger repair: cannot fsync " + path + ": " + std::strerror(e));
  }
  ::close(fd);
}

}  // namespace

LedgerRepair repair_trade_ledger(const std::string& path, bool dry_run) {
  LedgerRepair out;
  const LedgerContents c = read_trade_ledger(path);
  if (c.damage == LedgerDamage::kNone) return out;
  out.kept_trades = c.trades.size();
  out.cut_bytes = c.file_bytes - c.good_bytes;
  out.removed_valid = c.valid_after_break;
  out.removed_valid_min_seq = c.valid_after_min_seq;
  out.removed_valid_max_seq = c.valid_after_max_seq;
  const std::string dir = fs::path(path).parent_path().string();
  const std::string backup_dir = repair_backup_dir_name(dir.empty() ? "." : dir);
  out.backup_path = backup_dir + "/" + fs::path(path).filename().string();
  if (dry_run) return out;
  std::error_code ec;
  fs::create_directory(backup_dir, ec);
  if (ec) throw LedgerError("ledger repair: cannot create " + backup_dir + ": " + ec.message());
  fs::copy_file(path, out.backup_path, ec);
  if (ec) throw LedgerError("ledger repair: cannot copy " + path + " to " + out.backup_path + ": " + ec.message());
  fs::permissions(out.backup_path, fs::perms::owner_read | fs::perms::owner_write, ec);
  fsync_path(out.backup_path, O_RDONLY);  // the copy is durable before the original changes
  fsync_path(backup_dir, O_RDONLY | O_DIRECTORY);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(c.good_bytes)) != 0 || ::fdatasync(fd) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw LedgerError("ledger repair: cannot cut " + path + ": " + std::strerror(e));
  }
  ::close(fd);
  return out;
}

}  // namespace nanotick::exchange
