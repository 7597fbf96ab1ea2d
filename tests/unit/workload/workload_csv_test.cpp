// CSV export of a workload: documented header, names for enums, numbers for
// values outside them; deterministic.
#include "workload/workload_csv.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "workload/generators.hpp"

namespace nanotick::workload {
namespace {

using engine::OrderType;
using engine::Side;

TEST(WorkloadCsv, ShouldWriteHeaderInstrumentsAndOneLinePerRequest) {
  Workload wl;
  engine::InstrumentConfig in;
  in.symbol = "ABC";
  wl.config.instruments = {in};
  wl.requests.push_back(engine::make_new(0, 3, 17, Side::kSell, OrderType::kIoc, 250, 9));
  wl.requests.back().event_id = 1;
  wl.requests.push_back(engine::make_cancel(0, 3, 17));
  auto odd = engine::make_modify(0, 3, 17, -4, 2);
  odd.side = static_cast<Side>(9);
  wl.requests.push_back(odd);
  std::ostringstream out;
  write_workload_csv(wl, out);
  EXPECT_EQ(out.str(),
            "# nanotick workload: kind=custom seed=0 scale=1 instruments=1 requests=3\n"
            "# instrument,id,symbol,tick_size,min_price,max_price,collar,max_order_qty,max_orders,max_levels\n"
            "# instrument,0,ABC,1,1,1000000,0,1000000,65536,4096\n"
            "request_seq,type,instrument,client,client_order_id,side,order_type,stp,price,qty,reserved,event_id\n"
            "1,new,0,3,17,sell,ioc,none,250,9,0,1\n"
            "2,cancel,0,3,17,buy,limit,none,0,0,0,0\n"
            "3,modify,0,3,17,9,limit,none,-4,2,0,0\n");
}

TEST(WorkloadCsv, ShouldBeDeterministicForAGeneratedWorkload) {
  const Workload wl = generate({WorkloadKind::kCrash, 4, 0.005});
  std::ostringstream a;
  std::ostringstream b;
  write_workload_csv(wl, a);
  write_workload_csv(generate({WorkloadKind::kCrash, 4, 0.005}), b);
  EXPECT_EQ(a.str(), b.str());
  std::size_t lines = 0;
  for (const char c : a.str()) lines += c == '\n';
  EXPECT_EQ(lines, wl.requests.size() + 4);  // kind line, table header, 1 instrument, column header
}

}  // namespace
}  // namespace nanotick::workload
