// Exclusive ownership of a journal directory (docs/EXCHANGE.md "Journal"):
// one process at a time may append to a journal, or two writers would hand
// out the same sequence numbers and one's acknowledged orders would vanish at
// the next recovery. An flock(2) on <dir>/LOCK, held for the owner's life: the
// kernel releases it when the process dies (kill -9 included), so a crash
// never blocks the restart. The file holds a line describing the holder, which
// a refused second owner quotes. Start-up code: allocates, throws. Not
// thread-safe; the lock is per open file, so it also excludes a second owner
// in the same process.
#pragma once

#include <stdexcept>
#include <string>

namespace nanotick::exchange {

class JournalLockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JournalDirLock {
 public:
  static constexpr const char* kFileName = "LOCK";

  // Creates `dir` if missing and takes its lock, recording `holder` (e.g.
  // "nanotick-exchange pid 1234, order entry 127.0.0.1:9100") in it. Throws
  // JournalLockError naming the directory and the current holder when
  // another owner has it, or the system error when the file cannot be made.
  JournalDirLock(const std::string& dir, const std::string& holder);
  ~JournalDirLock();
  JournalDirLock(const JournalDirLock&) = delete;
  JournalDirLock& operator=(const JournalDirLock&) = delete;

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nanotick::exchange
