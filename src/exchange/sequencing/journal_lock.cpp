#include "exchange/sequencing/journal_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace nanotick::exchange {

namespace {

std::string read_holder(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "unknown (the lock file is empty)";
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

}  // namespace

JournalDirLock::JournalDirLock(const std::string& dir, const std::string& holder) : path_(dir + "/" + kFileName) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw JournalLockError("journal: cannot create directory " + dir + ": " + ec.message());
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw JournalLockError("journal: cannot open " + path_ + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = err == EWOULDBLOCK ? read_holder(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw JournalLockError("journal directory " + dir + " is in use by another process (" + who +
                             "); two writers would give out the same sequence numbers: stop it first, or use "
                             "another journal directory");
    throw JournalLockError("journal: cannot lock " + path_ + ": " + std::strerror(err));
  }
  // The holder's description: for a refused second owner and for people.
  const std::string line = holder + ", since " + utc_now() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw JournalLockError("journal: cannot write " + path_ + ": " + std::strerror(err));
  }
}

JournalDirLock::~JournalDirLock() {
  // Closing releases the lock; the file stays (its content names the last
  // holder, which is harmless: only the kernel lock counts).
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace nanotick::exchange
