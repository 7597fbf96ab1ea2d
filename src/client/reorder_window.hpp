// The market data consumer's reorder window (docs/TRADER.md "Market data
// sequence logic"): incremental packets that arrived ahead of a hole in the
// global seq, held until the hole fills or the window gives it up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "client/client_types.hpp"
#include "proto/md_packet.hpp"

namespace nanotick::client {

// Incremental packets held ahead of a hole in the global seq, each copied
// into its own fixed slot (any packet parse_packet accepts fits). Capacity
// fixed at construction; hold/release never allocate. Not thread-safe.
class ReorderWindow {
 public:
  static constexpr std::size_t kMaxPacketBytes = std::numeric_limits<std::uint16_t>::max();
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  struct Held {
    proto::PacketHeader header{};
    std::uint64_t rx_tsc = 0;
    TimeNs arrived = 0;
  };

  explicit ReorderWindow(std::uint32_t capacity);

  bool empty() const noexcept { return count_ == 0; }
  bool full() const noexcept { return count_ == slots_.size(); }
  std::uint32_t size() const noexcept { return count_; }

  // Copies a validated packet in. Precondition: !full().
  void hold(std::span<const std::uint8_t> packet, const proto::PacketHeader& header, TimeNs now,
            std::uint64_t rx_tsc) noexcept;
  // The held packet with this first_seq, or kNone.
  std::uint32_t find(std::uint64_t first_seq) const noexcept;
  // A held packet whose first_seq is <= seq (it can be applied now), or kNone.
  std::uint32_t find_at_or_before(std::uint64_t seq) const noexcept;
  // Preconditions: !empty().
  std::uint64_t lowest_first_seq() const noexcept;
  TimeNs oldest_arrival() const noexcept;

  const Held& held(std::uint32_t i) const noexcept { return slots_[i].meta; }
  std::span<const std::uint8_t> bytes(std::uint32_t i) const noexcept {
    return {slots_[i].data.get(), slots_[i].meta.header.length};
  }
  void release(std::uint32_t i) noexcept;

 private:
  struct Slot {
    Held meta;
    std::unique_ptr<std::uint8_t[]> data;
  };
  std::vector<Slot> slots_;  // [0, count_) hold packets; release swaps the last one in
  std::uint32_t count_ = 0;
};

}  // namespace nanotick::client
