#include "exchange/sequencing/journal_staging.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "exchange/sequencing/journal_scan.hpp"

namespace nanotick::exchange {

namespace {

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

std::string id_path(const std::string& dir) { return dir + "/journal.id"; }

std::size_t ring_bytes(std::uint64_t capacity) {
  return kStagingHeaderBytes + static_cast<std::size_t>(capacity) * sizeof(JournalRecord);
}

bool parse_hex16(const char* s, std::size_t n, std::uint64_t& out) {
  if (n < 16) return false;
  out = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    const char c = s[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return false;
    out = out << 4 | static_cast<std::uint64_t>(v);
  }
  return n == 16 || (n == 17 && s[16] == '\n');
}

// A ring file we may trust: a regular file of ours (not a link someone
// planted in a world-writable directory), the size a ring has.
struct OpenedRing {
  int fd = -1;
  std::uint64_t bytes = 0;
};

OpenedRing open_ring_file(const std::string& path, int flags, std::string& why) {
  OpenedRing r;
  r.fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (r.fd < 0) {
    why = errno == ENOENT ? "" : sys_error("cannot open " + path, errno);
    return r;
  }
  struct stat st {};
  if (::fstat(r.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    why = path + " is not a regular file of this user";
    ::close(r.fd);
    r.fd = -1;
    return r;
  }
  r.bytes = static_cast<std::uint64_t>(st.st_size);
  return r;
}

}  // namespace

std::uint64_t journal_id(const std::string& dir, bool create) {
  const std::string path = id_path(dir);
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); fd >= 0) {
    char buf[32];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    std::uint64_t id = 0;
    if (n > 0 && parse_hex16(buf, static_cast<std::size_t>(n), id) && id != 0) return id;
    throw JournalError("journal: " + path + " is not a journal id (16 lower-case hex digits)");
  } else if (errno != ENOENT) {
    throw JournalError(sys_error("journal: cannot read " + path, errno));
  }
  if (!create) return 0;
  std::uint64_t id = 0;
  while (id == 0)
    if (::getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id))
      throw JournalError(sys_error("journal: getrandom for a journal id", errno));
  char text[18];
  std::snprintf(text, sizeof text, "%016llx\n", static_cast<unsigned long long>(id));
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw JournalError(sys_error("journal: cannot create " + temp, errno));
  const bool ok = ::write(fd, text, 17) == 17 && ::fdatasync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0)
    throw JournalError(sys_error("journal: cannot write " + path, ok ? errno : err));
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return id;
}

