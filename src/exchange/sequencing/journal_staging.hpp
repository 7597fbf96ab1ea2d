// The journal's staging ring (docs/EXCHANGE.md "Journal"): where the
// sequencer puts each record, in shared memory that outlives the process.
//
// Why: the sequencer must never wait for the disk. Writing records straight
// into mapped segment pages made it take page faults on fresh pages and on
// pages the kernel was writing back (fdatasync write-protects them), each
// tens of microseconds and, under writeback, milliseconds: p99 3-5 ms at
// every offered rate. Now the sequencer copies a 64-byte record into a
// prefaulted slot of this ring and publishes its seq: a memcpy, a CRC and a
// store, no system call, no fault. The journal thread (the auxiliary one;
// the sequencer itself with fsync = every) writes the published records into
// the segment files with pwrite and syncs them; a slot is reused only once
// its record is in a segment file (in the page cache, at least).
//
// Why shared memory: a kill -9 must lose nothing acknowledged. The ring is a
// file on tmpfs (/dev/shm, or $NANOTICK_STAGING_DIR), so records the process
// published but had not yet written to the journal files survive it; the
// next start-up reads them (read_staged_records) and writes them to the
// files before it takes an order. A machine crash loses the ring, exactly
// what it loses of the page cache (the fsync policy says how much).
//
// Naming: one ring per journal directory, named after the directory's
// device and inode (two directories never share a ring, a copy of a
// directory gets none) and checked against the journal id that the
// directory's `journal.id` file holds (a ring left by a deleted directory
// whose inode was reused is someone else's: ignored, then replaced).
//
// Layout (little-endian): a 4096-byte header -- magic "NTSTAGE1", u32
// version, u32 record size (64), u64 capacity (records, a power of two),
// u64 journal id, u64 engine fingerprint; then on their own cache lines the
// published seq (highest seq whose record is whole in its slot; written by
// the appender) and the written seq (highest seq in the segment files;
// written by the journal thread) -- then `capacity` slots, record seq s in
// slot s mod capacity, each a JournalRecord with its CRC.
//
// Threads: publish side (has_room/append) on one thread; write side
// (next_unwritten/mark_written) on one thread; any thread may read the
// seqs. Opening and reading back are start-up code: allocate, throw.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exchange/sequencing/journal_format.hpp"

namespace nanotick::exchange {

inline constexpr char kStagingMagic[8] = {'N', 'T', 'S', 'T', 'A', 'G', 'E', '1'};
inline constexpr std::uint32_t kStagingVersion = 1;
inline constexpr std::uint64_t kStagingRecords = 1u << 16;  // 4 MiB: 65 ms of records at 1 M/s

// The journal directory's id: read from `<dir>/journal.id` (16 hex digits),
// created (random, durable) when `create` and missing. 0 = none (not created).
std::uint64_t journal_id(const std::string& journal_dir, bool create);

// Where the staging ring of `journal_dir` lives ("" if the directory does
// not exist). $NANOTICK_STAGING_DIR overrides /dev/shm (tests use it to play
// a machine crash: the ring is gone, the files are what was synced).
std::string staging_ring_path(const std::string& journal_dir);

// Records a previous run published and never wrote to the journal files,
// read back at start-up without changing anything.
struct StagedRecords {
  std::string path;                  // the ring's file ("" = none found)
  std::string ignored;               // why a ring that was found is not this journal's ("" = used or none)
  std::uint64_t published_seq = 0;   // the ring's published seq (0 = no ring used)
  std::uint64_t written_seq = 0;     // its written seq
  std::vector<JournalRecord> records;  // seq from_seq.. in order (empty: nothing the files lack)
};

// Reads the ring of `journal_dir`: the records from `from_seq` (the seq the
// segment files continue at) up to the ring's published seq. Throws
// JournalError if the ring proves records are missing: it was published
// past from_seq but no longer holds from_seq (they are in neither place),
// or a slot it claims is damaged.
StagedRecords read_staged_records(const std::string& journal_dir, std::uint64_t fingerprint, std::uint64_t from_seq);

// The ring, open for appending (the exchange's journal). Creates it, or
// reuses the one left by a killed run (after start-up wrote its records to
// the files). Throws std::runtime_error naming the path and the error.
class StagingRing {
 public:
  // `last_seq`: the seq the journal's files hold up to. A ring this
  // journal's last run left keeps the records it holds after that (start-up
  // replayed them; the journal's first flush writes them to the files);
  // otherwise published and written both start at last_seq. Throws if a
  // kept slot no longer holds its record.
  StagingRing(const std::string& journal_dir, std::uint64_t journal_id, std::uint64_t fingerprint,
              std::uint64_t last_seq);
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Publish side. A slot for `seq` is free once seq - capacity has been
  // written to the files; the written seq is re-read only when the cached
  // one says no (one shared load per lap, not per record).
  bool has_room(std::uint64_t seq) noexcept {
    if (seq <= room_through_) [[likely]]
      return true;
    room_through_ = header_->written_seq.load(std::memory_order_acquire) + capacity_;
    return seq <= room_through_;
  }
  JournalRecord& slot(std::uint64_t seq) noexcept { return slots_[seq & mask_]; }
  const JournalRecord& slot(std::uint64_t seq) const noexcept { return slots_[seq & mask_]; }
  void publish(std::uint64_t seq) noexcept { header_->published_seq.store(seq, std::memory_order_release); }

  // Write side.
  std::uint64_t published_seq() const noexcept { return header_->published_seq.load(std::memory_order_acquire); }
  std::uint64_t written_seq() const noexcept { return header_->written_seq.load(std::memory_order_acquire); }
  void mark_written(std::uint64_t seq) noexcept { header_->written_seq.store(seq, std::memory_order_release); }
  // Records from `seq` that lie contiguously in memory (up to the ring's end).
  std::uint64_t contiguous_from(std::uint64_t seq) const noexcept { return capacity_ - (seq & mask_); }

  std::uint64_t capacity() const noexcept { return capacity_; }
  const std::string& path() const noexcept { return path_; }
  bool locked_in_memory() const noexcept { return locked_; }
  // Clean shutdown with every record in the files: the ring is not needed.
  void remove() noexcept;

  struct alignas(64) Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t record_size;
    std::uint64_t capacity;
    std::uint64_t journal_id;
    std::uint64_t fingerprint;
    alignas(64) std::atomic<std::uint64_t> published_seq;
    alignas(64) std::atomic<std::uint64_t> written_seq;
  };

 private:
  std::string path_;
  std::uint64_t capacity_ = kStagingRecords;
  std::uint64_t mask_ = kStagingRecords - 1;
  std::uint64_t room_through_ = 0;  // publish side's cache: seqs up to here have a free slot
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  Header* header_ = nullptr;
  JournalRecord* slots_ = nullptr;
  bool locked_ = false;
};

inline constexpr std::size_t kStagingHeaderBytes = 4096;
static_assert(sizeof(StagingRing::Header) <= kStagingHeaderBytes);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace nanotick::exchange
