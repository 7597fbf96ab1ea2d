// One FIX session's orders (docs/FIX.md "ClOrdID"): the venue's client order
// id (a number the gateway gives each NewOrderSingle) for every ClOrdID the
// client has used, each order's state as the gateway last answered it, and
// the file that keeps them across a gateway restart.
//
// The file is append-only: one record per change, written (write(2), no
// fsync: like QuickFIX's own file store it survives the gateway being killed,
// not the machine losing power) BEFORE the FIX answer that reports the change
// is handed to QuickFIX. Loading replays the records; the last record of an
// order is its state. A record cut short at the end of the file (the gateway
// died while writing it) is dropped: its answer was never sent. Anything else
// that does not parse is refused (std::runtime_error naming the file and
// offset): a gateway must not guess at the orders it answered for.
//
// Records (text; the ClOrdID is length-prefixed, so any byte FIX allows in
// it is kept exactly):
//   O <number> <status> <order_id> <instrument> <side> <ord_type> <tif> <price> <qty> <cum_qty> <notional>
//   <len>:<ClOrdID>\n A <number> <len>:<ClOrdID>\n      another name for the order (a replace's new ClOrdID)
//
// Not thread-safe: the gateway's polling thread owns it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "market/types.hpp"

namespace nanotick::fix {

// OrdStatus (39) values the gateway reports.
namespace ord_status {
inline constexpr char kPendingNew = 'A';
inline constexpr char kNew = '0';
inline constexpr char kPartiallyFilled = '1';
inline constexpr char kFilled = '2';
inline constexpr char kCanceled = '4';
inline constexpr char kRejected = '8';
}  // namespace ord_status

struct FixOrder {
  std::uint64_t number = 0;    // the venue's client_order_id
  char status = ord_status::kPendingNew;
  std::uint64_t order_id = 0;  // the venue's order id (0 until accepted)
  market::InstrumentId instrument = 0;
  char side = 0;               // FIX Side: '1' buy, '2' sell
  char ord_type = 0;           // FIX OrdType: '1' market, '2' limit
  char time_in_force = 0;      // FIX TimeInForce as received (0 = absent)
  std::int64_t price = 0;      // limit price (0 for market orders)
  std::int64_t qty = 0;        // total quantity (a replace changes it)
  std::int64_t cum_qty = 0;
  std::int64_t notional = 0;   // sum of last_px * last_qty: AvgPx = notional / cum_qty
  // The highest venue exec_seq the session had seen when the order was
  // made: every report of this order has a higher one (exec_seq is
  // venue-wide and never goes back), which tells its trades in the venue's
  // ledger from those of an older order with the same number.
  std::uint64_t after_exec_seq = 0;
  std::string cl_ord_id;       // its current name (the last accepted replace's)

  bool open() const noexcept {
    return status == ord_status::kPendingNew || status == ord_status::kNew || status == ord_status::kPartiallyFilled;
  }
  std::int64_t leaves_qty() const noexcept { return open() ? qty - cum_qty : 0; }
  double avg_px() const noexcept {
    return cum_qty == 0 ? 0.0 : static_cast<double>(notional) / static_cast<double>(cum_qty);
  }
};

// An order map file's records replayed (the decoder FixOrderMap loads with,
// fuzzed by fuzz/fix_order_map_fuzz.cpp).
struct FixOrderMapContents {
  std::unordered_map<std::uint64_t, FixOrder> orders;
  std::unordered_map<std::string, std::uint64_t> names;
  std::uint64_t next_number = 1;
  // Bytes of whole records; less than the text's size when its last record
  // was cut short (the gateway died writing it), which is dropped.
  std::size_t complete_bytes = 0;
};

// Throws std::runtime_error naming `path` and the byte of the first record
// that does not parse (other than a last one cut short).
FixOrderMapContents parse_fix_order_map(std::string_view text, const std::string& path);

class FixOrderMap {
 public:
  // Loads `path` when it exists (creating it otherwise) and opens it for
  // appending. Throws std::runtime_error on a file it cannot read, write or
  // trust.
  explicit FixOrderMap(std::string path);
  ~FixOrderMap();
  FixOrderMap(const FixOrderMap&) = delete;
  FixOrderMap& operator=(const FixOrderMap&) = delete;

  // The order a ClOrdID names (any link of a replace chain), or null.
  FixOrder* find(const std::string& cl_ord_id);
  FixOrder* find(std::uint64_t number);
  bool known(const std::string& cl_ord_id) const { return names_.contains(cl_ord_id); }

  // A new order under the next number, named `order.cl_ord_id` (an empty
  // name: a number spent on a NewOrderSingle refused before it had one,
  // e.g. a duplicate ClOrdID). Saved.
  FixOrder& add(FixOrder order);
  // `cl_ord_id` becomes another name of order `number` and its current one. Saved.
  void rename(FixOrder& order, const std::string& cl_ord_id);
  // Saves the order's state (after the caller changed it).
  void save(const FixOrder& order);

  // The highest FixOrder::after_exec_seq of any order (0 for none).
  std::uint64_t highest_after_exec_seq() const noexcept;
  // Orders still open, by number.
  std::vector<FixOrder*> open_orders();
  std::size_t size() const noexcept { return orders_.size(); }
  const std::string& path() const noexcept { return path_; }
  // "" while every record was written; else why one was not. From then on
  // nothing more is written, and the gateway must answer nothing more.
  const std::string& failure() const noexcept { return failure_; }

 private:
  void load();
  void append(const std::string& record) noexcept;

  std::string path_;
  int fd_ = -1;
  std::uint64_t next_number_ = 1;
  std::string failure_;
  std::unordered_map<std::uint64_t, FixOrder> orders_;
  std::unordered_map<std::string, std::uint64_t> names_;
};

}  // namespace nanotick::fix
