// One telemetry record: 32 bytes, the unit of the per-thread rings and of the
// record section of a telemetry file (docs/TELEMETRY.md). A plain value type;
// thread-safety is that of whoever holds it.
//
// The in-memory layout is the file layout (little-endian, no padding), so the
// writer copies records to the file without encoding them; the static_asserts
// below pin every offset, and telemetry files are only written on
// little-endian hosts (checked in file_format.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nanotick::telemetry {

struct Record {
  std::uint64_t tsc;       // clock ticks (TscClock::now()) when the hop / timed call began
  std::uint64_t key;       // the event id that joins hops (docs/TELEMETRY.md: key conventions)
  std::uint64_t aux;       // a second id where the point defines one, else 0
  std::uint16_t point;     // telemetry::Point
  std::uint16_t reserved;  // 0 (readers ignore it)
  std::uint32_t cycles;    // function timers: elapsed ticks, saturated; hops: 0
};

static_assert(sizeof(Record) == 32, "Record is 32 bytes in rings and files");
static_assert(std::is_trivially_copyable_v<Record> && std::is_standard_layout_v<Record>);
static_assert(offsetof(Record, tsc) == 0 && offsetof(Record, key) == 8 && offsetof(Record, aux) == 16 &&
              offsetof(Record, point) == 24 && offsetof(Record, reserved) == 26 && offsetof(Record, cycles) == 28);

// Elapsed ticks from `start` to `end` as a Record::cycles value: saturated at
// the u32 maximum (about 1.4 s at 3 GHz) rather than wrapped, and 0 if the
// clock went backwards (a thread that migrated between CPUs whose TSCs differ).
constexpr std::uint32_t saturate_ticks(std::uint64_t start, std::uint64_t end) noexcept {
  if (end <= start) return 0;
  const std::uint64_t elapsed = end - start;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  return static_cast<std::uint32_t>(elapsed < kMax ? elapsed : kMax);
}

}  // namespace nanotick::telemetry
