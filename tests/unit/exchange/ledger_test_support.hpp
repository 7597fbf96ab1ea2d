// What the trade ledger's tests and the report replayer's share: a ledger
// file path removed at the end of the test, and an engine fill report as the
// engine thread's tap sees it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/events.hpp"

namespace ledger_test {

namespace ne = nanotick::engine;

// A fresh path in the temp directory, unique per process and object; the file is removed with it.
struct TempLedger {
  TempLedger()
      : path(std::filesystem::temp_directory_path() /
             ("nt-ledger-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".ledger")) {}
  ~TempLedger() { std::filesystem::remove(path); }
  TempLedger(const TempLedger&) = delete;
  TempLedger& operator=(const TempLedger&) = delete;
  std::filesystem::path path;
  static inline int counter = 0;
};

// A fill of `client` (exec_seq `seq`, caused by request `request`): order id
// 100 + seq, client order id 1000 + seq, price 250.
inline ne::ExecReport fill(ne::ClientId client, ne::Side side, bool maker, ne::Seq seq, ne::Seq request, ne::Qty qty,
                           ne::InstrumentId instrument) {
  ne::ExecReport r{};
  r.type = ne::ReportType::kFill;
  r.client = client;
  r.side = side;
  r.is_maker = maker;
  r.seq = seq;
  r.request_seq = request;
  r.instrument = instrument;
  r.order_id = 100 + seq;
  r.client_order_id = 1000 + seq;
  r.last_price = 250;
  r.last_qty = qty;
  return r;
}

}  // namespace ledger_test
