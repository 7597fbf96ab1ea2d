// The engine's outputs: execution reports (private, to the order's client) and
// market data events (public). Fixed-size, trivially copyable values pushed
// into a sink. Thread-safety: plain values.
//
// The exact rules (which reports and events, in which order, with which
// fields) are specified in docs/MATCHING.md; the fast engine and the reference
// model in tests/ must produce identical streams.
#pragma once

#include <cstdint>
#include <type_traits>

#include "engine/reject_reason.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

enum class ReportType : std::uint8_t {
  kAccepted = 1,        // new order accepted (may be followed by fills)
  kRejected = 2,        // new order refused: reason
  kFill = 3,            // a trade: last_price/last_qty, cum_qty/leaves_qty after it
  kCancelled = 4,       // the order is gone: cancel_reason says why
  kModified = 5,        // modify applied: price/qty now; leaves_qty after it
  kCancelRejected = 6,  // cancel refused: reason (kUnknownOrder or kTooLateToCancel)
  kModifyRejected = 7,  // modify refused: reason
};

enum class CancelReason : std::uint8_t {
  kNone = 0,
  kUserRequest = 1,      // the client's cancel
  kIocResidual = 2,      // IOC/market remainder after matching (also: nothing to trade with)
  kFokUnfillable = 3,    // FOK could not fill completely: nothing traded
  kSelfTrade = 4,        // self-trade prevention
  kModifyBelowFilled = 5,// modify to a total quantity <= the filled quantity
};

struct ExecReport {
  Seq seq;                   // engine report sequence, from 1, no gaps
  Seq request_seq;           // position of the causing request in the input (from 1)
  std::uint64_t event_id;    // copied from the request
  ClientId client;
  InstrumentId instrument;
  ClientOrderId client_order_id;
  OrderId order_id;          // exchange id (0 when rejected before one was assigned)
  Price price;               // order's limit price (kAccepted/kModified/kCancelled)
  Qty order_qty;             // order's total quantity
  Price last_price;          // kFill: trade price (always the maker's price)
  Qty last_qty;              // kFill: traded quantity
  Qty cum_qty;               // filled so far
  Qty leaves_qty;            // still open (0 when done)
  OrderId contra_order_id;   // kFill: the other side's exchange order id
  ReportType type;
  Side side;
  OrderType order_type;
  bool is_maker;             // kFill: this order was resting
  RejectReason reason;       // rejects
  CancelReason cancel_reason;// kCancelled
  std::uint8_t pad[3] = {};
};
static_assert(std::is_trivially_copyable_v<ExecReport>);

enum class MdType : std::uint8_t {
  kAdd = 1,        // order rests: order_id, side, price, qty
  kModify = 2,     // resting order's open qty reduced in place (priority kept): qty = new open qty
  kDelete = 3,     // order left the book by cancel (user, STP, modify) -- NOT by a fill: a fill
                   // is a kTrade, which itself reduces the maker and removes it at zero
  kTrade = 4,      // price, qty, side = aggressor side, order_id = maker, contra = taker
  kTopOfBook = 5,  // bid_price/bid_qty/ask_price/ask_qty after the request (qty 0 = empty side)
};

struct MdEvent {
  Seq seq;                 // market data sequence, from 1, no gaps (the whole engine)
  Seq instrument_seq;      // this instrument's own market data sequence, from 1, no gaps: a
                           // consumer that lost events learns which instruments they touched
  std::uint64_t event_id;  // copied from the request
  InstrumentId instrument;
  MdType type;
  Side side;
  std::uint8_t pad[2] = {};
  OrderId order_id;
  OrderId contra_order_id;
  Price price;
  Qty qty;
  Price bid_price;
  Qty bid_qty;
  Price ask_price;
  Qty ask_qty;
};
static_assert(std::is_trivially_copyable_v<MdEvent>);

// A sink receives the engine's outputs, synchronously, on the engine's thread.
// It is a template parameter of the engine (static dispatch, no virtual calls).
template <typename S>
concept EngineSink = requires(S& s, const ExecReport& r, const MdEvent& m) {
  s.on_report(r);
  s.on_market_data(m);
};

}  // namespace nanotick::engine
