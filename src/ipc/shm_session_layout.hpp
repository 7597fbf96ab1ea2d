// The memory of one shared-memory order-entry session (docs/EXCHANGE.md
// "Shared-memory sessions"): what the exchange creates for each accepted
// connection and the client maps. Two byte streams (client -> exchange,
// exchange -> client) and one "closed" word per side; the hello the exchange
// sends with the segment's descriptor repeats the header, so the client can
// check the segment against it before trusting any of it.
//
//   offset 0     header (ShmHello), written by the exchange before it sends
//                the descriptor, never read back by the exchange
//   offset 64    to_exchange words: tail (client), head (exchange)
//   offset 192   to_client words:   tail (exchange), head (client)
//   offset 320   client_closed   (client: 1 = it wrote its last byte)
//   offset 384   exchange_closed (exchange: likewise)
//   offset 448   client_doorbell   (client's reader state, see below)
//   offset 512   exchange_doorbell (exchange's reader state)
//   offset 4096  to_exchange data, ring_bytes
//   then         to_client data, ring_bytes
//
// Doorbells (shm_stream.hpp): each side's reader state word says whether it
// may sleep in the kernel waiting for input -- 0 never (it polls: the writer
// skips the doorbell entirely), 1 awake, 2 asleep (ring me), 3 rung. The
// writer, after publishing, rings a sleeping reader by moving 2 -> 3 and
// sending one byte over the control socket (MSG_DONTWAIT). The words sit in
// bytes version 1 left zero: a peer that does not know them reads as "never
// sleeps" and never sets ours, so both versions of either end interwork.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/compiler.hpp"
#include "ipc/shm_byte_ring.hpp"

namespace nanotick::ipc {

inline constexpr std::uint64_t kShmSessionMagic = 0x314e4f4953534e54;  // "NTSSION1" little-endian
inline constexpr std::uint32_t kShmSessionVersion = 1;
inline constexpr std::uint64_t kShmMinRingBytes = 4096;
inline constexpr std::uint64_t kShmMaxRingBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kShmDataOffset = 4096;

// A reader's doorbell word (client_doorbell / exchange_doorbell).
inline constexpr std::uint64_t kDoorbellOff = 0;     // the reader polls: never ring
inline constexpr std::uint64_t kDoorbellAwake = 1;   // the reader may sleep, is awake now
inline constexpr std::uint64_t kDoorbellAsleep = 2;  // the reader is (about to be) asleep: ring it
inline constexpr std::uint64_t kDoorbellRung = 3;    // a writer rang it (one byte on the control socket)

struct ShmHello {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t reserved;
  std::uint64_t ring_bytes;     // each direction
  std::uint64_t segment_bytes;  // the whole segment
};

struct alignas(core::kCacheLine) ShmFlagWord {
  std::uint64_t value;
  char pad[core::kCacheLine - sizeof(std::uint64_t)];
};

struct ShmSessionLayout {
  alignas(core::kCacheLine) ShmHello header;
  ShmByteRingWords to_exchange;
  ShmByteRingWords to_client;
  ShmFlagWord client_closed;
  ShmFlagWord exchange_closed;
  ShmFlagWord client_doorbell;
  ShmFlagWord exchange_doorbell;
};
static_assert(sizeof(ShmSessionLayout) <= kShmDataOffset);
static_assert(offsetof(ShmSessionLayout, to_exchange) == 64 && offsetof(ShmSessionLayout, exchange_closed) == 384 &&
              offsetof(ShmSessionLayout, exchange_doorbell) == 512);

constexpr bool valid_ring_bytes(std::uint64_t bytes) noexcept {
  return bytes >= kShmMinRingBytes && bytes <= kShmMaxRingBytes && std::has_single_bit(bytes);
}
constexpr std::uint64_t segment_bytes_for(std::uint64_t ring_bytes) noexcept { return kShmDataOffset + 2 * ring_bytes; }

}  // namespace nanotick::ipc
