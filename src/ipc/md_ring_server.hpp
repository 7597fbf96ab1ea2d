// The exchange's end of the market data ring (docs/EXCHANGE.md "Market data
// in shared memory"): one read-only segment (md_ring_layout.hpp) that the
// incremental publisher writes every packet into, and a UNIX socket where
// readers on the host ask for it.
//
// Set-up (the constructor): the segment is an anonymous memfd, 0600, sealed
// against resizing and -- once the exchange has mapped it -- against every
// other writable mapping (ShmSegment, PeerAccess::kReadOnly); the exchange
// keeps only an O_RDONLY descriptor of it, which is what every reader gets.
// A reader therefore cannot write the ring at all: readers never touch each
// other or the exchange. The socket is a UnixListener (0600 before listen,
// a stale file replaced, removed by the destructor).
//
// Readers: poll_connections() -- the publisher calls it from its agent
// timer, about once a millisecond, never per packet -- looks at one epoll set
// (one system call when nothing happened). A pending connection gets the
// hello and the descriptor at once (non-blocking) and is kept open as the
// reader's *control socket*: the reader learns from its EOF that the
// exchange died, and the exchange from its EOF that the reader went. A
// reader sends nothing on it: one that does is disconnected
// (readers_misbehaved). At most kMaxReaders at once; a connection beyond
// that is closed at once, without a hello (connections_refused).
//
// publish() is the hot path: one slot of the ring, only the packet's bytes
// copied, no system call, never waits for a reader.
//
// Thread-safety: one thread (the incremental publisher's) calls everything;
// the counters may be read from any thread. Set-up throws (net::SocketError,
// std::system_error, std::invalid_argument) naming market_data.shm_path.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "core/compiler.hpp"
#include "core/counter.hpp"
#include "core/counters_file.hpp"
#include "ipc/md_ring_layout.hpp"
#include "ipc/shm_segment.hpp"
#include "ipc/unix_listener.hpp"
#include "net/epoll.hpp"
#include "net/fd.hpp"

namespace nanotick::ipc {

class MdRingServer {
 public:
  static constexpr std::size_t kMaxReaders = 64;

  // `slots`: a power of two, kMdRingMinSlots..kMdRingMaxSlots.
  MdRingServer(std::string path, std::uint64_t slots);
  MdRingServer(const MdRingServer&) = delete;
  MdRingServer& operator=(const MdRingServer&) = delete;

  // One packet into the next slot. A packet longer than a slot is dropped and
  // counted (the config refuses an mtu that does not fit: never expected).
  NT_ALWAYS_INLINE void publish(std::span<const std::uint8_t> packet) noexcept {
    if (packet.size() > kMdRingMaxPacketBytes) [[unlikely]] {
      oversize_.add();
      return;
    }
    staging_.length = static_cast<std::uint32_t>(packet.size());
    std::memcpy(staging_.bytes, packet.data(), packet.size());
    ring_->publish(staging_, offsetof(MdRingPacket, bytes) + packet.size());
    packets_.add();
  }

  // Accepts pending readers and notices the ones gone (one epoll_wait(0)
  // when nothing happened). Returns the readers added or dropped.
  int poll_connections() noexcept;

  // A reader in this process (its own cursor; one thread per reader), at
  // the next packet published: the exchange's UDP forwarder
  // (exchange/md_udp_forwarder.hpp) reads the ring like any reader.
  MdRing::Reader make_reader() const noexcept { return MdRing::Reader(*ring_, ring_->slot_count()); }

  const std::string& path() const noexcept { return listener_.path(); }
  std::uint64_t slots() const noexcept { return ring_->slot_count(); }
  std::uint64_t published() const noexcept { return ring_->published(); }
  std::size_t readers() const noexcept { return reader_count_; }

  std::uint64_t packets() const noexcept { return packets_.get(); }
  std::uint64_t connections_accepted() const noexcept { return accepted_.get(); }
  std::uint64_t connections_refused() const noexcept { return refused_.get(); }
  std::uint64_t readers_gone() const noexcept { return gone_.get(); }
  std::uint64_t readers_misbehaved() const noexcept { return misbehaved_.get(); }
  std::uint64_t accept_errors() const noexcept { return accept_errors_.get(); }
  int last_accept_error() const noexcept { return last_accept_error_; }
  // Start-up, before the publishing thread runs: "md.shm.packets", ...
  void place_counters(core::CountersFile& file);

 private:
  static constexpr std::uint64_t kListenerToken = kMaxReaders;
  static constexpr int kAcceptsPerPoll = 16;  // a connection storm waits for the next poll

  int accept_pending() noexcept;
  int check_reader(std::size_t index) noexcept;
  void drop_reader(std::size_t index) noexcept;

  ShmSegment segment_;
  MdRing* ring_ = nullptr;
  net::Fd read_only_;  // what every reader gets
  MdRingHello hello_{};
  UnixListener listener_;
  net::EpollPoller poller_;
  std::array<net::Fd, kMaxReaders> readers_;  // control sockets; epoll token = index
  std::size_t reader_count_ = 0;
  MdRingPacket staging_{};  // the packet with its length, as the ring copies it
  core::Counter packets_;
  core::Counter oversize_;
  core::Counter accepted_;
  core::Counter refused_;
  core::Counter gone_;
  core::Counter misbehaved_;
  core::Counter accept_errors_;
  core::Counter readers_gauge_;
  int last_accept_error_ = 0;
};

}  // namespace nanotick::ipc
