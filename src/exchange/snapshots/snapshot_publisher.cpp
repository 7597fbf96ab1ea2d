#include "exchange/snapshots/snapshot_publisher.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nanotick::exchange {

namespace {

std::uint32_t largest_book(std::span<const book::InstrumentCapacity> instruments) {
  std::uint32_t n = 0;
  for (const book::InstrumentCapacity& c : instruments) n = std::max(n, c.max_orders);
  return n;
}

std::uint64_t checked_interval(const MarketDataConfig& config) {
  if (config.snapshot_interval_ms == 0)
    throw std::invalid_argument("market_data.snapshot_interval_ms: must be > 0, got 0");
  return config.snapshot_interval_ms;
}

}  // namespace

SnapshotPublisher::SnapshotPublisher(const MarketDataConfig& config,
                                     std::span<const book::InstrumentCapacity> instruments, MdRing& ring,
                                     const core::TscClock& clock)
    : clock_(clock),
      ring_(ring),
      books_(instruments),
      channel_(proto::Channel::kSnapshot, config, 1, clock),
      // A full cycle over the instruments takes snapshot_interval_ms.
      interval_ticks_(
          std::max<std::uint64_t>(1, ms_to_ticks(clock, checked_interval(config)) / books_.instrument_count())),
      next_due_(clock.now()),  // the first snapshot goes out at once: late joiners need not wait a cycle
      instrument_seq_(std::make_unique<engine::Seq[]>(books_.instrument_count())),  // zeroed
      halted_(std::make_unique<std::uint8_t[]>(books_.instrument_count())),     // zeroed: all open
      staged_(std::make_unique<proto::MdOrder[]>(largest_book(instruments))) {}

void SnapshotPublisher::seed_halted(std::span<const book::InstrumentId> halted) {
  for (const book::InstrumentId inst : halted)
    if (inst >= books_.instrument_count())
      throw std::invalid_argument("snapshot publisher: halted instrument " + std::to_string(inst) + " does not exist");
  std::fill(halted_.get(), halted_.get() + books_.instrument_count(), 0);
  for (const book::InstrumentId inst : halted) halted_[inst] = 1;
}

void SnapshotPublisher::apply(const engine::MdEvent& e) noexcept {
  // A refused event is counted by the books (book_rejects()); nothing else
  // can be done about it here: the engine's feed is the truth.
  switch (e.type) {
    case engine::MdType::kAdd: (void)books_.add(e.instrument, e.order_id, e.side, e.price, e.qty); break;
    case engine::MdType::kModify: (void)books_.modify(e.instrument, e.order_id, e.qty); break;
    case engine::MdType::kDelete: (void)books_.remove(e.instrument, e.order_id); break;
    case engine::MdType::kTrade: (void)books_.trade(e.instrument, e.order_id, e.price, e.qty); break;
    case engine::MdType::kTopOfBook: break;  // derived from the orders: nothing to keep
    case engine::MdType::kTradingState:
      if (e.instrument < books_.instrument_count()) halted_[e.instrument] = e.qty != 0 ? 1 : 0;
      break;
  }
  // An unknown instrument was refused (and counted) by the books above, or
  // is a TopOfBook that changes nothing: no counter of it to move.
  if (e.instrument < books_.instrument_count()) instrument_seq_[e.instrument] = e.instrument_seq;
  last_seq_ = e.seq;
}

void SnapshotPublisher::start_snapshot() noexcept {
  const book::InstrumentId inst = next_instrument_;
  next_instrument_ = inst + 1 < books_.instrument_count() ? inst + 1 : 0;
  std::uint32_t n = 0;
  books_.for_each_order(inst, [this, inst, &n](const book::RestingOrder& o) {
    proto::MdOrder& m = staged_[n++];
    m = proto::MdOrder{};
    m.header = {static_cast<std::uint16_t>(sizeof(proto::MdOrder)), proto::MdMsgType::kSnapshotOrder,
                static_cast<std::uint8_t>(o.side)};
    m.instrument = inst;
    m.order_id = o.order_id;
    m.price = o.price;
    m.qty = o.qty;
    m.instrument_seq = instrument_seq_[inst];
  });
  staged_count_ = n;
  staged_next_ = 0;
  bound_ = proto::MdSnapshotBound{};
  bound_.header = {static_cast<std::uint16_t>(sizeof(proto::MdSnapshotBound)), proto::MdMsgType::kSnapshotStart, 0};
  bound_.instrument = inst;
  bound_.last_seq = last_seq_;
  bound_.orders = n;
  bound_.trading_state = halted_[inst] != 0 ? proto::TradingState::kHalted : proto::TradingState::kOpen;
  bound_.instrument_seq = instrument_seq_[inst];
  channel_.append(bound_, channel_.next_seq());
  sending_ = true;
}

int SnapshotPublisher::continue_snapshot(int packets) noexcept {
  const std::uint64_t before = channel_.packets() + channel_.send_drops();
  auto sent = [&] { return static_cast<int>(channel_.packets() + channel_.send_drops() - before); };
  while (staged_next_ < staged_count_ && sent() < packets)
    channel_.append(staged_[staged_next_++], channel_.next_seq());
  if (staged_next_ < staged_count_) return sent();
  bound_.header.type = proto::MdMsgType::kSnapshotEnd;
  channel_.append(bound_, channel_.next_seq());
  (void)channel_.flush();
  sending_ = false;
  snapshots_.add();
  return sent();
}

int SnapshotPublisher::do_work() noexcept {
  int work = static_cast<int>(ring_.drain([this](const engine::MdEvent& e) noexcept { apply(e); }));
  events_.add(static_cast<std::uint64_t>(work));
  const std::uint64_t now = clock_.now();
  if (!sending_ && now >= next_due_) {
    start_snapshot();
    // Keep the cadence; after a stall, restart it from now instead of
    // sending the missed snapshots back to back.
    next_due_ = next_due_ + interval_ticks_ > now ? next_due_ + interval_ticks_ : now + interval_ticks_;
  }
  if (sending_) return work + continue_snapshot(kPacketsPerPass);
  if (channel_.heartbeat_if_idle(now)) ++work;
  return work;
}

}  // namespace nanotick::exchange
