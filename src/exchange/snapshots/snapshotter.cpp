#include "exchange/snapshots/snapshotter.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "exchange/snapshots/engine_snapshot.hpp"

namespace nanotick::exchange {

namespace {
constexpr std::size_t kRecordsPerPass = 4096;
}

Snapshotter::Snapshotter(const ExchangeConfig& config, JournalWriter& journal, const engine::EngineState& state,
                         const controls::ControlsState& balances, std::uint64_t state_seq)
    : config_(config),
      journal_(journal),
      fingerprint_(config.engine_fingerprint()),
      shadow_(config.engine, config.controls(), sink_),
      applied_seq_(state_seq),
      buffer_(kRecordsPerPass) {
  shadow_.import_state(state, balances);
  last_snapshot_seq_.set(state_seq);
}

Snapshotter::~Snapshotter() {
  if (fd_ >= 0) ::close(fd_);
}

std::string Snapshotter::error() const { return failed_flag_.load(std::memory_order_acquire) ? error_ : std::string(); }

bool Snapshotter::open_segment_for(std::uint64_t seq) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  // The segment holding `seq` is the one with the largest first seq <= seq.
  std::uint64_t best = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(config_.journal.dir, ec)) {
    std::uint64_t first = 0;
    if (parse_segment_file_name(e.path().filename().string(), first) && first <= seq && first > best) best = first;
  }
  if (best == 0) return false;
  const std::string path = config_.journal.dir + "/" + segment_file_name(best);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  segment_first_ = best;
  segment_records_ = (static_cast<std::uint64_t>(st.st_size) - sizeof(SegmentHeader)) / sizeof(JournalRecord);
  return seq < segment_first_ + segment_records_;
}

std::size_t Snapshotter::read_records(std::uint64_t first, std::size_t count) {
  if (fd_ < 0 || first < segment_first_ || first >= segment_first_ + segment_records_) {
    if (!open_segment_for(first)) return 0;
  }
  count = std::min<std::uint64_t>({count, buffer_.size(), segment_first_ + segment_records_ - first});
  const auto off = static_cast<off_t>(sizeof(SegmentHeader) + (first - segment_first_) * sizeof(JournalRecord));
  const ssize_t got = ::pread(fd_, buffer_.data(), count * sizeof(JournalRecord), off);
  if (got <= 0) return 0;
  const auto whole = std::min(count, static_cast<std::size_t>(got) / sizeof(JournalRecord));
  for (std::size_t i = 0; i < whole; ++i) {
    const JournalRecord& r = buffer_[i];
    if (r.length != sizeof(JournalRecord) || r.seq != first + i || r.crc != record_crc(r)) return i;
  }
  return whole;
}

bool Snapshotter::ledger_holds_every_trade() const noexcept {
  return ledger_ == nullptr || ledger_->written_exec_seq() >= sink_.last_fill_seq;
}

int Snapshotter::do_work() noexcept {
  if (failed_) return 0;
  const std::uint64_t target = journal_.written_seq();  // what the files hold
  int work = 0;
  const bool due =
      config_.journal.snapshot_every != 0 && applied_seq_ - last_snapshot_seq_.get() >= config_.journal.snapshot_every;
  if (due && !ledger_holds_every_trade()) {
    held_for_ledger_.add();
    return 0;  // nothing more applied until the ledger has caught up with the snapshot's state
  }
  try {
    // One pread per batch of records (up to kRecordsPerPass, within one
    // segment), not one per record: at full order rate the per-record system
    // calls made this thread half a core's worth of kernel time.
    if (applied_seq_ < target) {
      const std::size_t n = read_records(applied_seq_ + 1, static_cast<std::size_t>(target - applied_seq_));
      if (n == 0) {
        error_ = "snapshotter: cannot read journal record " + std::to_string(applied_seq_ + 1) + " in " +
                 config_.journal.dir;
        failed_ = true;
        failed_flag_.store(true, std::memory_order_release);
        return work;
      }
      for (std::size_t i = 0; i < n; ++i) shadow_.process(buffer_[i].request);
      applied_seq_ += n;
      work = static_cast<int>(n);
    }
    if (config_.journal.snapshot_every != 0 &&
        applied_seq_ - last_snapshot_seq_.get() >= config_.journal.snapshot_every && ledger_holds_every_trade())
      snapshot_now();
  } catch (const std::exception& e) {
    error_ = std::string("snapshotter: ") + e.what();
    failed_ = true;
    failed_flag_.store(true, std::memory_order_release);
  }
  return work;
}

void Snapshotter::snapshot_now() {
  // Everything the snapshot holds must be on disk in the journal first.
  if (!journal_.sync())
    throw std::runtime_error("journal fdatasync failed before a snapshot: " + journal_.sync_error());
  write_engine_snapshot(config_.journal.dir, applied_seq_, fingerprint_, shadow_.export_state(),
                        shadow_.export_controls());
  last_snapshot_seq_.set(applied_seq_);
  written_.add();
}

void Snapshotter::finish() {
  if (failed_) return;
  while (applied_seq_ < journal_.written_seq() && do_work() > 0) {
  }
  // At a clean stop the ledger's writer has drained and closed first; if it
  // failed, it holds fewer trades than the state and no snapshot is written.
  if (!failed_ && config_.journal.snapshot_every != 0 && applied_seq_ != last_snapshot_seq_.get() &&
      ledger_holds_every_trade()) {
    try {
      snapshot_now();
    } catch (const std::exception& e) {
      error_ = std::string("snapshotter: ") + e.what();
      failed_ = true;
      failed_flag_.store(true, std::memory_order_release);
    }
  }
}

}  // namespace nanotick::exchange
