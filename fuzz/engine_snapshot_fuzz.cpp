// Fuzz target: an engine snapshot file's bytes. decode_engine_snapshot must
// refuse anything malformed with an exception (what load_latest_snapshot
// turns into "snapshot skipped"), never crash or read past the bytes.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "exchange/snapshots/engine_snapshot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  try {
    (void)nanotick::exchange::decode_engine_snapshot(bytes, 0);
  } catch (const std::runtime_error&) {
  } catch (const std::length_error&) {
  }
  return 0;
}
