#include "exchange/journal_writer.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

JournalWriter::JournalWriter(std::string dir, std::uint64_t segment_bytes, std::uint64_t fingerprint,
                             const JournalTail& tail)
    : dir_(std::move(dir)), segment_bytes_(segment_bytes), fingerprint_(fingerprint), next_seq_(tail.next_seq) {
  if (segment_bytes_ < 2 * sizeof(JournalRecord) || segment_bytes_ % sizeof(JournalRecord) != 0)
    throw std::invalid_argument("journal segment_bytes must be a multiple of 64 and at least 128");
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("journal: cannot create directory " + dir_ + ": " + ec.message());
  appended_seq_.store(next_seq_ - 1, std::memory_order_relaxed);
  if (!tail.segment_path.empty()) {
    open_existing(tail);
  } else if (!open_segment(next_seq_)) {
    throw std::runtime_error("journal: " + error_);
  }
  // Recovered records may have been only in the page cache of a killed process.
  if (!sync()) throw std::runtime_error("journal: fdatasync failed in " + dir_);
}

JournalWriter::~JournalWriter() {
  unmap_current();
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
  const auto size = static_cast<std::uint64_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(sys_error("journal: cannot map " + tail.segment_path, err));
  }
  map_ = static_cast<unsigned char*>(p);
  segment_bytes_ = size;  // an existing segment keeps the size it was made with
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
  // Reserve the blocks now: a write into a mapped hole on a full disk would be a SIGBUS.
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(segment_bytes_)); err != 0)
    return give_up(sys_error("cannot allocate " + std::to_string(segment_bytes_) + " bytes for " + path, err));
  void* p = ::mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) return give_up(sys_error("cannot map " + temp, errno));
  SegmentHeader h{};
  std::memcpy(h.magic, kJournalMagic, sizeof h.magic);
  h.version = kJournalVersion;
  h.record_size = sizeof(JournalRecord);
  h.first_seq = first_seq;
  h.fingerprint = fingerprint_;
  h.segment_bytes = segment_bytes_;
  std::memcpy(p, &h, sizeof h);
  if (::fdatasync(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::munmap(p, segment_bytes_);
    return give_up(sys_error("cannot make segment " + path + " durable", err));
  }
  fsync_dir(dir_);  // the new name itself must survive a crash

  unmap_current();
  map_ = static_cast<unsigned char*>(p);
  offset_ = sizeof(SegmentHeader);
  {
    // The old descriptor and the new current one change together under the
    // lock, so sync() sees every record it claims in one of them. The old
    // segment's dirty pages stay in the page cache after munmap; the next
    // sync() flushes and closes it (or release_replaced() closes it).
    std::lock_guard lock(fds_mutex_);
    const int old_fd = current_fd_.load(std::memory_order_relaxed);
    if (old_fd >= 0) unsynced_fds_.push_back(old_fd);
    current_fd_.store(fd, std::memory_order_release);
  }
  segments_created_.add();
  return true;
}

void JournalWriter::unmap_current() noexcept {
  if (map_ != nullptr) ::munmap(map_, segment_bytes_);
  map_ = nullptr;
}

bool JournalWriter::append(const engine::Request& rq) noexcept {
  if (failed_) [[unlikely]]
    return false;
  if (offset_ + sizeof(JournalRecord) > segment_bytes_) [[unlikely]] {
    if (!open_segment(next_seq_)) {
      failed_ = true;
      return false;
    }
  }
  JournalRecord r;
  r.length = sizeof(JournalRecord);
  r.type = RecordType::kEngineRequest;
  r.reserved = 0;
  r.seq = next_seq_;
  r.request = rq;
  r.crc = record_crc(r);
  std::memcpy(map_ + offset_, &r, sizeof r);
  offset_ += sizeof r;
  records_.add();
  bytes_.add(sizeof(JournalRecord));
  appended_seq_.store(next_seq_, std::memory_order_release);
  ++next_seq_;
  return true;
}

bool JournalWriter::sync() {
  std::lock_guard one_at_a_time(sync_mutex_);
  std::uint64_t target;
  std::vector<int> old;
  int fd;
  {
    // Every record up to `target` is in a replaced segment or the current one.
    std::lock_guard lock(fds_mutex_);
    target = appended_seq_.load(std::memory_order_acquire);
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
  file.place(bytes_, "journal_bytes");
  file.place(segments_created_, "journal_segments_created");
  file.begin_group();  // sync() runs on another thread
  file.place(syncs_, "journal_fdatasyncs");
}

}  // namespace nanotick::exchange
