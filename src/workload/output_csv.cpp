#include "workload/output_csv.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include "workload/workload_csv.hpp"

namespace nanotick::workload {

using engine::CancelReason;
using engine::MdType;
using engine::RejectReason;
using engine::ReportType;

namespace {
template <typename E>
std::string number(E value) {
  return std::to_string(static_cast<unsigned>(value));
}
}  // namespace

std::string name_of(ReportType type) {
  switch (type) {
    case ReportType::kAccepted: return "accepted";
    case ReportType::kRejected: return "rejected";
    case ReportType::kFill: return "fill";
    case ReportType::kCancelled: return "cancelled";
    case ReportType::kModified: return "modified";
    case ReportType::kCancelRejected: return "cancel_rejected";
    case ReportType::kModifyRejected: return "modify_rejected";
    case ReportType::kAdminDone: return "admin_done";
  }
  return number(type);
}

std::string name_of(CancelReason reason) {
  switch (reason) {
    case CancelReason::kNone: return "";
    case CancelReason::kUserRequest: return "user_request";
    case CancelReason::kIocResidual: return "ioc_residual";
    case CancelReason::kFokUnfillable: return "fok_unfillable";
    case CancelReason::kSelfTrade: return "self_trade";
    case CancelReason::kModifyBelowFilled: return "modify_below_filled";
    case CancelReason::kMassCancel: return "mass_cancel";
    case CancelReason::kAdminCancel: return "admin_cancel";
  }
  return number(reason);
}

std::string name_of(MdType type) {
  switch (type) {
    case MdType::kAdd: return "add";
    case MdType::kModify: return "modify";
    case MdType::kDelete: return "delete";
    case MdType::kTrade: return "trade";
    case MdType::kTopOfBook: return "top_of_book";
    case MdType::kTradingState: return "trading_state";
  }
  return number(type);
}

std::string name_of(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone: return "";
    case RejectReason::kUnknownInstrument: return "unknown_instrument";
    case RejectReason::kInvalidRequestType: return "invalid_request_type";
    case RejectReason::kInvalidSide: return "invalid_side";
    case RejectReason::kInvalidOrderType: return "invalid_order_type";
    case RejectReason::kInvalidStpMode: return "invalid_stp_mode";
    case RejectReason::kPriceOffTick: return "price_off_tick";
    case RejectReason::kPriceOutOfBand: return "price_out_of_band";
    case RejectReason::kPriceOutsideCollar: return "price_outside_collar";
    case RejectReason::kZeroQuantity: return "zero_quantity";
    case RejectReason::kQuantityTooLarge: return "quantity_too_large";
    case RejectReason::kInvalidClientId: return "invalid_client_id";
    case RejectReason::kInvalidClientOrderId: return "invalid_client_order_id";
    case RejectReason::kReservedNotZero: return "reserved_not_zero";
    case RejectReason::kDuplicateClientOrderId: return "duplicate_client_order_id";
    case RejectReason::kUnknownOrder: return "unknown_order";
    case RejectReason::kTooLateToCancel: return "too_late_to_cancel";
    case RejectReason::kModifyNoChange: return "modify_no_change";
    case RejectReason::kOrderCapacity: return "order_capacity";
    case RejectReason::kLevelCapacity: return "level_capacity";
    case RejectReason::kNoAccount: return "no_account";
    case RejectReason::kInstrumentNotPermitted: return "instrument_not_permitted";
    case RejectReason::kClientQuantityLimit: return "client_quantity_limit";
    case RejectReason::kClientNotionalLimit: return "client_notional_limit";
    case RejectReason::kClientCollar: return "client_collar";
    case RejectReason::kTooManyOpenOrders: return "too_many_open_orders";
    case RejectReason::kInsufficientCash: return "insufficient_cash";
    case RejectReason::kInsufficientPosition: return "insufficient_position";
    case RejectReason::kClientBlocked: return "client_blocked";
    case RejectReason::kInstrumentHalted: return "instrument_halted";
    case RejectReason::kUnknownTargetClient: return "unknown_target_client";
    case RejectReason::kNotAdmin: return "not_admin";
    case RejectReason::kCashOutOfRange: return "cash_out_of_range";
  }
  return std::to_string(static_cast<unsigned>(reason));
}

void append_csv(std::string& out, const engine::ExecReport& r) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.seq,
                 r.request_seq, r.event_id, name_of(r.type), r.client, r.instrument, r.client_order_id, r.order_id,
                 name_of(r.side), name_of(r.order_type), r.price, r.order_qty, r.last_price, r.last_qty, r.cum_qty,
                 r.leaves_qty, r.contra_order_id, r.is_maker ? 1 : 0, name_of(r.reason), name_of(r.cancel_reason));
}

void append_csv(std::string& out, const engine::MdEvent& m) {
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.seq, m.event_id,
                 m.instrument, name_of(m.type), name_of(m.side), m.order_id, m.contra_order_id, m.price, m.qty,
                 m.bid_price, m.bid_qty, m.ask_price, m.ask_qty, m.instrument_seq);
}

CsvFileWriter::CsvFileWriter(const std::string& path, std::string_view header) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr)
    throw std::runtime_error("CSV file '" + path + "': cannot open for writing: " + std::strerror(errno));
  buffer_.reserve(kFlushBytes + 4096);
  buffer_.append(header);
}

CsvFileWriter::~CsvFileWriter() {
  if (file_ != nullptr) {
    std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    std::fclose(file_);
  }
}

void CsvFileWriter::flush() {
  if (file_ == nullptr) throw std::runtime_error("CSV file '" + path_ + "': already closed");
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    throw std::runtime_error("CSV file '" + path_ + "': write failed: " + std::strerror(errno));
  buffer_.clear();
}

void CsvFileWriter::close() {
  flush();
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw std::runtime_error("CSV file '" + path_ + "': close failed: " + std::strerror(errno));
}

}  // namespace nanotick::workload
