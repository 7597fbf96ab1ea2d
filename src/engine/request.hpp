// The engine's input: one fixed-size, trivially copyable request, already
// sequenced (the sequencer assigns `seq`; the engine trusts its order, not its
// content). Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <type_traits>

#include "engine/types.hpp"

namespace nanotick::engine {

enum class RequestType : std::uint8_t {
  kNew = 1,     // side, order_type, stp, price (ignored for market), qty
  kCancel = 2,  // cancels the client's live order client_order_id
  kModify = 3,  // price = new price, qty = new TOTAL quantity (filled included)
  kMassCancel = 4,  // cancels every live order of `client` on `instrument`, or on every
                    // instrument with kAllInstruments (other fields 0): the venue's request,
                    // never a client's message (cancel-on-disconnect, recovery)
  // The venue's admin requests (docs/CONTROLS.md "Admin"): an admin session's, handled by
  // the controls around the engine (src/controls) and never by the engine itself, which
  // rejects them kInvalidRequestType. `client`: the admin who asked (its answer goes
  // there); `client_order_id`: the admin's request id; `instrument`: the instrument
  // (halt/resume; cancel-all: one, or kAllInstruments); `qty`: the target client
  // (block/unblock/cancel-all; make_admin).
  kHaltInstrument = 5,
  kResumeInstrument = 6,
  kBlockClient = 7,
  kUnblockClient = 8,
  kAdminCancelAll = 9,
  kAdminAdjust = 10,  // the target's cash (instrument kAllInstruments) or position += price (a signed delta)
};

inline constexpr bool is_admin_request(RequestType t) noexcept {
  return static_cast<std::uint8_t>(t) >= static_cast<std::uint8_t>(RequestType::kHaltInstrument) &&
         static_cast<std::uint8_t>(t) <= static_cast<std::uint8_t>(RequestType::kAdminAdjust);
}

// A mass cancel's instrument meaning "all of them".
inline constexpr InstrumentId kAllInstruments = 0xFFFF'FFFF;

struct Request {
  RequestType type;
  Side side;
  OrderType order_type;
  StpMode stp;
  InstrumentId instrument;
  ClientId client;
  std::uint32_t reserved = 0;     // keeps the layout explicit; must be 0
  ClientOrderId client_order_id;
  Price price;
  Qty qty;
  std::uint64_t event_id;         // opaque, carried to every output (telemetry hop matching)
};
static_assert(std::is_trivially_copyable_v<Request>);
static_assert(sizeof(Request) == 48, "Request layout: 16-byte header + 4 x 8-byte fields");

inline Request make_new(InstrumentId instrument, ClientId client, ClientOrderId id, Side side, OrderType type,
                        Price price, Qty qty, StpMode stp = StpMode::kNone) {
  return Request{RequestType::kNew, side, type, stp, instrument, client, 0, id, price, qty, 0};
}
inline Request make_cancel(InstrumentId instrument, ClientId client, ClientOrderId id) {
  return Request{
      RequestType::kCancel, Side::kBuy, OrderType::kLimit, StpMode::kNone, instrument, client, 0, id, 0, 0, 0};
}
inline Request make_mass_cancel(InstrumentId instrument, ClientId client) {
  return Request{
      RequestType::kMassCancel, Side::kBuy, OrderType::kLimit, StpMode::kNone, instrument, client, 0, 0, 0, 0, 0};
}
// An admin request (is_admin_request(type)); `target_client` is 0 for
// halt/resume; `amount` is an adjustment's delta (in `price`), else 0.
inline Request make_admin(RequestType type, ClientId admin, ClientOrderId request_id, InstrumentId instrument,
                          ClientId target_client, std::int64_t amount = 0) {
  return Request{type,          Side::kBuy, OrderType::kLimit, StpMode::kNone, instrument, admin, 0, request_id, amount,
                 target_client, 0};
}
// The target client of an admin request.
inline ClientId admin_target(const Request& rq) noexcept { return static_cast<ClientId>(rq.qty); }
inline Request make_modify(InstrumentId instrument, ClientId client, ClientOrderId id, Price price, Qty qty) {
  return Request{
      RequestType::kModify, Side::kBuy, OrderType::kLimit, StpMode::kNone, instrument, client, 0, id, price, qty, 0};
}

}  // namespace nanotick::engine
