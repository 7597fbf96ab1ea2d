// The hop between the trader's market data receiver thread and its engine
// thread in the dedicated layout (docs/TRADER.md "Thread layouts"): received
// datagrams copied whole into the slots of an SPSC ring, each with its
// channel and the TSC of its receipt (the tick of tick-to-trade stays the
// socket read, not the ring hop).
//
// A slot holds up to kMaxDatagramBytes (an Ethernet MTU's UDP payload): the
// dedicated layout refuses a feed whose md mtu is larger (Trader checks it
// at start-up). When the ring is full the datagram is dropped and counted:
// the consumer then sees a gap and recovers, as for a datagram the network
// lost; the receiver never blocks on a slow engine.
//
// Thread-safety: DatagramRingSink is the producer side (one thread, the
// receiver's), pop_into() the consumer side (one thread, the engine's).
// Nothing allocates after construction.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "client/client_types.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "core/spsc_ring.hpp"
#include "proto/market_data.hpp"

namespace nanotick::client {

inline constexpr std::size_t kMaxDatagramBytes = 1472;

struct DatagramSlot {
  std::uint64_t rx_tsc;
  std::uint16_t length;
  proto::Channel channel;
  std::uint8_t bytes[kMaxDatagramBytes];
};

class DatagramRing {
 public:
  static constexpr std::size_t kSlots = 1024;

  DatagramRing() : ring_(std::make_unique<Ring>()) {}

  // Producer: copies one datagram in; false (counted) when full or too long.
  bool push(proto::Channel channel, std::span<const std::uint8_t> bytes, std::uint64_t rx_tsc) noexcept {
    if (bytes.size() > kMaxDatagramBytes) {
      too_long_.add();
      return false;
    }
    DatagramSlot* slot = ring_->try_claim();
    if (slot == nullptr) {
      full_drops_.add();
      return false;
    }
    slot->rx_tsc = rx_tsc;
    slot->length = static_cast<std::uint16_t>(bytes.size());
    slot->channel = channel;
    std::memcpy(slot->bytes, bytes.data(), bytes.size());
    ring_->commit();
    return true;
  }

  // Consumer: hands up to `max` datagrams to sink.on_datagram(channel, bytes,
  // now, rx_tsc), oldest first, each read in place. Returns how many.
  template <typename Sink>
  int pop_into(Sink& sink, TimeNs now, int max) noexcept {
    int n = 0;
    while (n < max) {
      const DatagramSlot* slot = ring_->front();
      if (slot == nullptr) break;
      sink.on_datagram(slot->channel, std::span<const std::uint8_t>(slot->bytes, slot->length), now, slot->rx_tsc);
      ring_->pop();
      ++n;
    }
    return n;
  }

  std::uint64_t full_drops() const noexcept { return full_drops_.get(); }
  std::uint64_t too_long() const noexcept { return too_long_.get(); }
  // Datagrams waiting (either thread; a recent value).
  std::size_t size() const noexcept { return ring_->size(); }
  // Start-up: the producer's counters into `file` (the caller starts the
  // receiver thread's group).
  void place_counters(core::CountersFile& file) {
    file.place(full_drops_, "md.ring_full_drops");
    file.place(too_long_, "md.ring_too_long");
  }

 private:
  using Ring = core::SpscRing<DatagramSlot, kSlots>;
  std::unique_ptr<Ring> ring_;
  core::Counter full_drops_;
  core::Counter too_long_;
};

// MdSockets' sink on the receiver thread: into the ring.
struct DatagramRingSink {
  DatagramRing& ring;
  void on_datagram(proto::Channel channel, std::span<const std::uint8_t> bytes, TimeNs, std::uint64_t rx_tsc) noexcept {
    (void)ring.push(channel, bytes, rx_tsc);
  }
};

}  // namespace nanotick::client
