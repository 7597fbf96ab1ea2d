#include "core/tsc_clock.hpp"

#include <cpuid.h>
#include <algorithm>
#include <array>
#include <fstream>
#include <string>

namespace nanotick::core {

namespace {

std::int64_t system_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// CPUID leaf 0x80000007, EDX bit 8: invariant TSC. Hypervisors often hide it,
// so the kernel's own flags (constant_tsc + nonstop_tsc) are accepted too.
bool cpuid_invariant_tsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
}

bool cpuinfo_invariant_tsc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      auto has = [&](const char* flag) {
        return (" " + line + " ").find(std::string(" ") + flag + " ") != std::string::npos;
      };
      return has("constant_tsc") && has("nonstop_tsc");
    }
  }
  return false;
}

}  // namespace

TscClock::TscClock(bool uses_tsc, double ticks_per_ns, std::uint64_t base_ticks, std::int64_t epoch_ns)
    : uses_tsc_(uses_tsc),
      ticks_per_ns_(ticks_per_ns),
      ns_per_tick_(1.0 / ticks_per_ns),
      base_ticks_(base_ticks),
      epoch_ns_at_base_(epoch_ns) {}

bool TscClock::tsc_is_invariant() noexcept {
  try {
    return cpuid_invariant_tsc() || cpuinfo_invariant_tsc();
  } catch (...) {
    return false;
  }
}

TscClock TscClock::steady_fallback() { return TscClock(false, 1.0, steady_ns(), system_now_ns()); }

TscClock TscClock::calibrate(std::chrono::milliseconds window) {
  if (!tsc_is_invariant()) return steady_fallback();
  // Several short measurements; the median rejects one disturbed by preemption.
  constexpr int kRounds = 5;
  std::array<double, kRounds> rates{};
  const auto slice = std::max<std::chrono::nanoseconds>(window / kRounds, std::chrono::microseconds(500));
  for (auto& rate : rates) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t c0 = rdtscp();
    auto t1 = t0;
    while (t1 - t0 < slice) t1 = std::chrono::steady_clock::now();
    const std::uint64_t c1 = rdtscp();
    const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
    rate = static_cast<double>(c1 - c0) / ns;
  }
  std::sort(rates.begin(), rates.end());
  const double ticks_per_ns = rates[kRounds / 2];
  if (!(ticks_per_ns > 0.05 && ticks_per_ns < 20.0)) return steady_fallback();  // absurd: distrust TSC
  // Pair a TSC reading with a wall-clock reading taken as close together as we can.
  const std::uint64_t before = rdtscp();
  const std::int64_t wall = system_now_ns();
  const std::uint64_t after = rdtscp();
  return TscClock(true, ticks_per_ns, before + (after - before) / 2, wall);
}

const TscClock& TscClock::global() {
  static const TscClock clock = calibrate();
  return clock;
}

}  // namespace nanotick::core
