// journal_bench: the subjects, each appending the journal's own record: ours
// (JournalWriter and JournalSyncer, as the exchange drives them) and the two
// plain appenders beside it, write(2) and mmap, with the same background duty.
// Part of journal_bench.cpp, included by it alone: hence the unnamed namespace.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/bench_util.hpp"
#include "common/child_process.hpp"
#include "common/rdtsc_timer.hpp"
#include "core/agent_runner.hpp"
#include "core/histogram.hpp"
#include "core/idle_strategy.hpp"
#include "core/thread.hpp"
#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "engine/request.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_writer.hpp"
#include "exchange/sequencing/sequencer.hpp"

namespace {

namespace nb = nanotick::bench;
namespace nc = nanotick::core;
namespace ne = nanotick::engine;
namespace nx = nanotick::exchange;

using nx::FsyncPolicy;

constexpr std::uint64_t kFingerprint = 0x6a6f75726e616c31ULL;  // any value: nothing reads these journals back

// Records one sequencer pass takes at most with fsync = every (its group
// commit): kGroupCommitBatch where the Sequencer has one, else kBatch.
template <typename Seq>
constexpr std::size_t group_commit_batch() {
  if constexpr (requires { Seq::kGroupCommitBatch; }) return Seq::kGroupCommitBatch;
  else return Seq::kBatch;
}
constexpr std::size_t kMaxPass = group_commit_batch<nx::Sequencer>();
constexpr std::size_t kPage = 4096;
// Calls slower than this are counted apart: the bound on the max
// (journal append at 100 k/s, max <= 100 us).
constexpr std::uint64_t kSlowNs = 100'000;

std::string errno_text(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// The record every subject writes: the journal's own encoding, so the peers
// differ from ours only in how the bytes reach the file.
NT_ALWAYS_INLINE nx::JournalRecord encode(std::uint64_t seq, const ne::Request& rq) noexcept {
  nx::JournalRecord r;
  r.length = sizeof(nx::JournalRecord);
  r.type = nx::RecordType::kEngineRequest;
  r.reserved = 0;
  r.seq = seq;
  r.request = rq;
  r.crc = nx::record_crc(r);
  return r;
}

// ---- subjects ----------------------------------------------------------------------

// The JournalSyncer's batch duty, for a peer: at most one sync per window, and
// only when something was appended since the last one. Policies none and
// every: nothing (every syncs on the appending thread). Runs on the
// background runner; `P` has sync(), appended_seq() and durable_seq().
template <typename P>
class PeerSyncer {
 public:
  PeerSyncer(P& peer, FsyncPolicy policy, std::uint32_t window_us) noexcept
      : peer_(peer), policy_(policy), window_ns_(nc::ns_from_us(window_us)) {}

  std::string_view role_name() const noexcept { return "peer-sync"; }

  int do_work() noexcept {
    if (policy_ != FsyncPolicy::kBatch) return 0;
    const std::uint64_t now = clock_.now_ns();
    if (now - last_sync_ns_ < window_ns_) return 0;
    if (peer_.durable_seq() == peer_.appended_seq()) return 0;
    last_sync_ns_ = now;
    if (!peer_.sync()) failed_.store(true, std::memory_order_release);
    return 1;
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

 private:
  P& peer_;
  const nc::TscClock& clock_ = nc::TscClock::global();
  FsyncPolicy policy_;
  std::uint64_t window_ns_;
  std::uint64_t last_sync_ns_ = 0;
  std::atomic<bool> failed_{false};
};

// The sequencer's sync under policy every: a journal that stages records and
// writes them on flush() is flushed first (as the sequencer does), one that
// writes on append() just syncs. A template, so either API compiles.
template <typename J>
bool flush_and_sync(J& journal) {
  if constexpr (requires { journal.flush(); }) {
    if (!journal.flush()) return false;
  }
  return journal.sync();
}

// The clean shutdown the exchange does, for a journal that has one (it also
// removes the staging ring it keeps outside the directory); true otherwise.
template <typename J>
bool finish_journal(J& journal, bool sync) {
  if constexpr (requires { journal.finish(sync); }) return journal.finish(sync);
  return true;
}

// Ours: only the JournalWriter API the exchange uses (constructor, append,
// sync, failed, appended_seq, durable_seq, error, sync_error; flush and
// finish where they exist) and JournalSyncer, so the bench measures whatever
// the writer does inside. An append that returns false without failed() is
// back-pressure (a staging ring full): the caller tries again.
class OursSubject {
 public:
  static constexpr const char* kName = "ours (JournalWriter)";

  OursSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
              std::uint64_t segment_bytes)
      : journal_(dir.string(), segment_bytes, kFingerprint, nx::JournalTail{}), syncer_(journal_, policy, window_us) {}

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept { return journal_.append(rq); }
  bool sync() { return flush_and_sync(journal_); }
  bool failed() const noexcept { return journal_.failed(); }
  bool finish(FsyncPolicy policy) { return finish_journal(journal_, policy != FsyncPolicy::kNone); }
  std::uint64_t appended_seq() const noexcept { return journal_.appended_seq(); }
  std::uint64_t durable_seq() const noexcept { return journal_.durable_seq(); }
  nx::JournalSyncer& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const { return !journal_.error().empty() ? journal_.error() : journal_.sync_error(); }

 private:
  nx::JournalWriter journal_;
  nx::JournalSyncer syncer_;
};

// What both peers share: the appended / durable sequence numbers (published
// as the journal publishes its own) and the errno of a failure.
class PeerState {
 public:
  std::uint64_t appended_seq() const noexcept { return appended_.load(std::memory_order_acquire); }
  std::uint64_t durable_seq() const noexcept { return durable_.load(std::memory_order_acquire); }
  bool failed() const noexcept { return append_errno_.load() != 0; }
  bool finish(FsyncPolicy /*policy*/) noexcept { return true; }  // nothing outside the directory

 protected:
  std::atomic<std::uint64_t> appended_{0};
  std::atomic<std::uint64_t> durable_{0};
  std::uint64_t next_seq_ = 1;        // appending thread
  std::atomic<int> append_errno_{0};  // set by append() (noexcept: no strings there)
  std::atomic<int> sync_errno_{0};
  const char* failed_call_ = "";
};

// Peer "write(2)": one write() per record to an O_APPEND file.
class WriteSubject : public PeerState {
 public:
  static constexpr const char* kName = "write(2)";

  WriteSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
               std::uint64_t /*segment_bytes: one growing file*/)
      : path_((dir / "journal.log").string()), syncer_(*this, policy, window_us) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error(errno_text("write(2) peer: cannot create " + path_, errno));
  }
  ~WriteSubject() { ::close(fd_); }
  WriteSubject(const WriteSubject&) = delete;
  WriteSubject& operator=(const WriteSubject&) = delete;

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept {
    const nx::JournalRecord r = encode(next_seq_, rq);
    const ssize_t n = ::write(fd_, &r, sizeof r);
    if (n != static_cast<ssize_t>(sizeof r)) [[unlikely]] {
      append_errno_.store(n < 0 ? errno : ENOSPC);  // a short write: the disk filled
      return false;
    }
    appended_.store(next_seq_++, std::memory_order_release);
    return true;
  }
  bool sync() noexcept {
    const std::uint64_t target = appended_.load(std::memory_order_acquire);
    if (::fdatasync(fd_) != 0) {
      sync_errno_.store(errno);
      return false;
    }
    durable_.store(target, std::memory_order_release);
    return true;
  }
  PeerSyncer<WriteSubject>& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const {
    if (const int e = append_errno_.load()) return errno_text("write to " + path_, e);
    if (const int e = sync_errno_.load()) return errno_text("fdatasync of " + path_, e);
    return "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  PeerSyncer<WriteSubject> syncer_;
};

// Peer "naive mmap": memcpy into a MAP_SHARED | MAP_POPULATE mapping of a
// posix_fallocate'd file; a full file is replaced inline by a new one of the
// same size (its descriptor handed to the syncer, as the journal did).
class MmapSubject : public PeerState {
 public:
  static constexpr const char* kName = "naive mmap";

