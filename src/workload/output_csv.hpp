// CSV text of the engine's outputs (docs/WORKLOADS.md, "Output CSV"): one line
// per ExecReport or MdEvent, every field, fixed column order, integers in
// decimal, enums by name -- the same events always give the same bytes.
// Formatting is tool-side work (replay, tests), never inside the engine.
// Functions are thread-safe; a CsvFileWriter belongs to one thread.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "engine/events.hpp"

namespace nanotick::workload {

inline constexpr std::string_view kReportCsvHeader =
    "seq,request_seq,event_id,type,client,instrument,client_order_id,order_id,side,order_type,price,"
    "order_qty,last_price,last_qty,cum_qty,leaves_qty,contra_order_id,is_maker,reason,cancel_reason\n";
inline constexpr std::string_view kMarketDataCsvHeader =
    "seq,event_id,instrument,type,side,order_id,contra_order_id,price,qty,bid_price,bid_qty,ask_price,"
    "ask_qty,instrument_seq\n";

std::string name_of(engine::ReportType type);
std::string name_of(engine::CancelReason reason);
std::string name_of(engine::MdType type);
// Reject reasons as short identifiers: "duplicate_client_order_id", ...
std::string name_of(engine::RejectReason reason);

// Appends one line (with '\n').
void append_csv(std::string& out, const engine::ExecReport& report);
void append_csv(std::string& out, const engine::MdEvent& event);

// A buffered CSV file: writes the header, then lines as they are added.
// Throws std::runtime_error naming the file when it cannot be written.
class CsvFileWriter {
 public:
  CsvFileWriter(const std::string& path, std::string_view header);
  ~CsvFileWriter();
  CsvFileWriter(const CsvFileWriter&) = delete;
  CsvFileWriter& operator=(const CsvFileWriter&) = delete;

  template <typename Event>
  void add(const Event& event) {
    append_csv(buffer_, event);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void flush();
  // Flushes and closes; throws on a write error. The destructor closes
  // silently (use close() to see errors).
  void close();

 private:
  static constexpr std::size_t kFlushBytes = 1u << 20;
  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buffer_;
};

}  // namespace nanotick::workload
