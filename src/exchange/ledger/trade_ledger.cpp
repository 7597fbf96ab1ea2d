#include "exchange/ledger/trade_ledger.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/crc32c.hpp"
#include "core/tsc_clock.hpp"

namespace nanotick::exchange {

namespace {

constexpr char kMagic[8] = {'N', 'T', 'L', 'E', 'D', 'G', '0', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = kLedgerHeaderBytes;
constexpr std::size_t kBatch = 256;
constexpr std::uint64_t kSyncEveryNs = 1'000'000;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t record_bytes;
  std::uint64_t fingerprint;
  std::uint64_t created_ns;
  std::uint8_t reserved[kHeaderBytes - 32];
};
static_assert(sizeof(Header) == kHeaderBytes);

std::uint32_t crc_of(const TradeRecord& t) noexcept { return trade_record_crc(t); }

std::string errno_text(int e) { return std::strerror(e); }

std::vector<std::uint8_t> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("trade ledger " + path + ": cannot open: " + errno_text(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw std::runtime_error("trade ledger " + path + ": cannot read: " + errno_text(e));
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

std::uint32_t trade_record_crc(const TradeRecord& t) noexcept {
  return core::crc32c(0, &t, offsetof(TradeRecord, crc));
}

LedgerContents read_trade_ledger(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_file(path);
  LedgerContents c;
  c.file_bytes = bytes.size();
  if (bytes.size() < kHeaderBytes) throw std::runtime_error("trade ledger " + path + ": shorter than its header");
  Header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    throw std::runtime_error("trade ledger " + path + ": not a nanotick trade ledger (bad magic)");
  if (h.version != kVersion || h.record_bytes != sizeof(TradeRecord))
    throw std::runtime_error("trade ledger " + path + ": unsupported version " + std::to_string(h.version));
  c.fingerprint = h.fingerprint;
  c.created_ns = h.created_ns;
  std::size_t at = kHeaderBytes;
  std::uint64_t expect = 1;
  while (at + sizeof(TradeRecord) <= bytes.size()) {
    TradeRecord t;
    std::memcpy(&t, bytes.data() + at, sizeof t);
    if (crc_of(t) != t.crc) {
      c.problem = "record " + std::to_string(expect) + " at byte " + std::to_string(at) + ": CRC mismatch";
      break;
    }
    if (t.trade_seq != expect) {
      c.problem = "record at byte " + std::to_string(at) + ": trade_seq " + std::to_string(t.trade_seq) +
                  ", expected " + std::to_string(expect);
      break;
    }
    c.trades.push_back(t);
    ++expect;
    at += sizeof t;
  }
  c.good_bytes = at;
  if (c.problem.empty() && at != bytes.size())
    c.problem = std::to_string(bytes.size() - at) + " bytes of a partial record at the end";
  if (!c.problem.empty()) {
    // Records after the break that pass their CRC: the break is in the middle.
    for (std::size_t slot = at; slot + sizeof(TradeRecord) <= bytes.size(); slot += sizeof(TradeRecord)) {
      TradeRecord t;
      std::memcpy(&t, bytes.data() + slot, sizeof t);
      if (crc_of(t) != t.crc) continue;
      if (c.valid_after_break == 0 || t.trade_seq < c.valid_after_min_seq) c.valid_after_min_seq = t.trade_seq;
      if (c.valid_after_break == 0 || t.trade_seq > c.valid_after_max_seq) c.valid_after_max_seq = t.trade_seq;
      ++c.valid_after_break;
    }
    c.damage = c.valid_after_break != 0 ? LedgerDamage::kCorrupt : LedgerDamage::kTornTail;
  }
  return c;
}

const char* to_string(LedgerDamage d) noexcept {
  switch (d) {
    case LedgerDamage::kNone: return "clean";
    case LedgerDamage::kTornTail: return "torn tail";
    case LedgerDamage::kCorrupt: return "corrupt";
  }
  return "?";
}

std::string corrupt_ledger_message(const std::string& path, const LedgerContents& c) {
  return "trade ledger " + path + " is damaged in the middle: " + c.problem + ", and " +
         std::to_string(c.valid_after_break) + " record(s) after it pass their CRC (trade_seq " +
         std::to_string(c.valid_after_min_seq) + ".." + std::to_string(c.valid_after_max_seq) +
         "). The exchange will not start on it (cutting there would delete those trades) and has changed nothing. "
         "See `./nanotick ledger verify " +
         path + "`; `./nanotick ledger repair " + path +
         "` cuts it at the damage after keeping a copy, and the exchange then puts back the trades its journal "
         "still has";
}

LedgerPlan plan_trade_ledger(const std::string& path, std::uint64_t fingerprint) {
  LedgerPlan plan;
  plan.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) {
    plan.missing = true;
    return plan;
  }
  LedgerContents c;
  try {
    c = read_trade_ledger(path);
  } catch (const std::runtime_error& e) {
    throw LedgerError(e.what());
  }
  if (c.fingerprint != fingerprint)
    throw LedgerError("trade ledger " + path + ": written for another venue config (fingerprint " +
                      std::to_string(c.fingerprint) + ")");
  if (c.damage == LedgerDamage::kCorrupt) throw LedgerError(corrupt_ledger_message(path, c));
  if (!c.trades.empty()) {
    plan.next_trade_seq = c.trades.back().trade_seq + 1;
    plan.last_request_seq = c.trades.back().request_seq;
    plan.last_exec_seq = std::max(c.trades.back().buy_exec_seq, c.trades.back().sell_exec_seq);
  }
  plan.good_bytes = c.good_bytes;
  plan.cut_bytes = c.file_bytes - c.good_bytes;
  plan.cut_reason = c.problem;
  return plan;
}

TradeLedger::TradeLedger(std::string path, std::uint64_t fingerprint, LedgerRing& ring)
    : TradeLedger(plan_trade_ledger(path, fingerprint), fingerprint, ring) {}

TradeLedger::TradeLedger(const LedgerPlan& plan, std::uint64_t fingerprint, LedgerRing& ring)
    : path_(plan.path), plan_(plan), ring_(ring) {
  batch_.reserve(kBatch);
  if (!plan.missing) {
    cut_bytes_ = plan.cut_bytes;
    cut_reason_ = plan.cut_reason;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("trade ledger " + path_ + ": cannot open: " + errno_text(errno));
    if (cut_bytes_ != 0 && ::ftruncate(fd_, static_cast<off_t>(plan.good_bytes)) != 0)
      throw std::runtime_error("trade ledger " + path_ + ": cannot cut its torn tail: " + errno_text(errno));
    if (::lseek(fd_, static_cast<off_t>(plan.good_bytes), SEEK_SET) < 0)
      throw std::runtime_error("trade ledger " + path_ + ": cannot seek: " + errno_text(errno));
  } else {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("trade ledger " + path_ + ": cannot create: " + errno_text(errno));
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.record_bytes = sizeof(TradeRecord);
    h.fingerprint = fingerprint;
    h.created_ns = static_cast<std::uint64_t>(core::TscClock::global().to_epoch_ns(core::TscClock::global().now()));
    if (!write_all(&h, sizeof h) || ::fdatasync(fd_) != 0)
      throw std::runtime_error("trade ledger " + path_ + ": cannot write its header: " + errno_text(errno));
  }
  last_seq_.set(plan.next_trade_seq - 1);
  written_exec_seq_.store(plan.last_exec_seq, std::memory_order_release);
}

void TradeLedger::write_recovered(const std::vector<TradeRecord>& trades) {
  if (trades.empty()) return;
  const core::TscClock& clock = core::TscClock::global();
  std::vector<TradeRecord> out(trades);
  for (TradeRecord& t : out) {
    t.time_ns = static_cast<std::uint64_t>(clock.to_epoch_ns(t.time_ns));
    t.crc = crc_of(t);
  }
  if (!write_all(out.data(), out.size() * sizeof(TradeRecord)) || ::fdatasync(fd_) != 0)
    throw std::runtime_error("trade ledger " + path_ +
                             ": cannot write the trades the journal's replay put back: " + errno_text(errno));
  written_.add(out.size());
  last_seq_.set(out.back().trade_seq);
  written_exec_seq_.store(std::max(out.back().buy_exec_seq, out.back().sell_exec_seq), std::memory_order_release);
}

TradeLedger::~TradeLedger() {
  if (fd_ >= 0) ::close(fd_);
}

bool TradeLedger::write_all(const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n != 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void TradeLedger::sync_now() noexcept {
  if (!dirty_ || failed_) return;
  if (::fdatasync(fd_) != 0) {
    failed_ = true;
    error_ = "trade ledger " + path_ + ": fdatasync failed: " + errno_text(errno);
    failed_flag_.store(true, std::memory_order_release);
    return;
  }
  dirty_ = false;
  syncs_.add();
}

int TradeLedger::do_work() noexcept {
  if (failed_) return 0;
  const core::TscClock& clock = core::TscClock::global();
  int work = 0;
  for (;;) {
    batch_.clear();
    ring_.drain(
        [this, &clock](const TradeRecord& r) {
          TradeRecord t = r;
          t.time_ns = static_cast<std::uint64_t>(clock.to_epoch_ns(r.time_ns));
          t.crc = crc_of(t);
          batch_.push_back(t);
        },
        kBatch);
    if (batch_.empty()) break;
    if (!write_all(batch_.data(), batch_.size() * sizeof(TradeRecord))) {
      failed_ = true;
      error_ = "trade ledger " + path_ + ": write failed: " + errno_text(errno);
      failed_flag_.store(true, std::memory_order_release);
      return work;
    }
    written_.add(batch_.size());
    last_seq_.set(batch_.back().trade_seq);
    written_exec_seq_.store(std::max(batch_.back().buy_exec_seq, batch_.back().sell_exec_seq),
                            std::memory_order_release);
    dirty_ = true;
    work += static_cast<int>(batch_.size());
  }
  const std::uint64_t now = clock.now_ns();
  if (dirty_ && now - last_sync_ns_ >= kSyncEveryNs) {
    sync_now();
    last_sync_ns_ = now;
  }
  return work;
}

void TradeLedger::on_close() noexcept {
  (void)do_work();
  sync_now();
}

void TradeLedger::place_counters(core::CountersFile& file) {
  file.begin_group();
  file.place(written_, "ledger.trades_written");
  file.place(syncs_, "ledger.syncs");
  file.place(last_seq_, "ledger.last_trade_seq", core::CounterKind::kGauge);
}

}  // namespace nanotick::exchange
