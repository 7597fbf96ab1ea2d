// CSV text of the engine's outputs: every field in the documented column
// order, enums by name, one line per event, file writer with header.
#include "workload/output_csv.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nanotick::workload {
namespace {

using namespace nanotick::engine;

std::size_t columns(std::string_view line) {
  std::size_t n = 1;
  for (const char c : line) n += c == ',';
  return n;
}

TEST(OutputCsv, ShouldWriteEveryReportFieldInHeaderOrder) {
  ExecReport r{};
  r.seq = 7;
  r.request_seq = 3;
  r.event_id = 99;
  r.client = 4;
  r.instrument = 1;
  r.client_order_id = 12;
  r.order_id = 5;
  r.price = -100;
  r.order_qty = 10;
  r.last_price = -100;
  r.last_qty = 4;
  r.cum_qty = 4;
  r.leaves_qty = 6;
  r.contra_order_id = 2;
  r.type = ReportType::kFill;
  r.side = Side::kSell;
  r.order_type = OrderType::kLimit;
  r.is_maker = true;
  std::string out;
  append_csv(out, r);
  EXPECT_EQ(out, "7,3,99,fill,4,1,12,5,sell,limit,-100,10,-100,4,4,6,2,1,,\n");
  EXPECT_EQ(columns(out), columns(kReportCsvHeader));

  r.type = ReportType::kCancelRejected;
  r.reason = RejectReason::kTooLateToCancel;
  r.is_maker = false;
  out.clear();
  append_csv(out, r);
  EXPECT_EQ(out, "7,3,99,cancel_rejected,4,1,12,5,sell,limit,-100,10,-100,4,4,6,2,0,too_late_to_cancel,\n");
  r.type = ReportType::kCancelled;
  r.reason = RejectReason::kNone;
  r.cancel_reason = CancelReason::kIocResidual;
  out.clear();
  append_csv(out, r);
  EXPECT_NE(out.find(",0,,ioc_residual\n"), std::string::npos) << out;
}

TEST(OutputCsv, ShouldWriteEveryMarketDataFieldInHeaderOrder) {
  MdEvent m{};
  m.seq = 1;
  m.event_id = 2;
  m.instrument = 3;
  m.type = MdType::kTopOfBook;
  m.side = Side::kBuy;
  m.bid_price = 100;
  m.bid_qty = 5;
  m.ask_price = 0;
  m.ask_qty = 0;
  m.instrument_seq = 7;
  std::string out;
  append_csv(out, m);
  EXPECT_EQ(out, "1,2,3,top_of_book,buy,0,0,0,0,100,5,0,0,7\n");
  EXPECT_EQ(columns(out), columns(kMarketDataCsvHeader));
}

TEST(OutputCsv, ShouldPrintValuesOutsideTheEnumsAsNumbers) {
  EXPECT_EQ(name_of(static_cast<ReportType>(42)), "42");
  EXPECT_EQ(name_of(static_cast<MdType>(0)), "0");
  EXPECT_EQ(name_of(static_cast<CancelReason>(200)), "200");
  EXPECT_EQ(name_of(static_cast<RejectReason>(999)), "999");
}

TEST(OutputCsv, ShouldNameEveryRejectReasonWithoutCommasOrSpaces) {
  for (unsigned code = 1; code < 400; ++code) {
    const std::string name = name_of(static_cast<RejectReason>(code));
    EXPECT_EQ(name.find_first_of(", "), std::string::npos) << name;
  }
}

TEST(OutputCsv, FileWriterShouldWriteTheHeaderThenTheLines) {
  const auto path = (std::filesystem::temp_directory_path() / "nanotick_output_csv_test.csv").string();
  {
    CsvFileWriter writer(path, kMarketDataCsvHeader);
    MdEvent m{};
    m.type = MdType::kAdd;
    m.side = Side::kSell;
    for (int i = 1; i <= 3; ++i) {
      m.seq = static_cast<Seq>(i);
      writer.add(m);
    }
    writer.close();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  // Built with append(): GCC 12's LTO flags string operator+ here with a
  // false -Wstringop-overflow.
  std::string expected(kMarketDataCsvHeader);
  expected.append("1,0,0,add,sell,0,0,0,0,0,0,0,0,0\n");
  expected.append("2,0,0,add,sell,0,0,0,0,0,0,0,0,0\n");
  expected.append("3,0,0,add,sell,0,0,0,0,0,0,0,0,0\n");
  EXPECT_EQ(text.str(), expected);
}

TEST(OutputCsv, FileWriterShouldNameAFileItCannotOpen) {
  try {
    CsvFileWriter writer("/nonexistent/dir/out.csv", kReportCsvHeader);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("CSV file '/nonexistent/dir/out.csv': cannot open for writing"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace nanotick::workload
