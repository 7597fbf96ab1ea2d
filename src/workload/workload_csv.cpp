#include "workload/workload_csv.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace nanotick::workload {

using engine::OrderType;
using engine::RequestType;
using engine::Side;
using engine::StpMode;

namespace {
template <typename E>
std::string number(E value) {
  return std::to_string(static_cast<unsigned>(value));
}
}  // namespace

std::string name_of(RequestType type) {
  switch (type) {
    case RequestType::kNew: return "new";
    case RequestType::kCancel: return "cancel";
    case RequestType::kModify: return "modify";
    case RequestType::kMassCancel: return "mass_cancel";
    case RequestType::kHaltInstrument: return "halt";
    case RequestType::kResumeInstrument: return "resume";
    case RequestType::kBlockClient: return "block";
    case RequestType::kUnblockClient: return "unblock";
    case RequestType::kAdminCancelAll: return "cancel_all";
    case RequestType::kAdminAdjust: return "adjust";
  }
  return number(type);
}

std::string name_of(Side side) {
  switch (side) {
    case Side::kBuy: return "buy";
    case Side::kSell: return "sell";
  }
  return number(side);
}

std::string name_of(OrderType type) {
  switch (type) {
    case OrderType::kLimit: return "limit";
    case OrderType::kIoc: return "ioc";
    case OrderType::kFok: return "fok";
    case OrderType::kMarket: return "market";
  }
  return number(type);
}

std::string name_of(StpMode stp) {
  switch (stp) {
    case StpMode::kNone: return "none";
    case StpMode::kCancelResting: return "cancel_resting";
    case StpMode::kCancelIncoming: return "cancel_incoming";
    case StpMode::kCancelBoth: return "cancel_both";
  }
  return number(stp);
}

void write_workload_csv(const Workload& wl, std::ostream& out) {
  fmt::memory_buffer buf;
  auto it = std::back_inserter(buf);
  fmt::format_to(it, "# nanotick workload: kind={} seed={} scale={} instruments={} requests={}\n", to_string(wl.kind),
                 wl.seed, wl.scale, wl.config.instruments.size(), wl.requests.size());
  fmt::format_to(it,
                 "# instrument,id,symbol,tick_size,min_price,max_price,collar,max_order_qty,"
                 "max_orders,max_levels\n");
  for (std::size_t i = 0; i < wl.config.instruments.size(); ++i) {
    const auto& in = wl.config.instruments[i];
    fmt::format_to(it, "# instrument,{},{},{},{},{},{},{},{},{}\n", i, in.symbol, in.tick_size, in.min_price,
                   in.max_price, in.collar, in.max_order_qty, in.max_orders, in.max_levels);
  }
  fmt::format_to(it,
                 "request_seq,type,instrument,client,client_order_id,side,order_type,stp,price,qty,"
                 "reserved,event_id\n");
  std::uint64_t seq = 0;
  for (const auto& r : wl.requests) {
    fmt::format_to(it, "{},{},{},{},{},{},{},{},{},{},{},{}\n", ++seq, name_of(r.type), r.instrument, r.client,
                   r.client_order_id, name_of(r.side), name_of(r.order_type), name_of(r.stp), r.price, r.qty,
                   r.reserved, r.event_id);
    if (buf.size() > (1u << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void write_workload_csv(const Workload& workload, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw std::runtime_error("CSV file '" + path + "': cannot open for writing");
  write_workload_csv(workload, out);
  out.flush();
  if (!out) throw std::runtime_error("CSV file '" + path + "': write failed (disk full?)");
}

}  // namespace nanotick::workload
