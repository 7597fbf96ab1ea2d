// The journal (docs/EXCHANGE.md "Journal"): fixed 64-byte CRC-32C records in
// preallocated segment files, reached in two steps so that the sequencer
// never waits for the disk:
// - append() (the sequencer): the record into the staging ring
//   (journal_staging.hpp), shared memory that survives a kill -9: a memcpy,
//   a CRC and a store; no system call, no page fault;
// - flush() (the journal thread: the auxiliary one, or the sequencer itself
//   with fsync = every): the published records into the segment files with
//   pwrite, whole runs at a time; sync(): fdatasync of every segment written
//   since the last sync.
// A record is acknowledged once appended (batch, none) or once synced
// (every); either way a killed process loses nothing acknowledged: the ring
// or the page cache holds it.
//
// Threads: append() and next_seq() on one thread (the sequencer); flush()
// on one thread at a time (the journal thread; the shutdown after it has
// stopped); sync() from any thread (one at a time, internally); the seq
// accessors and failed() from anywhere. Segment creation (every
// segment_bytes / 64 records) happens in flush(), off the sequencer's
// thread with batch and none; a full disk shows up there (failed(), error()).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "engine/request.hpp"
#include "exchange/sequencing/journal_format.hpp"
#include "exchange/sequencing/journal_staging.hpp"

namespace nanotick::exchange {

// Where appending continues: from recover_journal(), or fresh.
struct JournalTail {
  std::uint64_t next_seq = 1;        // seq after the last record in the segment files
  std::string segment_path;          // segment holding the last good record ("" = none yet)
  std::uint64_t segment_first_seq = 0;
  std::uint64_t offset = 0;          // byte offset after the last good record in that segment
};

class JournalWriter {
 public:
  // Opens `dir` (created if missing) for appending at `tail`, with its
  // staging ring; records a killed run left in the ring after `tail` are
  // written to the files and synced here. Throws std::runtime_error naming
  // the path and the system error.
  JournalWriter(std::string dir, std::uint64_t segment_bytes, std::uint64_t fingerprint, const JournalTail& tail);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends `rq` as record next_seq() and returns true; false when the
  // ring has no free slot (the journal thread is a ring behind: try again
  // later; nothing was appended). The caller checks failed() before it
  // acknowledges anything more: after a failure, appends are never written.
  NT_ALWAYS_INLINE bool append(const engine::Request& rq) noexcept {
    if (!ring_.has_room(next_seq_)) [[unlikely]]
      return note_no_room();
    JournalRecord& r = ring_.slot(next_seq_);
    r.length = sizeof(JournalRecord);
    r.type = RecordType::kEngineRequest;
    r.reserved = 0;
    r.seq = next_seq_;
    r.request = rq;
    r.crc = record_crc(r);
    ring_.publish(next_seq_);
    records_.add();
    ++next_seq_;
    return true;
  }

  std::uint64_t next_seq() const noexcept { return next_seq_; }
  std::uint64_t last_seq() const noexcept { return next_seq_ - 1; }
  // The journal thread could not write (disk full, I/O error); any thread.
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  // Why (without a "journal: " prefix: the caller says whose error it is);
  // read after failed() returned true.
  const std::string& error() const noexcept { return error_; }

  // Journal thread: writes every appended record not yet in the files.
  // Returns false (failed()) when a segment cannot be made or written.
  bool flush() noexcept;
  // Makes every record flushed before the call durable (fdatasync). Returns
  // false (and records the error) if the kernel reports a write-back failure.
  bool sync();
  // The fsync = none policy: closes the descriptors of replaced segments
  // without syncing them (nobody else would, and they would pile up).
  void release_replaced() noexcept;
  // Why the last sync() failed ("" if none did); any thread.
  std::string sync_error() const;
  // Clean shutdown, once nothing appends or flushes any more: flushes, syncs
  // unless `sync` is false, and removes the staging ring when the files
  // hold everything (so does the destructor). Returns false if the flush or
  // sync failed.
  bool finish(bool sync);

  // Highest seq appended (in the staging ring); readable from any thread.
  std::uint64_t appended_seq() const noexcept { return ring_.published_seq(); }
  // Highest seq in the segment files (the page cache, at least).
  std::uint64_t written_seq() const noexcept { return ring_.written_seq(); }
  // Highest seq known durable (by a completed sync()).
  std::uint64_t durable_seq() const noexcept { return durable_seq_.load(std::memory_order_acquire); }

  std::uint64_t records() const noexcept { return records_.get(); }
  std::uint64_t syncs() const noexcept { return syncs_.get(); }
  std::uint64_t segments_created() const noexcept { return segments_created_.get(); }  // any thread
  std::uint64_t ring_full() const noexcept { return ring_full_.get(); }
  const StagingRing& staging() const noexcept { return ring_; }
  // Start-up, before the appending thread runs: the counters into `file`.
  void place_counters(core::CountersFile& file);

 private:
  NT_COLD bool note_no_room() noexcept;
  bool open_segment(std::uint64_t first_seq) noexcept;  // new segment, becomes current
  void open_existing(const JournalTail& tail);
  bool write_run(std::uint64_t first, std::uint64_t count) noexcept;

  std::string dir_;
  std::uint64_t segment_bytes_;
  std::uint64_t fingerprint_;
  StagingRing ring_;
  // Appending thread.
  std::uint64_t next_seq_ = 1;
  core::Counter records_;
  core::Counter ring_full_;
  // Journal thread (flush): on lines of their own, so that its writes per
  // flush never take the line the sequencer writes per append.
  alignas(core::kCacheLine) std::uint64_t offset_ = 0;  // in the current segment
  std::uint64_t file_seq_ = 0;     // highest seq in the files
  core::Counter bytes_;
  core::Counter writes_;
  core::Counter segments_created_;
  // Read by the sequencer every pass, written once: a line of its own.
  alignas(core::kCacheLine) std::atomic<bool> failed_{false};
  std::string error_;
  // Shared with sync().
  std::atomic<int> current_fd_{-1};  // replaced only by the journal thread
  std::atomic<std::uint64_t> durable_seq_{0};
  core::Counter syncs_;  // written under sync_mutex_: one writer at a time
  mutable std::mutex
      fds_mutex_;  // guards unsynced_fds_, current_fd_ changes, sync_error_ (flush takes it only at a segment switch)
  std::vector<int> unsynced_fds_;  // segments replaced since the last sync (sync() closes them)
  std::string sync_error_;
  std::mutex sync_mutex_;  // one sync() at a time
};

}  // namespace nanotick::exchange
