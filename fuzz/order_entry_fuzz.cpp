// Fuzz target: an order-entry byte stream as the exchange frames it (and as
// a client frames the exchange's): next_frame over arbitrary bytes, both
// directions, consuming as the gateway does. Finds: reads past the input,
// a frame length the caller cannot consume, a loop that never advances.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "proto/order_entry_codec.hpp"

namespace np = nanotick::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const np::Direction from : {np::Direction::kFromClient, np::Direction::kFromExchange}) {
    std::span<const std::uint8_t> rest(data, size);
    while (!rest.empty()) {
      const np::Frame f = np::next_frame(rest, from);
      if (f.status == np::FrameStatus::kNeedMore || f.status == np::FrameStatus::kFatal) break;
      if (f.length == 0 || f.length > rest.size()) std::abort();  // the caller would loop or overrun
      rest = rest.subspan(f.length);
    }
  }
  return 0;
}