  MmapSubject(const std::filesystem::path& dir, FsyncPolicy policy, std::uint32_t window_us,
              std::uint64_t segment_bytes)
      : dir_(dir.string()), segment_bytes_(segment_bytes), syncer_(*this, policy, window_us) {
    replaced_.reserve(64);
    spare_.reserve(64);
    if (!roll()) throw std::runtime_error("naive mmap peer: " + error());
  }
  ~MmapSubject() {
    if (map_ != nullptr) ::munmap(map_, segment_bytes_);
    if (const int fd = current_fd_.load(); fd >= 0) ::close(fd);
    for (const int fd : replaced_) ::close(fd);
  }
  MmapSubject(const MmapSubject&) = delete;
  MmapSubject& operator=(const MmapSubject&) = delete;

  NT_ALWAYS_INLINE bool append(const ne::Request& rq) noexcept {
    if (offset_ + sizeof(nx::JournalRecord) > segment_bytes_) [[unlikely]] {
      if (!roll()) return false;
    }
    const nx::JournalRecord r = encode(next_seq_, rq);
    std::memcpy(map_ + offset_, &r, sizeof r);
    offset_ += sizeof r;
    appended_.store(next_seq_++, std::memory_order_release);
    return true;
  }
  // One thread at a time (the background runner, or the appending thread
  // under policy every): it alone closes replaced files.
  bool sync() noexcept {
    std::uint64_t target;
    int fd;
    {
      std::lock_guard lock(fds_mutex_);
      target = appended_.load(std::memory_order_acquire);
      spare_.swap(replaced_);  // both reserved: no allocation here
      fd = current_fd_.load(std::memory_order_acquire);
    }
    bool ok = true;
    for (const int old : spare_) {
      if (::fdatasync(old) != 0 && ok) {
        sync_errno_.store(errno);
        ok = false;
      }
      ::close(old);
    }
    spare_.clear();
    if (::fdatasync(fd) != 0 && ok) {
      sync_errno_.store(errno);
      ok = false;
    }
    if (ok) durable_.store(target, std::memory_order_release);
    return ok;
  }
  PeerSyncer<MmapSubject>& background() noexcept { return syncer_; }
  bool background_failed() const noexcept { return syncer_.failed(); }
  std::string error() const {
    if (const int e = append_errno_.load()) return errno_text(std::string(failed_call_) + " in " + dir_, e);
    if (const int e = sync_errno_.load()) return errno_text("fdatasync in " + dir_, e);
    return "";
  }

