// HDR-style log-linear latency histogram. Single writer; not thread-safe (give
// each thread its own and merge them).
//
// Buckets: values below 2^(p+1) are counted exactly; above that, every octave
// [2^e, 2^(e+1)) is split into 2^p equal sub-buckets, so a bucket's width is at
// most 2^-p of any value in it. With the default p = 7 the relative error of a
// reported percentile is below 0.79% across the whole uint64 range, in
// 128 * 58 buckets (59 KiB). record() is O(1): a count-leading-zeros, a shift
// and an increment. Percentiles report the highest value of the bucket the
// rank falls in (clamped to the exact max), as HdrHistogram does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/compiler.hpp"

namespace nanotick::core {

class LatencyHistogram {
 public:
  explicit LatencyHistogram(unsigned precision_bits = 7);

  NT_ALWAYS_INLINE void record(std::uint64_t value) noexcept { record_n(value, 1); }
  NT_ALWAYS_INLINE void record_n(std::uint64_t value, std::uint64_t n) noexcept {
    counts_[index_of(value)] += n;
    count_ += n;
    sum_ += static_cast<double>(value) * static_cast<double>(n);
    if (value < min_) min_ = value;
    if (value > max_) max_ = value;
  }

  // Adds another histogram's samples. Both must have the same precision
  // (throws std::invalid_argument otherwise: a programming error at set-up).
  void merge(const LatencyHistogram& other);
  void reset() noexcept;

  unsigned precision_bits() const noexcept { return precision_bits_; }
  // Upper bound of the relative error of percentile(): 2^-precision_bits.
  double relative_precision() const noexcept { return 1.0 / static_cast<double>(1ull << precision_bits_); }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max() const noexcept { return max_; }
  double mean() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  // pct in [0, 100]; 0 for an empty histogram. The sample of rank
  // ceil(pct/100 * count) (at least 1), reported as its bucket's highest value.
  std::uint64_t percentile(double pct) const noexcept;

  // Compact binary form: header then (index delta, count) varint pairs for the
  // non-empty buckets only. deserialize() validates and returns nullopt on any
  // malformed input.
  std::vector<std::uint8_t> serialize() const;
  static std::optional<LatencyHistogram> deserialize(std::span<const std::uint8_t> bytes);

  // Bucket geometry, exposed for tests.
  std::size_t bucket_count() const noexcept { return counts_.size(); }
  std::size_t index_of(std::uint64_t value) const noexcept {
    if (value < exact_limit_) return static_cast<std::size_t>(value);
    const unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(value));  // e >= p + 1
    const unsigned shift = e - precision_bits_;
    const std::uint64_t sub = (value >> shift) - sub_buckets_;  // in [0, 2^p)
    return static_cast<std::size_t>(exact_limit_ + (shift - 1) * sub_buckets_ + sub);
  }
  std::uint64_t lowest_of(std::size_t index) const noexcept;
  std::uint64_t highest_of(std::size_t index) const noexcept;

 private:
  unsigned precision_bits_;
  std::uint64_t sub_buckets_;  // 2^p
  std::uint64_t exact_limit_;  // 2^(p+1)
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace nanotick::core
