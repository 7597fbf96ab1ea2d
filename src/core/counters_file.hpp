// A process's counters as data others can read while it runs (docs/TELEMETRY.md
// "The counters file"; Aeron's CnC file and AeronStat are the model): a
// memory-mapped file holding a label, an id, a kind and a 64-bit value per
// counter. Each value is written by its counter's single owner (through the
// core::Counter it placed here at start-up); `./nanotick stat` and the demo
// map the file read-only and read the values with relaxed loads, from
// another process, at any time, without asking the writer anything.
//
// Layout (little-endian; every offset is in the header, so a reader needs no
// constant but the magic and the version):
//
//   0      Header (one 4 KiB page)      magic "NTCOUNT1", version, capacity,
//                                       offsets, pid, start time, process name,
//                                       count (release-published), state
//   4096   Metadata[capacity]           128 bytes each: id, kind, label length, label
//   V      Value[capacity]              8 bytes each (V = 4096 + 128 x capacity,
//                                       a multiple of 64), written by the owner
//
// Counter id = slot index. A reader reads `count` (acquire), then the first
// `count` metadata records (complete before count covered them) and values.
// Records of kind kUnused are padding: each begin_group() starts the next
// owner's values on a fresh cache line, so two threads' counters never share
// one (no false sharing between, say, the gateway's and the sequencer's).
//
// The file stays after the process ends (its last values, state "stopped" if
// it ended cleanly) until the next process creates it again. While a process
// owns it, it holds an exclusive flock(2) on it: a second process asked for
// the same path is refused with a message, and a kill -9 releases the lock.
// Put the file on tmpfs (/dev/shm) for a production run: a disk-backed
// mapping's writeback write-protects its dirty pages, and the hot thread's
// next update of that page takes a minor page fault.
//
// Thread-safety: the constructor, begin_group(), place() and mark_stopped()
// on one thread (start-up, shutdown); values are written by their owners'
// threads through core::Counter; for_each() and text_report() from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/counter.hpp"

namespace nanotick::core {

enum class CounterKind : std::uint16_t {
  kUnused = 0,  // padding before a group's first counter
  kCount = 1,   // monotonic, unsigned
  kGauge = 2,   // a level that goes up and down, signed (two's complement in the slot)
  kReal = 3,    // a real number: the slot holds the bits of a double (Counter::set_real)
};

enum class CountersState : std::uint32_t {
  kCreating = 0,
  kRunning = 1,
  kStopped = 2,  // the process called mark_stopped(): it ended cleanly
};

namespace counters_layout {
inline constexpr char kMagic[8] = {'N', 'T', 'C', 'O', 'U', 'N', 'T', '1'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint32_t kHeaderBytes = 4096;
inline constexpr std::uint32_t kMetadataBytes = 128;
inline constexpr std::uint32_t kMaxLabelBytes = 119;  // the label field (120 bytes) keeps a NUL at its end
inline constexpr std::uint32_t kValueBytes = 8;
inline constexpr std::uint32_t kValuesPerLine = 64 / kValueBytes;
inline constexpr std::uint32_t kMaxCapacity = 1u << 20;

struct Header {
  std::atomic<std::uint64_t> magic;  // the bytes of kMagic, stored last with release (CountersFile's constructor)
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint32_t capacity;
  std::uint32_t metadata_bytes;
  std::uint64_t metadata_offset;
  std::uint64_t values_offset;
  std::int64_t pid;
  std::int64_t start_unix_ns;
  char process[64];  // NUL-padded
  std::atomic<std::uint32_t> count;  // slots in use (padding included)
  std::atomic<std::uint32_t> state;  // CountersState
};
static_assert(sizeof(Header) <= kHeaderBytes);
static_assert(offsetof(Header, count) == 120 && offsetof(Header, state) == 124, "docs/TELEMETRY.md draws these");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free);

struct Metadata {
  std::uint32_t id;
  std::uint16_t kind;  // CounterKind
  std::uint16_t label_length;
  char label[kMaxLabelBytes + 1];  // label_length bytes used, the rest NUL
};
static_assert(sizeof(Metadata) == kMetadataBytes);
}  // namespace counters_layout

class CountersFile {
 public:
  struct Options {
    std::string path;     // empty: the counters live in anonymous memory (tests, embedding)
    std::string process;  // what `stat` shows, e.g. "exchange", "trader-mm1"
    std::uint32_t capacity = 2048;
  };

  // Creates (or takes over and truncates) the file, mode 0600, and maps it.
  // Throws std::runtime_error naming the path and what failed (another live
  // process holds it, no such directory, ...), std::invalid_argument for a
  // capacity outside [1, 2^20].
  explicit CountersFile(const Options& options);
  ~CountersFile();
  CountersFile(const CountersFile&) = delete;
  CountersFile& operator=(const CountersFile&) = delete;

  // The next place() starts a new cache line: call it before each owner's counters.
  void begin_group() noexcept;
  // Moves `counter`'s value into a new slot labelled `label` and returns its
  // id. Start-up only. Throws std::invalid_argument for an empty, too long
  // (> 119 bytes), non-printable, space-padded or duplicate label (spaces
  // inside are fine: "session.disconnect.connect failed"), std::length_error when
  // the file is full.
  std::uint32_t place(Counter& counter, std::string_view label, CounterKind kind = CounterKind::kCount);
  // The process is ending cleanly: readers see state kStopped.
  void mark_stopped() noexcept;

  std::uint32_t size() const noexcept;  // slots in use, padding included
  const std::string& path() const noexcept { return path_; }

  struct Entry {
    std::uint32_t id;
    CounterKind kind;
    std::string_view label;
    std::uint64_t value;  // a kGauge's is an int64 in two's complement, a kReal's a double's bits
  };
  // Every counter in id order (padding skipped).
  template <typename Fn>
  void for_each(Fn&& fn) const {
    const std::uint32_t n = header()->count.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < n; ++i) {
      const counters_layout::Metadata& m = metadata(i);
      if (m.kind == static_cast<std::uint16_t>(CounterKind::kUnused)) continue;
      fn(Entry{m.id, static_cast<CounterKind>(m.kind), std::string_view(m.label, m.label_length),
               value(i).load(std::memory_order_relaxed)});
    }
  }
  // "label value" lines, gauges signed, reals with 6 decimals: what the
  // processes print at exit.
  std::string text_report() const;
  // One value as text_report() prints it.
  static std::string format_value(const Entry& e);

 private:
  counters_layout::Header* header() const noexcept { return static_cast<counters_layout::Header*>(base_); }
  counters_layout::Metadata& metadata(std::uint32_t i) const noexcept;
  std::atomic<std::uint64_t>& value(std::uint32_t i) const noexcept;

  std::string path_;
  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t next_ = 0;
  std::unordered_set<std::string> labels_;
};

}  // namespace nanotick::core
