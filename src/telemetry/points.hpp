// The catalogue of telemetry points: every hop stamp and function timer the
// stack records, with its stable numeric id, its kind and its name. Constants
// only, so thread-safe.
//
// Ids are written into every record and every telemetry file, and the report
// joins hops across processes by them, so an id is never reused or changed:
// new points get new ids. Ids are grouped by range so that a reader of a raw
// dump can tell the side and kind from the number alone:
//     1 ..  15  exchange hops          32 ..  47  exchange function timers
//    16 ..  31  trader hops            48 ..  63  trader function timers
// Id 0 is never a point, so a zeroed record is recognisably invalid.
//
// The names are the ones the files carry (docs/TELEMETRY.md lists the key and
// aux conventions of each point); the report reads them from the file's own
// point table, never from this header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nanotick::telemetry {

enum class PointKind : std::uint8_t {
  kHop = 1,    // a timestamp at one step of a message's path, carrying its key
  kTimer = 2,  // elapsed ticks of one call of a function (Record::cycles)
};

// Lower-case enumerators on purpose: they are the names written to files and
// used by NT_HOP / NT_TIMED (NT_HOP(ex_tcp_read, key)).
enum class Point : std::uint16_t {
  // Exchange hops. Order key: (client_id << 32) | seq of the client's order
  // message; md key: the first global md seq of the packet (docs/TELEMETRY.md).
  ex_tcp_read = 1,       // order message decoded from the client's TCP stream (order key)
  ex_sequencer_in = 2,   // request handed to the sequencer (order key)
  ex_sequencer_out = 3,  // request sequenced (journaled as the policy says), leaving it (order key)
  ex_engine_in = 4,      // matching engine starts the request (order key)
  ex_engine_out = 5,     // matching engine finished the request (order key)
  ex_tcp_write = 6,      // an answer written to a client's socket (key: the answer's
                         // (client_id << 32) | ref_seq; aux: the request's order key)
  ex_md_write = 7,       // an incremental market data packet sent (md key)
  ex_md_effect = 8,      // a request's events in that packet (key: its order key; aux: the packet's md key)
  // Trader hops.
  tr_udp_read = 16,        // incremental market data packet read from its socket (md key)
  tr_engine_dequeue = 17,  // packet taken by the trade engine from the consumer (md key)
  tr_decision = 18,        // strategy decided an order message (md key or 0, aux = order key)
  tr_tcp_write = 19,       // order message written to the exchange (order key)
  tr_response_read = 20,   // answer read from the exchange ((client_id << 32) | ref_seq)
  // Exchange function timers.
  fn_book_add = 32,
  fn_book_cancel = 33,
  fn_book_match = 34,
  fn_engine_process = 35,  // the whole engine step of one request (when finer is not used)
  fn_sequencer = 36,
  fn_md_publish = 37,
  // The engine step split by stage of the venue's pipeline (controls/stage_ticks.hpp).
  fn_pre_trade = 38,   // halts/blocks and account checks of a new order or modify
  fn_matching = 39,    // the engine's own part of the step (less settlement and ledger)
  fn_settlement = 40,  // the request's reports settled into the accounts
  fn_ledger = 41,      // the request's trades copied into the trade ledger's ring
  // Trader function timers.
  fn_feature_update = 48,
  fn_position_update = 49,
  fn_risk_check = 50,
  fn_order_manager = 51,
};

struct PointInfo {
  Point point;
  PointKind kind;
  std::string_view name;
};

// Longest point name a telemetry file can carry (its point table entry holds
// the name in a fixed 28-byte field).
inline constexpr std::size_t kMaxPointNameBytes = 28;

