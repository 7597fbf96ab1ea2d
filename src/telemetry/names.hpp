// Validation of the names a telemetry file carries (process and recorder
// names). Stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace nanotick::telemetry {

// Throws std::invalid_argument naming `what` when `name` is empty, longer than
// `max_bytes`, or holds a byte outside printable ASCII (0x20..0x7e): names are
// stored NUL-padded in fixed fields and printed by the report as they are.
void validate_name(std::string_view what, std::string_view name, std::size_t max_bytes);

}  // namespace nanotick::telemetry
