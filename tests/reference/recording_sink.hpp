// A test sink that records every ExecReport and MdEvent in arrival order, plus
// the interleaving of the two streams; and helpers that compare and print
// them field by field for readable diffs. Not thread-safe: the engine's thread
// writes it, the test reads it afterwards.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "engine/events.hpp"
#include "engine/request.hpp"

namespace nanotick::reference {

struct RecordingSink {
  enum class Kind : std::uint8_t { kReport, kMarketData };

  std::vector<engine::ExecReport> reports;
  std::vector<engine::MdEvent> market_data;
  std::vector<Kind> order;  // which stream each output went to, in emission order

  void on_report(const engine::ExecReport& r) {
    reports.push_back(r);
    order.push_back(Kind::kReport);
  }
  void on_market_data(const engine::MdEvent& m) {
    market_data.push_back(m);
    order.push_back(Kind::kMarketData);
  }
  void clear() {
    reports.clear();
    market_data.clear();
    order.clear();
  }
};

inline bool same(const engine::ExecReport& a, const engine::ExecReport& b) {
  return a.seq == b.seq && a.request_seq == b.request_seq && a.event_id == b.event_id && a.client == b.client &&
         a.instrument == b.instrument && a.client_order_id == b.client_order_id && a.order_id == b.order_id &&
         a.price == b.price && a.order_qty == b.order_qty && a.last_price == b.last_price && a.last_qty == b.last_qty &&
         a.cum_qty == b.cum_qty && a.leaves_qty == b.leaves_qty && a.contra_order_id == b.contra_order_id &&
         a.type == b.type && a.side == b.side && a.order_type == b.order_type && a.is_maker == b.is_maker &&
         a.reason == b.reason && a.cancel_reason == b.cancel_reason && a.request_type == b.request_type &&
         std::equal(std::begin(a.pad), std::end(a.pad), std::begin(b.pad));
}

inline bool same(const engine::MdEvent& a, const engine::MdEvent& b) {
  return a.seq == b.seq && a.instrument_seq == b.instrument_seq && a.event_id == b.event_id &&
         a.instrument == b.instrument && a.type == b.type && a.side == b.side && a.pad[0] == b.pad[0] &&
         a.pad[1] == b.pad[1] && a.order_id == b.order_id && a.contra_order_id == b.contra_order_id &&
         a.price == b.price && a.qty == b.qty && a.bid_price == b.bid_price && a.bid_qty == b.bid_qty &&
         a.ask_price == b.ask_price && a.ask_qty == b.ask_qty;
}

namespace detail {
template <typename E>
unsigned raw(E e) {
  return static_cast<unsigned>(e);
}
}  // namespace detail

inline std::string describe(const engine::Request& r) {
  std::ostringstream s;
  s << "Request{type=" << detail::raw(r.type) << " side=" << detail::raw(r.side)
    << " order_type=" << detail::raw(r.order_type) << " stp=" << detail::raw(r.stp) << " instrument=" << r.instrument
    << " client=" << r.client << " reserved=" << r.reserved << " client_order_id=" << r.client_order_id
    << " price=" << r.price << " qty=" << r.qty << " event_id=" << r.event_id << "}";
  return s.str();
}

inline std::string describe(const engine::ExecReport& r) {
  std::ostringstream s;
  s << "ExecReport{seq=" << r.seq << " request_seq=" << r.request_seq << " event_id=" << r.event_id
    << " type=" << detail::raw(r.type) << " client=" << r.client << " instrument=" << r.instrument
    << " client_order_id=" << r.client_order_id << " order_id=" << r.order_id << " side=" << detail::raw(r.side)
    << " order_type=" << detail::raw(r.order_type) << " price=" << r.price << " order_qty=" << r.order_qty
    << " last_price=" << r.last_price << " last_qty=" << r.last_qty << " cum_qty=" << r.cum_qty
    << " leaves_qty=" << r.leaves_qty << " contra=" << r.contra_order_id << " is_maker=" << r.is_maker
    << " reason=" << detail::raw(r.reason) << " cancel_reason=" << detail::raw(r.cancel_reason)
    << " pad=" << detail::raw(r.pad[0]) << "," << detail::raw(r.pad[1]) << "," << detail::raw(r.pad[2]) << "}";
  return s.str();
}

inline std::string describe(const engine::MdEvent& m) {
  std::ostringstream s;
  s << "MdEvent{seq=" << m.seq << " instrument_seq=" << m.instrument_seq << " event_id=" << m.event_id
    << " instrument=" << m.instrument << " type=" << detail::raw(m.type) << " side=" << detail::raw(m.side)
    << " order_id=" << m.order_id << " contra=" << m.contra_order_id << " price=" << m.price << " qty=" << m.qty
    << " bid=" << m.bid_qty << "@" << m.bid_price << " ask=" << m.ask_qty << "@" << m.ask_price
    << " pad=" << detail::raw(m.pad[0]) << "," << detail::raw(m.pad[1]) << "}";
  return s.str();
}

// Compares two recordings; returns "" when identical, else a description of
// the first difference (the full expected/actual lists of the smaller stream
// around it).
inline std::string first_difference(const RecordingSink& expected, const RecordingSink& actual) {
  std::ostringstream s;
  const auto print_reports = [&s](const char* who, const RecordingSink& rec) {
    s << "  " << who << " reports (" << rec.reports.size() << "):\n";
    for (const auto& r : rec.reports) s << "    " << describe(r) << "\n";
  };
  const auto print_md = [&s](const char* who, const RecordingSink& rec) {
    s << "  " << who << " market data (" << rec.market_data.size() << "):\n";
    for (const auto& m : rec.market_data) s << "    " << describe(m) << "\n";
  };
  const std::size_t nr = std::min(expected.reports.size(), actual.reports.size());
  for (std::size_t i = 0; i < nr; ++i) {
    if (!same(expected.reports[i], actual.reports[i])) {
      s << "report #" << i << " differs\n  expected " << describe(expected.reports[i]) << "\n  actual   "
        << describe(actual.reports[i]) << "\n";
      print_reports("expected", expected);
      print_reports("actual", actual);
      return s.str();
    }
  }
  if (expected.reports.size() != actual.reports.size()) {
    s << "report count differs: expected " << expected.reports.size() << ", actual " << actual.reports.size() << "\n";
    print_reports("expected", expected);
    print_reports("actual", actual);
    return s.str();
  }
  const std::size_t nm = std::min(expected.market_data.size(), actual.market_data.size());
  for (std::size_t i = 0; i < nm; ++i) {
    if (!same(expected.market_data[i], actual.market_data[i])) {
      s << "market data #" << i << " differs\n  expected " << describe(expected.market_data[i]) << "\n  actual   "
        << describe(actual.market_data[i]) << "\n";
      print_md("expected", expected);
      print_md("actual", actual);
      return s.str();
    }
  }
  if (expected.market_data.size() != actual.market_data.size()) {
    s << "market data count differs: expected " << expected.market_data.size() << ", actual "
      << actual.market_data.size() << "\n";
    print_md("expected", expected);
    print_md("actual", actual);
    return s.str();
  }
  if (expected.order != actual.order) {
    s << "reports and market data are interleaved differently (R = report, M = market data)\n"
      << "  expected ";
    for (auto k : expected.order) s << (k == RecordingSink::Kind::kReport ? 'R' : 'M');
    s << "\n  actual   ";
    for (auto k : actual.order) s << (k == RecordingSink::Kind::kReport ? 'R' : 'M');
    s << "\n";
    return s.str();
  }
  return "";
}

}  // namespace nanotick::reference
