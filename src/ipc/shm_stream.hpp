// One shared-memory order-entry connection, used like net::TcpStream
// (read_some / write_some with the same IoResult outcomes) so the session
// code on both ends does not care which transport carries its bytes
// (docs/EXCHANGE.md "Shared-memory sessions").
//
// The bytes go through the session's segment (shm_session_layout.hpp): no
// system call per message either way. Beside it each side keeps the UNIX
// socket the segment's descriptor came over, the *control socket*: the
// kernel closes it when its process dies however it dies, so the peer learns
// of a kill -9 from it (EPOLLHUP / EOF). The exchange polls it with epoll;
// read_some() itself looks at it at most once per millisecond while the
// input is empty (one non-blocking recv), so a client that busy-polls learns
// of a dead exchange within a millisecond of polling.
//
// The end of a stream, in order: the writer publishes its last bytes, then
// sets its closed word (shutdown_write()); the reader returns every byte
// published before it sees the word, then kClosed. A peer that dies leaves
// no word: its control socket's EOF stands in for it.
//
// Doorbells (for a reader that sleeps in the kernel: the "block" idle
// strategy, docs/TUNING.md): enable_doorbell() says we may sleep; before a
// sleep arm_doorbell() marks our word asleep and looks at the input once more
// (true: something came, do not sleep); after it, disarm_doorbell(). The
// peer's write_some() (and shutdown_write()), after publishing, finds our
// word asleep, moves it to rung and sends one byte on the control socket,
// which our sleep watches (epoll): one wake-up. Ordering: each side stores
// its word (tail / asleep), then a seq_cst fence, then loads the other's, so
// at least one of them sees the other's store -- either the writer rings or
// the reader sees the input and does not sleep. While we are awake a writer
// pays a load and a fence, no system call; a peer whose word is 0 (it polls)
// costs one load. The word is the peer's to lie about: a peer that holds its
// own word asleep gets a byte per write (a send that never blocks:
// MSG_DONTWAIT; a full socket buffer is EAGAIN, and already rings), one that
// rewrites ours costs us a recv per wake-up, and one that never rings costs
// us our sleep's timeout, which every sleep keeps.
//
// A peer that publishes impossible ring positions breaks the stream: every
// later call is kError with EPROTO (the session ends; nothing past the
// buffers is touched). Not thread-safe: one thread owns the stream.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "ipc/shm_byte_ring.hpp"
#include "ipc/shm_segment.hpp"
#include "ipc/shm_session_layout.hpp"
#include "net/fd.hpp"
#include "net/tcp.hpp"

namespace nanotick::ipc {

enum class ShmSide : std::uint8_t { kExchange, kClient };

class ShmStream {
 public:
  ShmStream() noexcept = default;  // not connected: valid() is false
  // Takes the mapped session segment and the control socket (non-blocking).
  ShmStream(ShmSegment segment, net::Fd control, ShmSide side) noexcept;
  ShmStream(ShmStream&&) noexcept = default;
  ShmStream& operator=(ShmStream&&) noexcept = default;

  bool valid() const noexcept { return segment_.valid(); }
  // The control socket: readable or hung up when the peer's process ended.
  int fd() const noexcept { return control_.get(); }

  [[nodiscard]] net::IoResult read_some(std::span<std::uint8_t> buffer) noexcept;
  [[nodiscard]] net::IoResult write_some(std::span<const std::uint8_t> data) noexcept;
  // Bytes written and not yet read by the peer, and the most the ring holds
  // (the counterparts of TcpStream's kernel figures); -1 when broken.
  [[nodiscard]] long queued_output_bytes() noexcept;
  [[nodiscard]] int send_buffer_limit() const noexcept { return static_cast<int>(out_.capacity()); }
  // No more output: the peer reads what was written, then the end.
  void shutdown_write() noexcept;
  void discard_input() noexcept { in_.discard(); }
  // Something for read_some() to report: input published and not read yet,
  // the peer's closed word, or a broken ring (one or two shared loads).
  bool input_pending() noexcept {
    return valid() && (in_.available() != 0 || in_.broken() ||
                       std::atomic_ref<const std::uint64_t>(*peer_closed_).load(std::memory_order_acquire) != 0);
  }
  // Looks at the control socket now (one non-blocking recv): true once the
  // peer's process closed it. Bytes it carries are read and ignored.
  bool check_peer() noexcept;
  bool peer_gone() const noexcept { return peer_gone_; }
  // Publishes our closed word, unmaps the segment and closes the control socket.
  void close() noexcept;
  // Doorbells (above). enable_doorbell(): from now on we may sleep (once, before the first arm).
  void enable_doorbell() noexcept;
  // About to sleep: marks our word asleep; true when input, the peer's end or
  // a broken ring is pending already (do not sleep; disarm when done).
  [[nodiscard]] bool arm_doorbell() noexcept;
  // Awake again: marks our word awake; a rung doorbell's byte is read off the
  // control socket (else it would keep the sleep's epoll readable).
  void disarm_doorbell() noexcept;
  bool doorbell_armed() const noexcept { return armed_; }
  // Doorbells we rang (bytes sent to a sleeping peer), and those that found
  // the peer's control socket full (EAGAIN: a byte is there already).
  std::uint64_t doorbells_rung() const noexcept { return doorbells_rung_; }
  std::uint64_t doorbells_full() const noexcept { return doorbells_full_; }

  // A ring position the peer published was impossible (for the counters).
  bool broken() const noexcept { return in_.broken() || out_.broken(); }

 private:
  ShmSegment segment_;
  net::Fd control_;
  ShmByteRingReader in_;
  ShmByteRingWriter out_;
  std::uint64_t* own_closed_ = nullptr;
  const std::uint64_t* peer_closed_ = nullptr;
  bool peer_gone_ = false;
  bool write_shut_ = false;
  std::uint64_t next_peer_check_ns_ = 0;
  std::uint64_t* own_doorbell_ = nullptr;   // our reader state: written by us (the peer may too)
  std::uint64_t* peer_doorbell_ = nullptr;  // the peer's reader state: we move it asleep -> rung
  bool doorbell_enabled_ = false;
  bool armed_ = false;
  std::uint64_t doorbells_rung_ = 0;
  std::uint64_t doorbells_full_ = 0;

  void ring_peer() noexcept;  // after publishing: rings the peer if its word says asleep
};

// Connects to the exchange's shared-memory listener at `path` and maps the
// session segment it sends, waiting at most `timeout` for both. Throws
// net::SocketError (path, errno text, hint: refused, no such file, timed
// out) or std::invalid_argument (what the exchange sent is not a session
// segment of this version).
ShmStream shm_connect(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace nanotick::ipc
