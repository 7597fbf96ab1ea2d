// The generators' random numbers: xoshiro256** seeded through splitmix64, and
// integer-only or fully specified derivations, so a seed gives the same stream
// on every platform (std:: distributions are implementation-defined). Not
// thread-safe: one per generator.
#pragma once

#include <cmath>
#include <cstdint>

namespace nanotick::workload {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept {
    for (auto& s : state_) {
      seed += 0x9E3779B97F4A7C15ull;  // splitmix64
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, n), n > 0 (modulo bias below 2^-40 for the n we use).
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) noexcept {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // Uniform in [0, 1).
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) noexcept { return unit() < p; }
  // Discrete power law on [0, cap): P(X >= k) ~ (k + 1)^-alpha.
  std::int64_t power_law(double alpha, std::int64_t cap) noexcept {
    for (;;) {
      const double x = std::floor(std::pow(1.0 - unit(), -1.0 / alpha)) - 1.0;
      if (x < static_cast<double>(cap)) return static_cast<std::int64_t>(x);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace nanotick::workload
