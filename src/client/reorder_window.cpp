#include "client/reorder_window.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace nanotick::client {

ReorderWindow::ReorderWindow(std::uint32_t capacity) {
  slots_.resize(capacity);
  // Value-initialised: the pages are touched now, not on the first loss.
  for (Slot& s : slots_) s.data = std::make_unique<std::uint8_t[]>(kMaxPacketBytes);
}

void ReorderWindow::hold(std::span<const std::uint8_t> packet, const proto::PacketHeader& header, TimeNs now,
                         std::uint64_t rx_tsc) noexcept {
  Slot& s = slots_[count_++];
  std::memcpy(s.data.get(), packet.data(), packet.size());
  s.meta = Held{header, rx_tsc, now};
}

std::uint32_t ReorderWindow::find(std::uint64_t first_seq) const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i)
    if (slots_[i].meta.header.first_seq == first_seq) return i;
  return kNone;
}

std::uint32_t ReorderWindow::find_at_or_before(std::uint64_t seq) const noexcept {
  for (std::uint32_t i = 0; i < count_; ++i)
    if (slots_[i].meta.header.first_seq <= seq) return i;
  return kNone;
}

std::uint64_t ReorderWindow::lowest_first_seq() const noexcept {
  std::uint64_t lowest = slots_[0].meta.header.first_seq;
  for (std::uint32_t i = 1; i < count_; ++i) lowest = std::min(lowest, slots_[i].meta.header.first_seq);
  return lowest;
}

TimeNs ReorderWindow::oldest_arrival() const noexcept {
  TimeNs oldest = slots_[0].meta.arrived;
  for (std::uint32_t i = 1; i < count_; ++i) oldest = std::min(oldest, slots_[i].meta.arrived);
  return oldest;
}

void ReorderWindow::release(std::uint32_t i) noexcept {
  --count_;
  if (i != count_) std::swap(slots_[i], slots_[count_]);
}

}  // namespace nanotick::client
