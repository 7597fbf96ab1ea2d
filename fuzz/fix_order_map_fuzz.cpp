// Fuzz target: the FIX gateway's order map file (src/fix/fix_order_map.*),
// which the gateway replays at start. Anything that does not parse must be
// the std::runtime_error naming the file and the byte; and whatever it keeps
// must be exactly what its whole records say: the same text cut at the end
// of the last whole record replays to the same orders (a torn tail is only
// ever the last record). Any other exception, a crash or a sanitizer report
// is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fix/fix_order_map.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nanotick::fix::FixOrderMapContents all;
  try {
    all = nanotick::fix::parse_fix_order_map(text, "fuzz.orders");
  } catch (const std::runtime_error& e) {
    if (std::string_view(e.what()).find("fuzz.orders: corrupt record at byte") == std::string_view::npos) std::abort();
    return 0;
  }
  if (all.complete_bytes > size) std::abort();
  const auto whole = nanotick::fix::parse_fix_order_map(text.substr(0, all.complete_bytes), "fuzz.orders");
  if (whole.complete_bytes != all.complete_bytes || whole.orders.size() != all.orders.size() ||
      whole.names.size() != all.names.size() || whole.next_number != all.next_number)
    std::abort();
  for (const auto& [number, order] : all.orders) {
    if (order.number != number || order.cum_qty > order.qty || order.cum_qty < 0) std::abort();
    if (number >= all.next_number) std::abort();
  }
  for (const auto& [name, number] : all.names)
    if (!all.orders.contains(number)) std::abort();
  return 0;
}