std::string staging_ring_path(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";
  const char* env = std::getenv("NANOTICK_STAGING_DIR");
  const std::string base = env != nullptr && *env != '\0' ? env : "/dev/shm";
  char name[96];
  std::snprintf(name, sizeof name, "/nanotick-journal-%llx-%llx", static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  return base + name;
}

StagedRecords read_staged_records(const std::string& dir, std::uint64_t fingerprint, std::uint64_t from_seq) {
  StagedRecords out;
  const std::string path = staging_ring_path(dir);
  if (path.empty()) return out;
  std::string why;
  const OpenedRing f = open_ring_file(path, O_RDONLY, why);
  if (f.fd < 0) {
    if (!why.empty()) throw JournalError("journal: staging ring: " + why);
    return out;
  }
  out.path = path;
  const std::uint64_t id = journal_id(dir, false);
  StagingRing::Header h{};
  bool usable = f.bytes >= kStagingHeaderBytes && ::pread(f.fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  if (!usable || std::memcmp(h.magic, kStagingMagic, sizeof h.magic) != 0 || h.version != kStagingVersion ||
      h.record_size != sizeof(JournalRecord) || h.capacity == 0 || (h.capacity & (h.capacity - 1)) != 0 ||
      h.capacity > (1u << 24) || f.bytes != ring_bytes(h.capacity)) {
    out.ignored = "not a staging ring of this version";
  } else if (id == 0 || h.journal_id != id) {
    out.ignored = "it belongs to another journal (id " + std::to_string(h.journal_id) + ")";
  } else if (h.fingerprint != fingerprint) {
    out.ignored = "it was written for another instrument table";
  }
  if (!out.ignored.empty()) {
    ::close(f.fd);
    return out;
  }
  out.published_seq = h.published_seq.load(std::memory_order_relaxed);
  out.written_seq = h.written_seq.load(std::memory_order_relaxed);
  const auto fail = [&](const std::string& what) {
    ::close(f.fd);
    throw JournalError("journal: staging ring " + path + " " + what +
                       ". The exchange will not start on it and has changed nothing; `./nanotick journal repair " +
                       dir + "` keeps a copy of the ring and removes it");
  };
  if (out.published_seq < from_seq) {  // nothing the files lack
    ::close(f.fd);
    return out;
  }
  if (out.published_seq - from_seq >= h.capacity)
    fail("was published to seq " + std::to_string(out.published_seq) + " but the journal files end at seq " +
         std::to_string(from_seq - 1) + ": records in between are in neither");
  out.records.resize(static_cast<std::size_t>(out.published_seq - from_seq + 1));
  for (std::uint64_t seq = from_seq; seq <= out.published_seq; ++seq) {
    JournalRecord& r = out.records[static_cast<std::size_t>(seq - from_seq)];
    const off_t at = static_cast<off_t>(kStagingHeaderBytes + (seq & (h.capacity - 1)) * sizeof(JournalRecord));
    if (::pread(f.fd, &r, sizeof r, at) != static_cast<ssize_t>(sizeof r)) fail("cannot be read");
    if (r.length != sizeof(JournalRecord) || r.type != RecordType::kEngineRequest || r.crc != record_crc(r))
      fail("holds a damaged record in the slot of seq " + std::to_string(seq));
    if (r.seq != seq)
      fail("no longer holds seq " + std::to_string(seq) + " (its slot holds seq " + std::to_string(r.seq) +
           "), which the journal files lack");
  }
  ::close(f.fd);
  return out;
}

StagingRing::StagingRing(const std::string& dir, std::uint64_t id, std::uint64_t fingerprint, std::uint64_t last_seq)
    : path_(staging_ring_path(dir)) {
  if (path_.empty()) throw std::runtime_error("journal: no directory " + dir);
  std::string why;
  OpenedRing f = open_ring_file(path_, O_RDWR, why);
  const std::size_t bytes = ring_bytes(capacity_);
  if (f.fd >= 0 && f.bytes != bytes) {
    // Another size (another version): recovery has ignored it; replace it.
    ::close(f.fd);
    f.fd = -1;
    if (::unlink(path_.c_str()) != 0) throw std::runtime_error(sys_error("journal: cannot replace " + path_, errno));
  }
  if (f.fd < 0) {
    if (!why.empty()) throw std::runtime_error("journal: staging ring: " + why);
    // 0600: the ring holds every client's order flow.
    f.fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f.fd < 0) throw std::runtime_error(sys_error("journal: cannot create the staging ring " + path_, errno));
  }
  // tmpfs allocates on fallocate: a full /dev/shm shows up here, not as a SIGBUS later.
  if (const int err = ::posix_fallocate(f.fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(f.fd);
    throw std::runtime_error(
        sys_error("journal: cannot allocate " + std::to_string(bytes) + " bytes for " + path_, err));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, f.fd, 0);
  const int map_err = errno;
  ::close(f.fd);
  if (p == MAP_FAILED) throw std::runtime_error(sys_error("journal: cannot map " + path_, map_err));
  map_ = p;
  map_bytes_ = bytes;
  // Every page writable and resident before the first append: no fault on
  // the sequencer's thread. mlock keeps the pages from swap (zram here); it
  // may be refused (RLIMIT_MEMLOCK), which costs only that guarantee.
#ifdef MADV_POPULATE_WRITE
  (void)::madvise(p, bytes, MADV_POPULATE_WRITE);
#endif
  locked_ = ::mlock(p, bytes) == 0;
  header_ = static_cast<Header*>(p);
  slots_ = reinterpret_cast<JournalRecord*>(static_cast<unsigned char*>(p) + kStagingHeaderBytes);
  // A ring this journal's last run left holds what the files lack from
  // last_seq on (recovery read it back and replayed it): kept, for the
  // journal's first write to put into the files. Anything else starts over
  // at the journal's end.
  const bool ours = std::memcmp(header_->magic, kStagingMagic, sizeof header_->magic) == 0 &&
                    header_->version == kStagingVersion && header_->capacity == capacity_ &&
                    header_->journal_id == id && header_->fingerprint == fingerprint;
  std::uint64_t published = last_seq;
  if (ours) {
    const std::uint64_t left = header_->published_seq.load(std::memory_order_acquire);
    if (left > last_seq && left - last_seq <= capacity_) published = left;
  }
  for (std::uint64_t seq = last_seq + 1; seq <= published; ++seq) {
    const JournalRecord& r = slot(seq);
    if (r.seq != seq || r.length != sizeof(JournalRecord) || r.crc != record_crc(r))
      throw std::runtime_error("journal: staging ring " + path_ + " lost seq " + std::to_string(seq) +
                               " between recovery and start-up");
  }
  std::memcpy(header_->magic, kStagingMagic, sizeof header_->magic);
  header_->version = kStagingVersion;
  header_->record_size = sizeof(JournalRecord);
  header_->capacity = capacity_;
  header_->journal_id = id;
  header_->fingerprint = fingerprint;
  header_->written_seq.store(last_seq, std::memory_order_relaxed);
  header_->published_seq.store(published, std::memory_order_release);
  room_through_ = last_seq + capacity_;
}

StagingRing::~StagingRing() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

void StagingRing::remove() noexcept {
  if (!path_.empty()) ::unlink(path_.c_str());
}

}  // namespace nanotick::exchange
