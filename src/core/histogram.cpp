#include "core/histogram.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nanotick::core {

namespace {

constexpr std::uint8_t kMagic[4] = {'N', 'T', 'H', '1'};

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

bool get_varint(std::span<const std::uint8_t>& in, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const std::uint8_t b = in.front();
    in = in.subspan(1);
    if (shift == 63 && (b & 0x7e) != 0) return false;  // would overflow 64 bits
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace

LatencyHistogram::LatencyHistogram(unsigned precision_bits) : precision_bits_(precision_bits) {
  if (precision_bits < 1 || precision_bits > 16) {
    throw std::invalid_argument("LatencyHistogram: precision_bits must be in [1, 16], got " +
                                std::to_string(precision_bits));
  }
  sub_buckets_ = 1ull << precision_bits;
  exact_limit_ = 2 * sub_buckets_;
  // Octaves e = p+1 .. 63 each hold 2^p buckets after the exact region.
  counts_.assign(exact_limit_ + (63 - precision_bits) * sub_buckets_, 0);
}

std::uint64_t LatencyHistogram::lowest_of(std::size_t index) const noexcept {
  if (index < exact_limit_) return index;
  const std::uint64_t k = index - exact_limit_;
  const std::uint64_t shift = k / sub_buckets_ + 1;
  const std::uint64_t sub = k % sub_buckets_ + sub_buckets_;
  return sub << shift;
}

std::uint64_t LatencyHistogram::highest_of(std::size_t index) const noexcept {
  if (index < exact_limit_) return index;
  const std::uint64_t shift = (index - exact_limit_) / sub_buckets_ + 1;
  return lowest_of(index) + ((1ull << shift) - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.precision_bits_ != precision_bits_) {
    throw std::invalid_argument("LatencyHistogram::merge: precision differs (" + std::to_string(precision_bits_) +
                                " vs " + std::to_string(other.precision_bits_) + ")");
  }
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  if (other.count_) {
    if (other.min_ < min_) min_ = other.min_;
    if (other.max_ > max_) max_ = other.max_;
  }
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0.0;
  min_ = UINT64_MAX;
  max_ = 0;
}

std::uint64_t LatencyHistogram::percentile(double pct) const noexcept {
  if (count_ == 0) return 0;
  if (!(pct >= 0.0)) pct = 0.0;  // also catches NaN
  if (pct > 100.0) pct = 100.0;
  auto rank = static_cast<std::uint64_t>(std::ceil(pct / 100.0 * static_cast<double>(count_)));
  if (rank < 1) rank = 1;
  if (rank > count_) rank = count_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const std::uint64_t v = highest_of(i);
      return v > max_ ? max_ : (v < min_ ? min_ : v);
    }
  }
  return max_;
}

std::vector<std::uint8_t> LatencyHistogram::serialize() const {
  std::vector<std::uint8_t> out(kMagic, kMagic + 4);
  out.push_back(static_cast<std::uint8_t>(precision_bits_));
  put_varint(out, count_);
  put_varint(out, min());
  put_varint(out, max_);
  std::uint64_t sum_bits;
  std::memcpy(&sum_bits, &sum_, sizeof sum_bits);
  put_varint(out, sum_bits);
  std::uint64_t nonzero = 0;
  for (auto c : counts_) nonzero += c != 0;
  put_varint(out, nonzero);
  std::size_t last = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    put_varint(out, i - last);
    put_varint(out, counts_[i]);
    last = i;
  }
  return out;
}

std::optional<LatencyHistogram> LatencyHistogram::deserialize(std::span<const std::uint8_t> in) {
  if (in.size() < 5 || std::memcmp(in.data(), kMagic, 4) != 0) return std::nullopt;
  const unsigned p = in[4];
  if (p < 1 || p > 16) return std::nullopt;
  in = in.subspan(5);
  LatencyHistogram h(p);
  std::uint64_t count, min, max, sum_bits, nonzero;
  if (!get_varint(in, count) || !get_varint(in, min) || !get_varint(in, max) || !get_varint(in, sum_bits) ||
      !get_varint(in, nonzero)) {
    return std::nullopt;
  }
  if (nonzero > h.counts_.size()) return std::nullopt;
  std::uint64_t total = 0;
  std::size_t index = 0;
  for (std::uint64_t k = 0; k < nonzero; ++k) {
    std::uint64_t delta, c;
    if (!get_varint(in, delta) || !get_varint(in, c)) return std::nullopt;
    if ((k > 0 && delta == 0) || delta >= h.counts_.size() - index || c == 0) return std::nullopt;
    index += static_cast<std::size_t>(delta);
    h.counts_[index] = c;
    if (total + c < total) return std::nullopt;  // overflow
    total += c;
  }
  if (!in.empty() || total != count) return std::nullopt;
  if (count > 0 && (min > max || h.index_of(min) > h.index_of(max))) return std::nullopt;
  h.count_ = count;
  h.min_ = count ? min : UINT64_MAX;
  h.max_ = max;
  std::memcpy(&h.sum_, &sum_bits, sizeof sum_bits);
  return h;
}

}  // namespace nanotick::core