 private:
  bool roll() noexcept {
    char path[4096];
    std::snprintf(path, sizeof path, "%s/segment-%06llu.log", dir_.c_str(), static_cast<unsigned long long>(files_));
    const auto fail = [&](const char* call, int err, int fd) {
      failed_call_ = call;
      append_errno_.store(err);
      if (fd >= 0) ::close(fd);
      return false;
    };
    const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail("open", errno, -1);
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(segment_bytes_)); err != 0)
      return fail("posix_fallocate", err, fd);
    void* p = ::mmap(nullptr, segment_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) return fail("mmap", errno, fd);
    if (map_ != nullptr) ::munmap(map_, segment_bytes_);
    map_ = static_cast<unsigned char*>(p);
    offset_ = 0;
    {
      std::lock_guard lock(fds_mutex_);
      if (const int old = current_fd_.load(std::memory_order_relaxed); old >= 0) replaced_.push_back(old);
      current_fd_.store(fd, std::memory_order_release);
    }
    ++files_;
    return true;
  }

  std::string dir_;
  std::uint64_t segment_bytes_;
  unsigned char* map_ = nullptr;  // appending thread
  std::uint64_t offset_ = 0;
  std::uint64_t files_ = 0;
  std::mutex fds_mutex_;  // replaced_ and current_fd_ changes
  std::atomic<int> current_fd_{-1};
  std::vector<int> replaced_;
  std::vector<int> spare_;  // the syncer's
  PeerSyncer<MmapSubject> syncer_;
};

}  // namespace
