// CSV export of a workload (docs/WORKLOADS.md, "CSV format"): '#' comment lines
// with the header fields and the instrument table, then one line per request.
// Deterministic text. Functions only; thread-safe.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "engine/request.hpp"
#include "workload/workload.hpp"

namespace nanotick::workload {

// Names used in every CSV; values outside the enums print as their number.
std::string name_of(engine::RequestType type);
std::string name_of(engine::Side side);
std::string name_of(engine::OrderType type);
std::string name_of(engine::StpMode stp);

void write_workload_csv(const Workload& workload, std::ostream& out);
// Throws std::runtime_error naming the file on I/O failure.
void write_workload_csv(const Workload& workload, const std::string& path);

}  // namespace nanotick::workload
