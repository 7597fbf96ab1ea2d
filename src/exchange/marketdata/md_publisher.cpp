#include "exchange/marketdata/md_publisher.hpp"

#include <immintrin.h>

#include "proto/market_data.hpp"

namespace nanotick::exchange {

namespace {

constexpr std::uint8_t wire_side(engine::Side s) noexcept { return static_cast<std::uint8_t>(s); }

template <typename M>
constexpr proto::MdMsgHeader header(proto::MdMsgType type, std::uint8_t side) noexcept {
  return proto::MdMsgHeader{static_cast<std::uint16_t>(sizeof(M)), type, side};
}

}  // namespace

MdPublisher::MdPublisher(const MarketDataConfig& config, MdRing& snapshot_ring, engine::Seq next_seq,
                         const core::TscClock& clock)
    : clock_(clock),
      ring_(snapshot_ring),
      channel_(proto::Channel::kIncremental, config, next_seq, clock),
      shm_poll_ticks_(ms_to_ticks(clock, 1)) {}

// The publisher's slot is exactly the ring's: a config the venue accepted fits.
static_assert(venue::kMaxShmMdPacketBytes == ipc::kMdRingMaxPacketBytes);

void MdPublisher::on_md(const engine::MdEvent& e) noexcept {
  switch (e.type) {
    case engine::MdType::kAdd: {
      proto::MdOrder m{};
      m.header = header<proto::MdOrder>(proto::MdMsgType::kAddOrder, wire_side(e.side));
      m.instrument = e.instrument;
      m.order_id = e.order_id;
      m.price = e.price;
      m.qty = e.qty;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    case engine::MdType::kModify: {
      // The order's side is known and useful to a consumer: sent, not 0.
      proto::MdModifyOrder m{};
      m.header = header<proto::MdModifyOrder>(proto::MdMsgType::kModifyOrder, wire_side(e.side));
      m.instrument = e.instrument;
      m.order_id = e.order_id;
      m.qty = e.qty;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    case engine::MdType::kDelete: {
      proto::MdDeleteOrder m{};
      m.header = header<proto::MdDeleteOrder>(proto::MdMsgType::kDeleteOrder, wire_side(e.side));
      m.instrument = e.instrument;
      m.order_id = e.order_id;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    case engine::MdType::kTrade: {
      proto::MdTrade m{};
      m.header = header<proto::MdTrade>(proto::MdMsgType::kTrade, wire_side(e.side));  // aggressor
      m.instrument = e.instrument;
      m.maker_order_id = e.order_id;
      m.taker_order_id = e.contra_order_id;
      m.price = e.price;
      m.qty = e.qty;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    case engine::MdType::kTopOfBook: {
      proto::MdTopOfBook m{};
      m.header = header<proto::MdTopOfBook>(proto::MdMsgType::kTopOfBook, 0);
      m.instrument = e.instrument;
      m.bid_price = e.bid_price;
      m.bid_qty = e.bid_qty;
      m.ask_price = e.ask_price;
      m.ask_qty = e.ask_qty;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    case engine::MdType::kTradingState: {
      proto::MdInstrumentState m{};
      m.header = header<proto::MdInstrumentState>(proto::MdMsgType::kInstrumentState, 0);
      m.instrument = e.instrument;
      m.state = e.qty != 0 ? proto::TradingState::kHalted : proto::TradingState::kOpen;
      m.instrument_seq = e.instrument_seq;
      channel_.append(m, e.seq, telemetry_order_key(e.event_id));
      break;
    }
    default: bad_events_.add(); return;
  }
  forward(e);
}

void MdPublisher::forward(const engine::MdEvent& e) noexcept {
  if (ring_.try_push(e)) [[likely]]
    return;
  // Counted per spin (a relaxed store, cheap next to _mm_pause) so a reader
  // sees the wait while it lasts, not only once it is over.
  do {
    _mm_pause();
    ring_full_spins_.add();
  } while (!ring_.try_push(e));
}

int MdPublisher::do_work() noexcept {
  const std::uint64_t now = clock_.now();
  int work = 0;
  if (shm_ring_ != nullptr && now >= next_shm_poll_) [[unlikely]] {
    next_shm_poll_ = now + shm_poll_ticks_;
    work += shm_ring_->poll_connections();
  }
  if (channel_.flush()) return work + 1;
  return work + (channel_.heartbeat_if_idle(now) ? 1 : 0);
}

}  // namespace nanotick::exchange
