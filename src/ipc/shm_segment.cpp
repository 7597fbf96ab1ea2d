#include "ipc/shm_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace nanotick::ipc {

namespace {

[[noreturn]] void fail(const char* what) {
  throw std::system_error(errno, std::generic_category(), std::string("shared memory: ") + what);
}

}  // namespace

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : fd_(std::move(other.fd_)), base_(std::exchange(other.base_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    unmap();
    fd_ = std::move(other.fd_);
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ShmSegment::unmap() noexcept {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
  fd_.reset();
}

ShmSegment ShmSegment::create(const std::string& name, std::size_t bytes, PeerAccess peers) {
  if (bytes == 0) throw std::invalid_argument("shared memory: a segment of 0 bytes");
  ShmSegment s;
  s.fd_ = net::Fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!s.fd_) fail("memfd_create");
  if (::fchmod(s.fd_.get(), 0600) != 0) fail("fchmod 0600");
  if (::ftruncate(s.fd_.get(), static_cast<off_t>(bytes)) != 0) fail("ftruncate");
  if (::fcntl(s.fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) fail("F_ADD_SEALS");
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_.get(), 0);
  if (base == MAP_FAILED) fail("mmap");
  s.base_ = base;
  s.bytes_ = bytes;
  // Our writable mapping exists; a read-only segment refuses every later one
  // (F_SEAL_FUTURE_WRITE keeps existing mappings writable). Then no more seals.
  const int last = peers == PeerAccess::kReadOnly ? F_SEAL_FUTURE_WRITE | F_SEAL_SEAL : F_SEAL_SEAL;
  if (::fcntl(s.fd_.get(), F_ADD_SEALS, last) != 0) fail("F_ADD_SEALS (F_SEAL_FUTURE_WRITE needs Linux 5.1)");
  return s;
}

net::Fd ShmSegment::read_only_fd() const {
  if (!fd_) throw std::invalid_argument("shared memory: the segment's descriptor is closed");
  const std::string path = "/proc/self/fd/" + std::to_string(fd_.get());
  net::Fd ro(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ro) fail("open /proc/self/fd O_RDONLY (is /proc mounted?)");
  return ro;
}

ShmSegment ShmSegment::map(net::Fd fd, std::size_t bytes, PeerAccess access) {
  if (!fd) throw std::invalid_argument("shared memory: no descriptor");
  const int seals = ::fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0) fail("F_GET_SEALS (not a memfd?)");
  if ((seals & F_SEAL_SHRINK) == 0)
    throw std::invalid_argument("shared memory: the segment is not sealed against shrinking");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail("fstat");
  if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) != bytes)
    throw std::invalid_argument("shared memory: the segment has " + std::to_string(st.st_size) +
                                " bytes, its peer said " + std::to_string(bytes));
  const int prot = access == PeerAccess::kReadOnly ? PROT_READ : PROT_READ | PROT_WRITE;
  void* base = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) fail("mmap");
  ShmSegment s;
  s.fd_ = std::move(fd);
  s.base_ = base;
  s.bytes_ = bytes;
  return s;
}

}  // namespace nanotick::ipc
