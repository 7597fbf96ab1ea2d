// The memory of the exchange's market data ring (docs/EXCHANGE.md "Market
// data in shared memory"): one segment per exchange process, written by its
// incremental publisher only, mapped read-only by every reader on the host.
// It carries the incremental channel's packets exactly as they go out on
// UDP (PROTOCOL.md §2: same bytes, same sequence numbers, heartbeats
// included), one packet per slot of a core::BroadcastRing: a reader that
// falls behind is lapped and told how many packets it lost, and recovers
// like a UDP reader that lost them.
//
//   offset 0    MdRingHello: the header, written once by the exchange before
//               the first reader connects (the same bytes go with the
//               descriptor, so a reader checks the segment against them)
//   offset 64   core::BroadcastRing<MdRingPacket, dynamic>: its writer line,
//               then `slots` slots of sizeof(MdRingPacket) + 8 bytes rounded
//               up to cache lines
//
// A slot holds one packet of at most kMdRingMaxPacketBytes (an Ethernet
// MTU's UDP payload): the exchange refuses at config load an mtu that does
// not fit. Only the packet's own bytes are copied (BroadcastRing's sized
// publish and try_read_prefix; the length is in the record's first word).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/broadcast_ring.hpp"
#include "core/compiler.hpp"

namespace nanotick::ipc {

inline constexpr std::uint64_t kMdRingMagic = 0x31474e52444d544e;  // "NTMDRNG1" little-endian
inline constexpr std::uint32_t kMdRingVersion = 1;
inline constexpr std::size_t kMdRingMaxPacketBytes = 1472;
inline constexpr std::uint64_t kMdRingMinSlots = 16;
inline constexpr std::uint64_t kMdRingMaxSlots = 65536;
inline constexpr std::uint64_t kMdRingOffset = core::kCacheLine;

// One packet: its length in the first word (what try_read_prefix reads
// first), then its bytes.
struct MdRingPacket {
  std::uint32_t length;  // bytes of the packet; a reader checks it is <= kMdRingMaxPacketBytes
  std::uint32_t reserved;
  std::uint8_t bytes[kMdRingMaxPacketBytes];

  std::span<const std::uint8_t> packet() const noexcept { return {bytes, length}; }
  // The bytes a record of this first word occupies (try_read_prefix's
  // bytes_of): any value, the ring clamps it to the slot.
  static constexpr std::uint64_t record_bytes(std::uint64_t first_word) noexcept {
    return offsetof(MdRingPacket, bytes) + (first_word & 0xffff'ffffu);
  }
};
static_assert(offsetof(MdRingPacket, bytes) == 8 && sizeof(MdRingPacket) == 8 + kMdRingMaxPacketBytes);

using MdRing = core::BroadcastRing<MdRingPacket, std::dynamic_extent>;

struct MdRingHello {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t packet_bytes;  // kMdRingMaxPacketBytes: the slot's payload
  std::uint64_t slots;         // a power of two, kMdRingMinSlots..kMdRingMaxSlots
  std::uint64_t ring_offset;   // kMdRingOffset
  std::uint64_t segment_bytes;
};
static_assert(sizeof(MdRingHello) == 40 && sizeof(MdRingHello) <= kMdRingOffset);

constexpr bool valid_md_ring_slots(std::uint64_t slots) noexcept {
  return slots >= kMdRingMinSlots && slots <= kMdRingMaxSlots && std::has_single_bit(slots);
}
constexpr std::uint64_t md_ring_segment_bytes(std::uint64_t slots) noexcept {
  return kMdRingOffset + MdRing::bytes_for(slots);
}
constexpr MdRingHello make_md_ring_hello(std::uint64_t slots) noexcept {
  return MdRingHello{kMdRingMagic, kMdRingVersion, static_cast<std::uint32_t>(kMdRingMaxPacketBytes),
                     slots,        kMdRingOffset,  md_ring_segment_bytes(slots)};
}

// Why a reader gave up a connection before reading from it (the exchange's
// hello, the descriptor, the segment). Each has a counter on the reader's
// side (md.shm.refused.<reason>).
enum class MdRingRefusal : std::uint8_t {
  kNone = 0,
  kClosed,          // the exchange closed the connection without a hello (no room for another reader)
  kReceiveError,    // recvmsg failed
  kShortHello,      // fewer or more bytes than a hello
  kNoDescriptor,    // no descriptor with it, or more than one
  kBadMagic,        // not a market data ring (another service at that path?)
  kBadVersion,      // a ring of another version
  kBadGeometry,     // slot payload, slot count, ring offset or size inconsistent
  kBadSegment,      // not a memfd sealed against shrinking of the announced size, or mmap refused
  kHeaderMismatch,  // the segment's header differs from the hello
  kTimedOut,        // no hello within the connect timeout
};
inline constexpr std::size_t kMdRingRefusals = static_cast<std::size_t>(MdRingRefusal::kTimedOut) + 1;

constexpr MdRingRefusal check_md_ring_hello(const MdRingHello& h) noexcept {
  if (h.magic != kMdRingMagic) return MdRingRefusal::kBadMagic;
  if (h.version != kMdRingVersion) return MdRingRefusal::kBadVersion;
  if (h.packet_bytes != kMdRingMaxPacketBytes || !valid_md_ring_slots(h.slots) || h.ring_offset != kMdRingOffset ||
      h.segment_bytes != md_ring_segment_bytes(h.slots))
    return MdRingRefusal::kBadGeometry;
  return MdRingRefusal::kNone;
}

constexpr std::string_view to_string(MdRingRefusal r) noexcept {
  switch (r) {
    case MdRingRefusal::kNone: return "none";
    case MdRingRefusal::kClosed: return "closed";
    case MdRingRefusal::kReceiveError: return "receive_error";
    case MdRingRefusal::kShortHello: return "short_hello";
    case MdRingRefusal::kNoDescriptor: return "no_descriptor";
    case MdRingRefusal::kBadMagic: return "bad_magic";
    case MdRingRefusal::kBadVersion: return "bad_version";
    case MdRingRefusal::kBadGeometry: return "bad_geometry";
    case MdRingRefusal::kBadSegment: return "bad_segment";
    case MdRingRefusal::kHeaderMismatch: return "header_mismatch";
    case MdRingRefusal::kTimedOut: return "timed_out";
  }
  return "unknown";
}

}  // namespace nanotick::ipc
