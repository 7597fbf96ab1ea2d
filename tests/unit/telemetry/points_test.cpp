// Unit tests for the telemetry point catalogue: the exact set of points the
// instrumentation and the report agree on, their stable ids and kinds.
#include "telemetry/points.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nt = nanotick::telemetry;

namespace {

TEST(TelemetryPoints, ShouldListEveryHopOfBothPathsWithStableIds) {
  // Ids are written to files: changing one breaks every recorded run.
  const std::pair<nt::Point, std::uint16_t> expected[] = {
      {nt::Point::ex_tcp_read, 1},         {nt::Point::ex_sequencer_in, 2},    {nt::Point::ex_sequencer_out, 3},
      {nt::Point::ex_engine_in, 4},        {nt::Point::ex_engine_out, 5},      {nt::Point::ex_tcp_write, 6},
      {nt::Point::ex_md_write, 7},         {nt::Point::ex_md_effect, 8},       {nt::Point::tr_udp_read, 16},
      {nt::Point::tr_engine_dequeue, 17},  {nt::Point::tr_decision, 18},       {nt::Point::tr_tcp_write, 19},
      {nt::Point::tr_response_read, 20},   {nt::Point::fn_book_add, 32},       {nt::Point::fn_book_cancel, 33},
      {nt::Point::fn_book_match, 34},      {nt::Point::fn_engine_process, 35}, {nt::Point::fn_sequencer, 36},
      {nt::Point::fn_md_publish, 37},      {nt::Point::fn_pre_trade, 38},      {nt::Point::fn_matching, 39},
      {nt::Point::fn_settlement, 40},      {nt::Point::fn_ledger, 41},         {nt::Point::fn_feature_update, 48},
      {nt::Point::fn_position_update, 49}, {nt::Point::fn_risk_check, 50},     {nt::Point::fn_order_manager, 51},
  };
  ASSERT_EQ(nt::kPoints.size(), std::size(expected));
  for (const auto& [point, id] : expected) {
    EXPECT_EQ(static_cast<std::uint16_t>(point), id) << nt::name_of(point);
  }
}

TEST(TelemetryPoints, ShouldNameAndClassifyEachPoint) {
  EXPECT_EQ(nt::name_of(nt::Point::ex_tcp_read), "ex_tcp_read");
  EXPECT_EQ(nt::name_of(nt::Point::tr_engine_dequeue), "tr_engine_dequeue");
  EXPECT_EQ(nt::name_of(nt::Point::fn_order_manager), "fn_order_manager");
  std::set<std::string> names;
  for (const nt::PointInfo& info : nt::kPoints) {
    names.insert(std::string(info.name));
    const bool timer = info.name.starts_with("fn_");
    EXPECT_EQ(info.kind, timer ? nt::PointKind::kTimer : nt::PointKind::kHop) << info.name;
    EXPECT_LE(info.name.size(), nt::kMaxPointNameBytes);
  }
  EXPECT_EQ(names.size(), nt::kPoints.size()) << "point names must be unique";
}

TEST(TelemetryPoints, ShouldFindPointsByRawIdAndRejectUnknownIds) {
  ASSERT_NE(nt::find_point(19), nullptr);
  EXPECT_EQ(nt::find_point(19)->point, nt::Point::tr_tcp_write);
  EXPECT_EQ(nt::find_point(0), nullptr);
  EXPECT_EQ(nt::find_point(15), nullptr);
  EXPECT_EQ(nt::find_point(999), nullptr);
  EXPECT_EQ(nt::name_of(static_cast<nt::Point>(999)), "unknown");
}

TEST(TelemetryPoints, ShouldCheckMacroKindsAtCompileTime) {
  static_assert(nt::hop_point<nt::Point::tr_decision>() == nt::Point::tr_decision);
  static_assert(nt::timer_point<nt::Point::fn_risk_check>() == nt::Point::fn_risk_check);
  static_assert(nt::kind_of(nt::Point::ex_md_write) == nt::PointKind::kHop);
  static_assert(nt::kind_of(nt::Point::fn_md_publish) == nt::PointKind::kTimer);
  SUCCEED();
}

}  // namespace
