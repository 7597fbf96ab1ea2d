// Fuzz target: a telemetry (.ntt) file's bytes, as `nanotick report`'s C++
// counterpart reads them. read_telemetry_file must refuse anything malformed
// with std::runtime_error naming the problem, never crash or allocate without
// bound.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "telemetry/file_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::exists("/dev/shm") ? std::string("/dev/shm") : std::string("/tmp")) +
      "/nanotick-fuzz-telemetry-" + std::to_string(::getpid()) + ".ntt";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    (void)nanotick::telemetry::read_telemetry_file(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
