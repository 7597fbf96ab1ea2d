#include "exchange/sequencing/journal_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace nanotick::exchange {

namespace {

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

void fsync_dir(const std::string& dir) noexcept {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

// The directory exists and has its id before the ring is named after it.
static std::uint64_t prepared_journal_id(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("journal: cannot create directory " + dir + ": " + ec.message());
  return journal_id(dir, true);
}

JournalWriter::JournalWriter(std::string dir, std::uint64_t segment_bytes, std::uint64_t fingerprint,
                             const JournalTail& tail)
    : dir_(std::move(dir)),
      segment_bytes_(segment_bytes),
      fingerprint_(fingerprint),
      ring_(dir_, prepared_journal_id(dir_), fingerprint, tail.next_seq - 1),
      file_seq_(tail.next_seq - 1) {
  if (segment_bytes_ < 2 * sizeof(JournalRecord) || segment_bytes_ % sizeof(JournalRecord) != 0)
    throw std::invalid_argument("journal segment_bytes must be a multiple of 64 and at least 128");
  next_seq_ = ring_.published_seq() + 1;  // after what a killed run left in the ring
  if (!tail.segment_path.empty()) {
    open_existing(tail);
  } else if (!open_segment(tail.next_seq)) {
    throw std::runtime_error("journal: " + error_);
  }
  // The ring's records from a killed run go into the files now; and
  // recovered records may have been only in the page cache of a killed
  // process.
  if (!flush()) throw std::runtime_error("journal: " + error_);
  if (!sync()) throw std::runtime_error("journal: fdatasync failed in " + dir_);
}

JournalWriter::~JournalWriter() {
  // The ring is needed only for records the files lack (a failed write, or
  // a destruction without finish()): otherwise it goes, as at finish().
  if (ring_.written_seq() == ring_.published_seq()) ring_.remove();
  if (const int fd = current_fd_.load(); fd >= 0) ::close(fd);
  for (const int fd : unsynced_fds_) ::close(fd);
}

void JournalWriter::open_existing(const JournalTail& tail) {
  const int fd = ::open(tail.segment_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(sys_error("journal: cannot open " + tail.segment_path, errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < tail.offset) {
    ::close(fd);
    throw std::runtime_error("journal: " + tail.segment_path + " is shorter than its recovered tail");
  }
  segment_bytes_ = static_cast<std::uint64_t>(st.st_size);  // an existing segment keeps the size it was made with
  offset_ = tail.offset;
  current_fd_.store(fd, std::memory_order_release);
}

bool JournalWriter::open_segment(std::uint64_t first_seq) noexcept {
  // Made under a temporary name and renamed once its size and header are
  // durable (journal_format.hpp): a file with a segment's own name that is
  // short or has no header is then damage, never a creation a crash cut off.
  // 0600: the journal holds every client's order flow.
  const std::string path = dir_ + "/" + segment_file_name(first_seq);
  const std::string temp = path + std::string(kSegmentTempSuffix);
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    error_ = sys_error("cannot create segment " + temp, errno);
    return false;
  }
  const auto give_up = [&](std::string why) {
    error_ = std::move(why);
    ::close(fd);
    ::unlink(temp.c_str());
    return false;
  };
  // Reserve the blocks now: a full disk shows up here, once per segment.
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(segment_bytes_)); err != 0)
    return give_up(sys_error("cannot allocate " + std::to_string(segment_bytes_) + " bytes for " + path, err));
  SegmentHeader h{};
  std::memcpy(h.magic, kJournalMagic, sizeof h.magic);
  h.version = kJournalVersion;
  h.record_size = sizeof(JournalRecord);
  h.first_seq = first_seq;
  h.fingerprint = fingerprint_;
  h.segment_bytes = segment_bytes_;
  if (::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))
    return give_up(sys_error("cannot write the header of " + temp, errno));
  if (::fdatasync(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0)
    return give_up(sys_error("cannot make segment " + path + " durable", errno));
  fsync_dir(dir_);  // the new name itself must survive a crash

  offset_ = sizeof(SegmentHeader);
  {
    // The old descriptor and the new current one change together under the
    // lock, so sync() sees every record it claims in one of them. The next
    // sync() flushes and closes the old one (or release_replaced() closes it).
    std::lock_guard lock(fds_mutex_);
    const int old_fd = current_fd_.load(std::memory_order_relaxed);
    if (old_fd >= 0) unsynced_fds_.push_back(old_fd);
    current_fd_.store(fd, std::memory_order_release);
  }
  segments_created_.add();
  return true;
}

bool JournalWriter::note_no_room() noexcept {
  if (!failed()) ring_full_.add();
  return false;
}

bool JournalWriter::write_run(std::uint64_t first, std::uint64_t count) noexcept {
  const int fd = current_fd_.load(std::memory_order_relaxed);  // only this thread replaces it
  const auto* p = reinterpret_cast<const unsigned char*>(&ring_.slot(first));
  std::uint64_t left = count * sizeof(JournalRecord);
  while (left > 0) {
    const ssize_t n = ::pwrite(fd, p, left, static_cast<off_t>(offset_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = sys_error("cannot write to the journal segment in " + dir_, n < 0 ? errno : ENOSPC);
      return false;
    }
    p += n;
    left -= static_cast<std::uint64_t>(n);
    offset_ += static_cast<std::uint64_t>(n);
  }
  writes_.add();
  bytes_.add(count * sizeof(JournalRecord));
  return true;
}

bool JournalWriter::flush() noexcept {
  if (failed()) return false;
  const std::uint64_t published = ring_.published_seq();
  while (file_seq_ < published) {
    if (offset_ + sizeof(JournalRecord) > segment_bytes_ && !open_segment(file_seq_ + 1)) {
      failed_.store(true, std::memory_order_release);
      return false;
    }
    const std::uint64_t first = file_seq_ + 1;
    const std::uint64_t n = std::min(
        {published - file_seq_, ring_.contiguous_from(first), (segment_bytes_ - offset_) / sizeof(JournalRecord)});
    if (!write_run(first, n)) {
      failed_.store(true, std::memory_order_release);
      return false;
    }
    file_seq_ += n;
    ring_.mark_written(file_seq_);  // the slots are free again
  }
  return true;
}

bool JournalWriter::finish(bool sync_too) {
  bool ok = flush();
  if (ok && sync_too) ok = sync();
  if (ok && ring_.written_seq() == ring_.published_seq()) ring_.remove();
  return ok;
}

bool JournalWriter::sync() {
  std::lock_guard one_at_a_time(sync_mutex_);
  std::uint64_t target;
  std::vector<int> old;
  int fd;
  {
    // Every record up to `target` is in a replaced segment or the current one.
    std::lock_guard lock(fds_mutex_);
    target = ring_.written_seq();
    old.swap(unsynced_fds_);
    fd = current_fd_.load(std::memory_order_acquire);
  }
  bool ok = true;
  int err = 0;
  for (const int o : old) {
    if (::fdatasync(o) != 0 && ok) {
      ok = false;
      err = errno;
    }
    ::close(o);
  }
  // Only sync() and release_replaced() close descriptors, one at a time
  // (sync_mutex_), and the writer hands replaced ones over instead of
  // closing them: `fd` stays open while it is synced here.
  if (fd >= 0 && ::fdatasync(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok) {
    durable_seq_.store(target, std::memory_order_release);
    syncs_.add();
  } else {
    std::lock_guard lock(fds_mutex_);
    sync_error_ = sys_error("fdatasync in " + dir_, err);
  }
  return ok;
}

void JournalWriter::release_replaced() noexcept {
  std::lock_guard one_at_a_time(sync_mutex_);
  std::vector<int> old;
  {
    std::lock_guard lock(fds_mutex_);
    old.swap(unsynced_fds_);
  }
  for (const int o : old) ::close(o);
}

std::string JournalWriter::sync_error() const {
  std::lock_guard lock(fds_mutex_);
  return sync_error_;
}

void JournalWriter::place_counters(core::CountersFile& file) {
  file.begin_group();
  file.place(records_, "journal_records");
  file.place(ring_full_, "journal_ring_full");
  file.begin_group();  // flush() runs on the journal thread
  file.place(bytes_, "journal_bytes");
  file.place(writes_, "journal_writes");
  file.place(segments_created_, "journal_segments_created");
  file.begin_group();  // sync() may run on yet another thread
  file.place(syncs_, "journal_fdatasyncs");
}

}  // namespace nanotick::exchange
