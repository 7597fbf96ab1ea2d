#include "core/counters_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

namespace nanotick::core {

namespace {

namespace L = counters_layout;

std::size_t values_offset(std::uint32_t capacity) noexcept {
  const std::size_t end = L::kHeaderBytes + std::size_t{L::kMetadataBytes} * capacity;
  return (end + 63) / 64 * 64;
}

std::size_t file_bytes(std::uint32_t capacity) noexcept {
  return values_offset(capacity) + std::size_t{L::kValueBytes} * capacity;
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw std::runtime_error("counters file " + path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

CountersFile::CountersFile(const Options& options) : path_(options.path), capacity_(options.capacity) {
  if (capacity_ == 0 || capacity_ > L::kMaxCapacity)
    throw std::invalid_argument("counters file: capacity must be 1.." + std::to_string(L::kMaxCapacity) + ", got " +
                                std::to_string(capacity_));
  if (options.process.size() >= sizeof(L::Header::process))
    throw std::invalid_argument("counters file: process name longer than 63 bytes: " + options.process);
  bytes_ = file_bytes(capacity_);
  if (path_.empty()) {
    base_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base_ == MAP_FAILED) fail("(in memory)", "mmap", errno);
  } else {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) fail(path_, "cannot open", errno);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      if (err == EWOULDBLOCK) throw std::runtime_error("counters file " + path_ + " is in use by another live process");
      fail(path_, "flock", err);
    }
    // Start from zeros: a previous run's values must not show through.
    if (::fchmod(fd_, 0600) != 0 || ::ftruncate(fd_, 0) != 0 || ::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) {
      const int err = errno;
      ::close(fd_);
      fail(path_, "cannot size", err);
    }
    base_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (base_ == MAP_FAILED) {
      const int err = errno;
      ::close(fd_);
      fail(path_, "mmap", err);
    }
  }
  // Everything but the magic first, the magic last (release): a reader that
  // sees the magic sees a complete header.
  L::Header* h = new (base_) L::Header{};
  h->version = L::kVersion;
  h->header_bytes = L::kHeaderBytes;
  h->capacity = capacity_;
  h->metadata_bytes = L::kMetadataBytes;
  h->metadata_offset = L::kHeaderBytes;
  h->values_offset = values_offset(capacity_);
  h->pid = ::getpid();
  h->start_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::memcpy(h->process, options.process.data(), options.process.size());
  h->count.store(0, std::memory_order_relaxed);
  h->state.store(static_cast<std::uint32_t>(CountersState::kRunning), std::memory_order_relaxed);
  std::uint64_t magic;
  std::memcpy(&magic, L::kMagic, sizeof magic);
  h->magic.store(magic, std::memory_order_release);
}

CountersFile::~CountersFile() {
  if (base_ != nullptr && base_ != MAP_FAILED) ::munmap(base_, bytes_);
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

L::Metadata& CountersFile::metadata(std::uint32_t i) const noexcept {
  return reinterpret_cast<L::Metadata*>(static_cast<char*>(base_) + L::kHeaderBytes)[i];
}

std::atomic<std::uint64_t>& CountersFile::value(std::uint32_t i) const noexcept {
  return reinterpret_cast<std::atomic<std::uint64_t>*>(static_cast<char*>(base_) + values_offset(capacity_))[i];
}

void CountersFile::begin_group() noexcept {
  // Padding records stay zero (kUnused); count covers them once a counter follows.
  next_ = (next_ + L::kValuesPerLine - 1) / L::kValuesPerLine * L::kValuesPerLine;
}

std::uint32_t CountersFile::place(Counter& counter, std::string_view label, CounterKind kind) {
  if (label.empty() || label.size() > L::kMaxLabelBytes)
    throw std::invalid_argument("counters file: a label must be 1.." + std::to_string(L::kMaxLabelBytes) +
                                " bytes, got '" + std::string(label) + "'");
  for (const char c : label)
    if (c < ' ' || c > '~')
      throw std::invalid_argument("counters file: label '" + std::string(label) + "' has a non-printable byte");
  if (label.front() == ' ' || label.back() == ' ')
    throw std::invalid_argument("counters file: label '" + std::string(label) + "' starts or ends with a space");
  if (kind != CounterKind::kCount && kind != CounterKind::kGauge && kind != CounterKind::kReal)
    throw std::invalid_argument("counters file: label '" + std::string(label) + "': kind must be count, gauge or real");
  if (next_ >= capacity_)
    throw std::length_error("counters file " + path_ + ": full (" + std::to_string(capacity_) + " slots) at '" +
                            std::string(label) + "'");
  if (!labels_.emplace(label).second)
    throw std::invalid_argument("counters file: label '" + std::string(label) + "' placed twice");
  const std::uint32_t id = next_++;
  L::Metadata& m = metadata(id);
  m.id = id;
  m.kind = static_cast<std::uint16_t>(kind);
  m.label_length = static_cast<std::uint16_t>(label.size());
  std::memcpy(m.label, label.data(), label.size());
  counter.place(value(id));
  header()->count.store(next_, std::memory_order_release);
  return id;
}

void CountersFile::mark_stopped() noexcept {
  header()->state.store(static_cast<std::uint32_t>(CountersState::kStopped), std::memory_order_release);
}

std::uint32_t CountersFile::size() const noexcept { return header()->count.load(std::memory_order_acquire); }

std::string CountersFile::text_report() const {
  std::string out;
  for_each([&out](const Entry& e) {
    out += e.label;
    out += ' ';
    out += format_value(e);
    out += '\n';
  });
  return out;
}

std::string CountersFile::format_value(const Entry& e) {
  if (e.kind == CounterKind::kGauge) return std::to_string(static_cast<std::int64_t>(e.value));
  if (e.kind == CounterKind::kReal) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6f", std::bit_cast<double>(e.value));
    return b;
  }
  return std::to_string(e.value);
}

}  // namespace nanotick::core
