// Appends sequenced engine requests to the journal (docs/EXCHANGE.md
// "Journal"): fixed 64-byte CRC-32C records in preallocated segment files
// written through a shared mapping, so an append is a memcpy and a CRC and a
// killed process loses nothing it appended (the page cache keeps it).
// Durability against a machine crash is sync()'s job: fdatasync of every
// segment written since the last sync.
//
// Threads: append() and the accessors on one thread (the sequencer); sync()
// may run on another thread (the auxiliary one, for the batch policy) or on
// the appending thread (the every policy); durable_seq() from anywhere.
// Segment creation (every segment_bytes / 64 records) allocates and makes
// system calls: the only cold step on the append path, and where a full disk
// shows up (append returns false; error() says why).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "engine/request.hpp"
#include "exchange/journal_format.hpp"

namespace nanotick::exchange {

// Where appending continues: from recover_journal(), or fresh.
struct JournalTail {
  std::uint64_t next_seq = 1;        // seq of the next record
  std::string segment_path;          // segment holding the last good record ("" = none yet)
  std::uint64_t segment_first_seq = 0;
  std::uint64_t offset = 0;          // byte offset after the last good record in that segment
};

class JournalWriter {
 public:
  // Opens `dir` (created if missing) for appending at `tail`. Throws
  // std::runtime_error naming the path and the system error.
  JournalWriter(std::string dir, std::uint64_t segment_bytes, std::uint64_t fingerprint, const JournalTail& tail);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends `rq` as record next_seq() and returns true; false when a new
  // segment could not be created (see error(); nothing was appended, and
  // nothing more will be: the caller must stop acknowledging).
  bool append(const engine::Request& rq) noexcept;

  std::uint64_t next_seq() const noexcept { return next_seq_; }
  std::uint64_t last_seq() const noexcept { return next_seq_ - 1; }
  bool failed() const noexcept { return failed_; }
  // Why (without a "journal: " prefix: the caller says whose error it is).
  const std::string& error() const noexcept { return error_; }

  // Makes every record appended before the call durable (fdatasync). Returns
  // false (and records the error) if the kernel reports a write-back failure.
  bool sync();
  // The fsync = none policy: closes the descriptors of replaced segments
  // without syncing them (nobody else would, and they would pile up).
  void release_replaced() noexcept;
  // Why the last sync() failed ("" if none did); any thread.
  std::string sync_error() const;

  // Highest seq appended; readable from any thread.
  std::uint64_t appended_seq() const noexcept { return appended_seq_.load(std::memory_order_acquire); }
  // Highest seq known durable (by a completed sync()).
  std::uint64_t durable_seq() const noexcept { return durable_seq_.load(std::memory_order_acquire); }

  std::uint64_t records() const noexcept { return records_.get(); }
  std::uint64_t syncs() const noexcept { return syncs_.get(); }
  std::uint64_t segments_created() const noexcept { return segments_created_.get(); }  // any thread
  // Start-up, before the appending thread runs: the counters into `file`.
  void place_counters(core::CountersFile& file);

 private:
  bool open_segment(std::uint64_t first_seq) noexcept;  // new segment, becomes current
  void open_existing(const JournalTail& tail);
  void unmap_current() noexcept;

  std::string dir_;
  std::uint64_t segment_bytes_;
  std::uint64_t fingerprint_;
  // Appending thread.
  unsigned char* map_ = nullptr;
  std::uint64_t offset_ = 0;
  std::uint64_t next_seq_ = 1;
  core::Counter records_;
  core::Counter bytes_;
  core::Counter segments_created_;
  bool failed_ = false;
  std::string error_;
  // Shared with sync().
  std::atomic<int> current_fd_{-1};  // replaced only by the appending thread
  std::atomic<std::uint64_t> appended_seq_{0};
  std::atomic<std::uint64_t> durable_seq_{0};
  core::Counter syncs_;  // written under sync_mutex_: one writer at a time
  mutable std::mutex
      fds_mutex_;  // guards unsynced_fds_, current_fd_ changes, sync_error_ (append takes it only at a segment switch)
  std::vector<int> unsynced_fds_;  // segments replaced since the last sync (sync() closes them)
  std::string sync_error_;
  std::mutex sync_mutex_;  // one sync() at a time
};

}  // namespace nanotick::exchange
