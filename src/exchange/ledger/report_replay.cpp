#include "exchange/ledger/report_replay.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "engine/types.hpp"
#include "exchange/ledger/trade_ledger.hpp"

namespace nanotick::exchange {

namespace {

constexpr std::size_t kRecordsPerRead = 64;  // one pread per 8 KiB: a long replay yields between reads

proto::ExecutionReport replayed_fill(const TradeRecord& t, bool buy) noexcept {
  auto r = proto::make_message<proto::ExecutionReport>(0);
  r.exec_seq = buy ? t.buy_exec_seq : t.sell_exec_seq;
  r.client_order_id = buy ? t.buy_client_order_id : t.sell_client_order_id;
  r.order_id = buy ? t.buy_order_id : t.sell_order_id;
  r.last_price = t.price;
  r.last_qty = t.qty;
  r.instrument = t.instrument;
  r.exec_type = proto::ExecType::kFill;
  const auto side = buy ? engine::Side::kBuy : engine::Side::kSell;
  r.side = static_cast<std::uint8_t>(side);
  r.is_maker = static_cast<std::uint8_t>(t.aggressor) != static_cast<std::uint8_t>(side) ? 1 : 0;
  r.flags = proto::kReportReplayed;
  return r;
}

}  // namespace

std::size_t replayed_fills(const TradeRecord& t, std::uint32_t client, std::uint64_t after,
                           proto::ExecutionReport (&out)[2]) noexcept {
  std::size_t n = 0;
  const bool buy = t.buy_client == client && t.buy_exec_seq > after;
  const bool sell = t.sell_client == client && t.sell_exec_seq > after;
  // A trade with itself has both sides: the lower exec_seq (the taker's) first.
  const bool buy_first = t.buy_exec_seq < t.sell_exec_seq;
  if (buy && (buy_first || !sell)) out[n++] = replayed_fill(t, true);
  if (sell) out[n++] = replayed_fill(t, false);
  if (buy && !buy_first && sell) out[n++] = replayed_fill(t, true);
  return n;
}

ReportReplayer::ReportReplayer(std::string ledger_path, TradeLedger* writer, ReplayRequestRing& requests,
                               ReplayAnswerRing& answers) noexcept
    : path_(std::move(ledger_path)), writer_(writer), requests_(requests), answers_(answers) {}

ReportReplayer::~ReportReplayer() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportReplayer::place_counters(core::CountersFile& file) {
  file.begin_group();
  file.place(served_, "replay.requests_served");
  file.place(replayed_, "replay.reports_replayed");
  file.place(read_failures_, "replay.read_failures");
}

int ReportReplayer::do_work() noexcept {
  int work = 0;
  if (!active_) {
    ReplayRequest rq;
    if (!requests_.try_pop(rq)) return 0;
    active_ = start(rq);
    ++work;
  }
  if (active_) active_ = step(work);
  return work;
}

// The file as it is once every trade the engine had made is in it.
bool ReportReplayer::start(const ReplayRequest& rq) noexcept {
  job_ = rq;
  count_ = 0;
  through_ = 0;
  held_n_ = held_i_ = 0;
  if (writer_ != nullptr) (void)writer_->do_work();  // drains the LedgerRing: see the header
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  offset_ = kLedgerHeaderBytes;
  end_ = offset_;
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    read_failures_.add();  // answered with what it could read: nothing
  } else if (static_cast<std::uint64_t>(st.st_size) > offset_) {
    // Whole records only: one being appended now is not the client's yet.
    end_ = offset_ + (static_cast<std::uint64_t>(st.st_size) - offset_) / sizeof(TradeRecord) * sizeof(TradeRecord);
  }
  return true;
}

bool ReportReplayer::step(int& work) noexcept {
  TradeRecord batch[kRecordsPerRead];
  for (;;) {
    for (; held_i_ < held_n_; ++held_i_) {
      if (!push_answer(&held_[held_i_])) return true;  // the gateway drains it: go on next pass
      ++work;
    }
    if (offset_ >= end_) break;
    const std::uint64_t want = std::min<std::uint64_t>(end_ - offset_, sizeof batch);
    const ssize_t got = ::pread(fd_, batch, want, static_cast<off_t>(offset_));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || static_cast<std::uint64_t>(got) % sizeof(TradeRecord) != 0) {
      read_failures_.add();
      end_ = offset_;  // ends the replay here: the client is told how far it got
      break;
    }
    const std::size_t records = static_cast<std::size_t>(got) / sizeof(TradeRecord);
    std::size_t i = 0;
    for (; i < records; ++i) {
      const TradeRecord& t = batch[i];
      if (trade_record_crc(t) != t.crc) {
        read_failures_.add();
        end_ = offset_;
        break;
      }
      offset_ += sizeof(TradeRecord);
      through_ = std::max({through_, t.buy_exec_seq, t.sell_exec_seq});
      held_n_ = replayed_fills(t, job_.client, job_.after_exec_seq, held_);
      held_i_ = 0;
      if (held_n_ != 0) break;  // queue them before reading on
    }
    if (held_n_ == 0 && i == records) continue;
  }
  if (!push_answer(nullptr)) return true;
  ++work;
  served_.add();
  return false;
}

bool ReportReplayer::push_answer(const proto::ExecutionReport* report) noexcept {
  ReplayAnswer a;
  a.session_index = job_.session_index;
  a.generation = job_.generation;
  if (report != nullptr) {
    a.report = *report;
  } else {
    a.end = true;
    a.done = proto::make_message<proto::ReportsReplayed>(0);
    a.done.count = count_;
    a.done.through_exec_seq = std::max(through_, job_.after_exec_seq);
  }
  if (!answers_.try_push(a)) return false;
  if (report != nullptr) {
    ++count_;
    replayed_.add();
  }
  return true;
}

}  // namespace nanotick::exchange