inline constexpr std::array kPoints = {
    PointInfo{Point::ex_tcp_read, PointKind::kHop, "ex_tcp_read"},
    PointInfo{Point::ex_sequencer_in, PointKind::kHop, "ex_sequencer_in"},
    PointInfo{Point::ex_sequencer_out, PointKind::kHop, "ex_sequencer_out"},
    PointInfo{Point::ex_engine_in, PointKind::kHop, "ex_engine_in"},
    PointInfo{Point::ex_engine_out, PointKind::kHop, "ex_engine_out"},
    PointInfo{Point::ex_tcp_write, PointKind::kHop, "ex_tcp_write"},
    PointInfo{Point::ex_md_write, PointKind::kHop, "ex_md_write"},
    PointInfo{Point::ex_md_effect, PointKind::kHop, "ex_md_effect"},
    PointInfo{Point::tr_udp_read, PointKind::kHop, "tr_udp_read"},
    PointInfo{Point::tr_engine_dequeue, PointKind::kHop, "tr_engine_dequeue"},
    PointInfo{Point::tr_decision, PointKind::kHop, "tr_decision"},
    PointInfo{Point::tr_tcp_write, PointKind::kHop, "tr_tcp_write"},
    PointInfo{Point::tr_response_read, PointKind::kHop, "tr_response_read"},
    PointInfo{Point::fn_book_add, PointKind::kTimer, "fn_book_add"},
    PointInfo{Point::fn_book_cancel, PointKind::kTimer, "fn_book_cancel"},
    PointInfo{Point::fn_book_match, PointKind::kTimer, "fn_book_match"},
    PointInfo{Point::fn_engine_process, PointKind::kTimer, "fn_engine_process"},
    PointInfo{Point::fn_sequencer, PointKind::kTimer, "fn_sequencer"},
    PointInfo{Point::fn_md_publish, PointKind::kTimer, "fn_md_publish"},
    PointInfo{Point::fn_pre_trade, PointKind::kTimer, "fn_pre_trade"},
    PointInfo{Point::fn_matching, PointKind::kTimer, "fn_matching"},
    PointInfo{Point::fn_settlement, PointKind::kTimer, "fn_settlement"},
    PointInfo{Point::fn_ledger, PointKind::kTimer, "fn_ledger"},
    PointInfo{Point::fn_feature_update, PointKind::kTimer, "fn_feature_update"},
    PointInfo{Point::fn_position_update, PointKind::kTimer, "fn_position_update"},
    PointInfo{Point::fn_risk_check, PointKind::kTimer, "fn_risk_check"},
    PointInfo{Point::fn_order_manager, PointKind::kTimer, "fn_order_manager"},
};

// Index of `id` in kPoints, or kPoints.size() when `id` is no point (a raw id
// read from outside, e.g. a file). Indices, not pointers: GCC's UBSan
// instrumentation makes pointer comparisons non-constant, and the compile-time
// kind checks below must stay constant expressions in the sanitizer builds.
constexpr std::size_t point_index(std::uint16_t id) noexcept {
  for (std::size_t i = 0; i < kPoints.size(); ++i) {
    if (static_cast<std::uint16_t>(kPoints[i].point) == id) return i;
  }
  return kPoints.size();
}

// The catalogue entry of `id`, or nullptr when `id` is no point.
constexpr const PointInfo* find_point(std::uint16_t id) noexcept {
  const std::size_t i = point_index(id);
  return i < kPoints.size() ? &kPoints[i] : nullptr;
}

// An entry for a Point value outside the catalogue (only reachable by casting
// a raw number to Point): kind 0, name "unknown".
inline constexpr PointInfo kUnknownPoint{Point{0}, PointKind{0}, "unknown"};

constexpr const PointInfo& point_info(Point point) noexcept {
  const std::size_t i = point_index(static_cast<std::uint16_t>(point));
  return i < kPoints.size() ? kPoints[i] : kUnknownPoint;
}
constexpr PointKind kind_of(Point point) noexcept { return point_info(point).kind; }
constexpr std::string_view name_of(Point point) noexcept { return point_info(point).name; }

namespace detail {
// Every entry: a known kind, a name that fits a file's point table and is
// unique, a unique non-zero id in the range its kind and side promise.
constexpr bool catalogue_is_consistent() {
  for (std::size_t i = 0; i < kPoints.size(); ++i) {
    const PointInfo& a = kPoints[i];
    const auto id = static_cast<std::uint16_t>(a.point);
    if (id == 0 || id > 63) return false;
    if (a.kind == PointKind::kHop && id >= 32) return false;
    if (a.kind == PointKind::kTimer && id < 32) return false;
    if (a.name.empty() || a.name.size() > kMaxPointNameBytes) return false;
    const bool exchange = a.name.starts_with("ex_");
    const bool trader = a.name.starts_with("tr_");
    if (a.kind == PointKind::kHop && exchange != (id < 16)) return false;
    if (a.kind == PointKind::kHop && !exchange && !trader) return false;
    if (a.kind == PointKind::kTimer && !a.name.starts_with("fn_")) return false;
    for (std::size_t j = i + 1; j < kPoints.size(); ++j) {
      if (kPoints[j].point == a.point || kPoints[j].name == a.name) return false;
    }
  }
  return true;
}
}  // namespace detail

static_assert(detail::catalogue_is_consistent(),
              "telemetry point catalogue: ids must be unique, non-zero and in their kind's "
              "range, names unique, prefixed ex_/tr_/fn_ and at most 28 bytes");

// Compile-time kind checks used by NT_HOP and NT_TIMED: naming a timer in
// NT_HOP (or a hop in NT_TIMED) is a compile error, not a confusing report.
template <Point P>
consteval Point hop_point() {
  static_assert(kind_of(P) == PointKind::kHop, "NT_HOP needs a hop point (ex_* or tr_*)");
  return P;
}
template <Point P>
consteval Point timer_point() {
  static_assert(kind_of(P) == PointKind::kTimer, "NT_TIMED needs a function timer point (fn_*)");
  return P;
}

}  // namespace nanotick::telemetry
