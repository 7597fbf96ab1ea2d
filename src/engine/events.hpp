// The engine's outputs: execution reports (private, to the order's client) and
// market data events (public). Fixed-size, trivially copyable values pushed
// into a sink. Thread-safety: plain values.
//
// The exact rules (which reports and events, in which order, with which
// fields) are specified in docs/MATCHING.md; the fast engine and the reference
// model in tests/ must produce identical streams.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

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
  kAdminDone = 8,       // an admin request answered (src/controls): client = the admin,
                        // client_order_id = its request id, request_type = what it asked,
                        // instrument, order_qty = the target client, last_qty = orders it
                        // cancelled; reason != kNone: refused, nothing changed
};

enum class CancelReason : std::uint8_t {
  kNone = 0,
  kUserRequest = 1,      // the client's cancel
  kIocResidual = 2,      // IOC/market remainder after matching (also: nothing to trade with)
  kFokUnfillable = 3,    // FOK could not fill completely: nothing traded
  kSelfTrade = 4,        // self-trade prevention
  kModifyBelowFilled = 5,// modify to a total quantity <= the filled quantity
  kMassCancel = 6,       // the venue cancelled all the client's orders (its session ended)
  kAdminCancel = 7,      // an admin cancelled all the client's orders (docs/CONTROLS.md "Admin")
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
  std::uint8_t request_type = 0;  // kAdminDone: the RequestType answered
  // Explicit to the end: no implicit padding (see clear()). Always zero from
  // the engine; the exchange carries a request's receive TSC to its gateway
  // in these bytes after the engine is done (exchange/pipeline.hpp).
  std::uint8_t pad[8] = {};
};
static_assert(std::is_trivially_copyable_v<ExecReport>);
static_assert(sizeof(ExecReport) == 120 && offsetof(ExecReport, pad) + 8 == sizeof(ExecReport),
              "every byte of an ExecReport is a named field, so clear() sets them all");

enum class MdType : std::uint8_t {
  kAdd = 1,        // order rests: order_id, side, price, qty
  kModify = 2,     // resting order's open qty reduced in place (priority kept): qty = new open qty
  kDelete = 3,     // order left the book by cancel (user, STP, modify) -- NOT by a fill: a fill
                   // is a kTrade, which itself reduces the maker and removes it at zero
  kTrade = 4,      // price, qty, side = aggressor side, order_id = maker, contra = taker
  kTopOfBook = 5,  // bid_price/bid_qty/ask_price/ask_qty after the request (qty 0 = empty side)
  kTradingState = 6,  // the instrument was halted (qty = 1) or resumed (qty = 0) by an admin
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
static_assert(std::has_unique_object_representations_v<MdEvent>,
              "every byte of an MdEvent is a named field, so clear() sets them all");

// Zero every byte of an output with one plain store per field. The engine
// builds each output on zeros; `x = T{}` for structs of this size compiles to
// `rep stosq` under GCC's generic tuning, whose start-up cost (tens of cycles
// on AMD Zen) a profile found to be a quarter of the engine's time in on_new
// when the outputs were built in a ring slot. Store merging may widen these
// stores; it does not turn them back into a string instruction.
inline void clear(ExecReport& r) noexcept {
  r.seq = 0;
  r.request_seq = 0;
  r.event_id = 0;
  r.client = 0;
  r.instrument = 0;
  r.client_order_id = 0;
  r.order_id = 0;
  r.price = 0;
  r.order_qty = 0;
  r.last_price = 0;
  r.last_qty = 0;
  r.cum_qty = 0;
  r.leaves_qty = 0;
  r.contra_order_id = 0;
  r.type = ReportType{};
  r.side = Side{};
  r.order_type = OrderType{};
  r.is_maker = false;
  r.reason = RejectReason{};
  r.cancel_reason = CancelReason{};
  r.request_type = 0;
  for (std::uint8_t& b : r.pad) b = 0;
}
inline void clear(MdEvent& m) noexcept {
  m.seq = 0;
  m.instrument_seq = 0;
  m.event_id = 0;
  m.instrument = 0;
  m.type = MdType{};
  m.side = Side{};
  m.pad[0] = 0;
  m.pad[1] = 0;
  m.order_id = 0;
  m.contra_order_id = 0;
  m.price = 0;
  m.qty = 0;
  m.bid_price = 0;
  m.bid_qty = 0;
  m.ask_price = 0;
  m.ask_qty = 0;
}

// A sink receives the engine's outputs, synchronously, on the engine's thread.
// It is a template parameter of the engine (static dispatch, no virtual calls).
// Every sink takes the execution reports (on_report, or in place, below).
template <typename S>
concept ReportSink = requires(S& s, const ExecReport& r) { s.on_report(r); };

// A sink may also offer storage for the engine to build each output in, in
// place: claim_*() returns it (the engine overwrites every byte, see clear()),
// commit_*() passes the output on. A ring sink saves the copy from the
// engine's stack this way, and with it the stalls of reading back with wide
// loads a struct just written field by field (store-to-load forwarding fails
// when a load spans several stores). On the mixed workload: +28% into a
// core-local ring, +5-8% into engine_bench's SPSC ring (docs/BENCHMARKS.md).
// The engine uses this path when the sink has it and on_report/on_market_data
// otherwise.
template <typename S>
concept InPlaceReportSink = requires(S& s) {
  { s.claim_report() } -> std::same_as<ExecReport&>;
  s.commit_report();
};
template <typename S>
concept InPlaceMarketDataSink = requires(S& s) {
  { s.claim_market_data() } -> std::same_as<MdEvent&>;
  s.commit_market_data();
};
template <typename S>
concept InPlaceSink = InPlaceReportSink<S> && InPlaceMarketDataSink<S>;

// Market data is optional, decided by the sink's type at compile time: a sink
// without on_market_data (nor claim/commit_market_data) gets none, and the
// engine builds none -- no events, no top-of-book comparison, no market data
// sequence numbers (last_md_seq() stays 0). A matching-only embedding (a
// back-test, a benchmark of the report stream) pays nothing for a feed it
// does not publish.
template <typename S>
concept TakesMarketData = requires(S& s, const MdEvent& m) { s.on_market_data(m); } || InPlaceMarketDataSink<S>;

template <typename S>
concept EngineSink = ReportSink<S> || InPlaceReportSink<S>;

}  // namespace nanotick::engine
