// One reader's connection to an exchange's market data ring (docs/EXCHANGE.md
// "Market data in shared memory"; the exchange's end is md_ring_server.hpp).
// Every step is non-blocking and the caller decides when to take it (the
// trader's MdRingFeed: its engine thread must never wait on the exchange):
//
//   kClosed --start_connect()--> kConnecting --poll_connect()--> kConnected
//      ^                              | refused, timed out (caller)   | exchange_gone(), close()
//      +------------------------------+-------------------------------+
//
// Connecting checks everything the exchange sent before trusting any of it:
// the hello (magic, version, geometry: check_md_ring_hello), exactly one
// descriptor, a memfd sealed against shrinking of exactly the announced size
// (ShmSegment::map: a segment the exchange could shrink would SIGBUS us), and
// the segment's own header equal to the hello. It is mapped read-only. A
// refusal is named (MdRingRefusal) and the connection closed.
//
// Reading: read() copies the next packet out of its slot into this object
// (only the packet's bytes: BroadcastRing::try_read_prefix) and checks its
// length against the slot; a reader starts at the next packet published
// after it connected, as a multicast receiver starts at the next datagram.
// Lapped (the exchange overwrote packets this reader had not read): kLapped,
// with how many were lost; the next read() goes on from the oldest packet
// still in the ring. The ring's contents are only ever read, and every index
// is reduced by the capacity this reader checked, so a wrong word in the
// ring (a broken or hostile writer) can cost packets, never memory safety.
//
// The exchange's death: the control socket the descriptor came over stays
// open; the kernel closes its other end when the exchange's process ends,
// however it ends. exchange_gone() looks (one non-blocking recv); the caller
// asks once its reads come back empty, so it has read every packet the dead
// exchange published first.
//
// Not thread-safe: one thread owns the subscriber. Only the constructor
// throws (std::invalid_argument: a path that cannot be a UNIX socket).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <sys/un.h>

#include "ipc/md_ring_layout.hpp"
#include "ipc/shm_segment.hpp"
#include "net/fd.hpp"

namespace nanotick::ipc {

class MdRingSubscriber {
 public:
  enum class State : std::uint8_t { kClosed, kConnecting, kConnected };
  enum class Step : std::uint8_t {
    kWaiting,    // no hello yet
    kConnected,  // mapped: read() from now on
    kRefused,    // closed; refusal() says why
  };
  enum class Read : std::uint8_t {
    kPacket,     // packet() holds the next packet
    kEmpty,      // nothing new
    kLapped,     // lost() packets were overwritten before they were read
    kBadRecord,  // a slot with a length beyond the slot (skipped)
  };

  explicit MdRingSubscriber(std::string path);
  ~MdRingSubscriber() { close(); }
  MdRingSubscriber(const MdRingSubscriber&) = delete;
  MdRingSubscriber& operator=(const MdRingSubscriber&) = delete;

  State state() const noexcept { return state_; }
  const std::string& path() const noexcept { return path_; }

  // kClosed -> kConnecting: a non-blocking connect. Returns 0, or the errno
  // (ENOENT, ECONNREFUSED: no exchange listens there; EAGAIN: its backlog
  // is full) and stays kClosed.
  int start_connect() noexcept;
  // kConnecting: one look for the exchange's hello and descriptor.
  Step poll_connect() noexcept;
  // The reason of the last kRefused (or of refuse()).
  MdRingRefusal refusal() const noexcept { return refusal_; }
  // kConnecting -> kClosed with `reason` (the caller's timeout).
  void refuse(MdRingRefusal reason) noexcept;

  // kConnected: the next packet.
  [[nodiscard]] Read read() noexcept {
    const auto r = reader_->try_read_prefix(record_, MdRingPacket::record_bytes);
    if (r.status == MdRing::ReadStatus::kOk) [[likely]] {
      return record_.length <= kMdRingMaxPacketBytes ? Read::kPacket : Read::kBadRecord;
    }
    if (r.status == MdRing::ReadStatus::kEmpty) return Read::kEmpty;
    lost_ = r.lost;
    return Read::kLapped;
  }
  // After kPacket: the packet's bytes, valid until the next read().
  std::span<const std::uint8_t> packet() const noexcept { return record_.packet(); }
  // After kLapped: how many packets were lost.
  std::uint64_t lost() const noexcept { return lost_; }
  // kConnected: the ring's slots (what the hello said).
  std::uint64_t slots() const noexcept { return slots_; }

  // kConnected: one non-blocking look at the control socket. True once the
  // exchange's end is closed (its process ended); bytes on it are ignored.
  bool exchange_gone() noexcept;
  // Back to kClosed: unmaps the segment, closes the control socket.
  void close() noexcept;

 private:
  Step refused(MdRingRefusal reason) noexcept;

  std::string path_;
  sockaddr_un address_;
  State state_ = State::kClosed;
  net::Fd control_;
  ShmSegment segment_;
  std::optional<MdRing::Reader> reader_;
  std::uint64_t slots_ = 0;
  std::uint64_t lost_ = 0;
  MdRingRefusal refusal_ = MdRingRefusal::kNone;
  MdRingPacket record_{};  // the last packet read, copied out of its slot
};

}  // namespace nanotick::ipc
