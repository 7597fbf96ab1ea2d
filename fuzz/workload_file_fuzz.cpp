// Fuzz target: a workload file's bytes (./nanotick replay reads them).
// decode_workload must refuse anything malformed with an exception naming
// the problem, never crash or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "workload/workload_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)nanotick::workload::decode_workload(std::span<const std::uint8_t>(data, size), "fuzz");
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
