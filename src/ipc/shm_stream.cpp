#include "ipc/shm_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/time_units.hpp"
#include "core/tsc_clock.hpp"
#include "ipc/fd_passing.hpp"
#include "ipc/unix_listener.hpp"
#include "net/socket_error.hpp"

namespace nanotick::ipc {

namespace {

constexpr std::uint64_t kPeerCheckPeriodNs = core::kNsPerMs;

std::uint64_t load_flag(const std::uint64_t* word) noexcept {
  return std::atomic_ref<const std::uint64_t>(*word).load(std::memory_order_acquire);
}

}  // namespace

ShmStream::ShmStream(ShmSegment segment, net::Fd control, ShmSide side) noexcept
    : segment_(std::move(segment)), control_(std::move(control)) {
  auto* layout = reinterpret_cast<ShmSessionLayout*>(segment_.data());
  const std::uint64_t ring = (segment_.size() - kShmDataOffset) / 2;
  std::uint8_t* to_exchange = segment_.data() + kShmDataOffset;
  std::uint8_t* to_client = to_exchange + ring;
  if (side == ShmSide::kExchange) {
    in_ = ShmByteRingReader(&layout->to_exchange, to_exchange, ring);
    out_ = ShmByteRingWriter(&layout->to_client, to_client, ring);
    own_closed_ = &layout->exchange_closed.value;
    peer_closed_ = &layout->client_closed.value;
    own_doorbell_ = &layout->exchange_doorbell.value;
    peer_doorbell_ = &layout->client_doorbell.value;
  } else {
    in_ = ShmByteRingReader(&layout->to_client, to_client, ring);
    out_ = ShmByteRingWriter(&layout->to_exchange, to_exchange, ring);
    own_closed_ = &layout->client_closed.value;
    peer_closed_ = &layout->exchange_closed.value;
    own_doorbell_ = &layout->client_doorbell.value;
    peer_doorbell_ = &layout->exchange_doorbell.value;
  }
  segment_.close_fd();  // the mapping is all we need; the peer has its own descriptor
}

net::IoResult ShmStream::read_some(std::span<std::uint8_t> buffer) noexcept {
  if (!valid()) return {0, net::IoStatus::kError, EBADF};
  if (buffer.empty()) return {0, net::IoStatus::kOk, 0};
  if (const std::size_t n = in_.read(buffer); n > 0) return {n, net::IoStatus::kOk, 0};
  if (broken()) return {0, net::IoStatus::kError, EPROTO};
  // Empty. The peer's closed word is published after its last bytes: seen
  // set, one more look at the ring decides between those bytes and the end.
  bool ended = load_flag(peer_closed_) != 0;
  if (!ended && !peer_gone_) {
    const std::uint64_t now = core::TscClock::global().now_ns();
    if (now >= next_peer_check_ns_) {
      next_peer_check_ns_ = now + kPeerCheckPeriodNs;
      check_peer();
    }
  }
  ended = ended || peer_gone_;
  if (!ended) return {0, net::IoStatus::kWouldBlock, 0};
  if (const std::size_t n = in_.read(buffer); n > 0) return {n, net::IoStatus::kOk, 0};
  if (broken()) return {0, net::IoStatus::kError, EPROTO};
  return {0, net::IoStatus::kClosed, 0};
}

net::IoResult ShmStream::write_some(std::span<const std::uint8_t> data) noexcept {
  if (!valid() || write_shut_) return {0, net::IoStatus::kError, EBADF};
  if (peer_gone_ || load_flag(peer_closed_) != 0) return {0, net::IoStatus::kClosed, EPIPE};
  if (data.empty()) return {0, net::IoStatus::kOk, 0};
  const std::size_t n = out_.write(data);
  if (n > 0) {
    ring_peer();
    return {n, net::IoStatus::kOk, 0};
  }
  if (broken()) return {0, net::IoStatus::kError, EPROTO};
  return {0, net::IoStatus::kWouldBlock, 0};
}

long ShmStream::queued_output_bytes() noexcept {
  const std::uint64_t q = out_.queued();
  return out_.broken() ? -1 : static_cast<long>(q);
}

void ShmStream::shutdown_write() noexcept {
  if (!valid() || write_shut_) return;
  write_shut_ = true;
  std::atomic_ref<std::uint64_t>(*own_closed_).store(1, std::memory_order_release);
  ring_peer();
}

void ShmStream::ring_peer() noexcept {
  std::atomic_ref<std::uint64_t> word(*peer_doorbell_);
  // A peer that polls (0) never sleeps on it: one load, no fence.
  if (word.load(std::memory_order_relaxed) == kDoorbellOff) return;
  // A read-modify-write, not a fence (ThreadSanitizer does not model
  // fences; GCC refuses them under -fsanitize=thread): the peer's "asleep"
  // is an exchange on the same word, so either our RMW comes after it in the
  // word's order and reads "asleep", or the peer's exchange reads from our
  // RMW and so sees our tail (or closed word) stored before it.
  std::uint64_t expected = kDoorbellAsleep;
  if (word.fetch_add(0, std::memory_order_acq_rel) != kDoorbellAsleep ||
      !word.compare_exchange_strong(expected, kDoorbellRung, std::memory_order_relaxed)) [[likely]]
    return;
  // One byte the peer's sleep (epoll on this socket) wakes on. Never blocks,
  // whatever the peer does with its end; a full buffer already holds a byte.
  const std::uint8_t bell = 0;
  ssize_t n;
  do {
    n = ::send(control_.get(), &bell, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n == 1) ++doorbells_rung_;
  else if (errno == EAGAIN || errno == EWOULDBLOCK) ++doorbells_full_;
  // Other errors: the peer's end closed; check_peer() will see it.
}

void ShmStream::enable_doorbell() noexcept {
  if (!valid() || doorbell_enabled_) return;
  doorbell_enabled_ = true;
  std::atomic_ref<std::uint64_t>(*own_doorbell_).store(kDoorbellAwake, std::memory_order_relaxed);
}

bool ShmStream::arm_doorbell() noexcept {
  if (!doorbell_enabled_ || !valid()) return false;
  armed_ = true;
  // An exchange, so that a writer's RMW on this word orders its tail store
  // against our look at it (see ring_peer()).
  (void)std::atomic_ref<std::uint64_t>(*own_doorbell_).exchange(kDoorbellAsleep, std::memory_order_acq_rel);
  return input_pending();
}

void ShmStream::disarm_doorbell() noexcept {
  if (!armed_) return;
  armed_ = false;
  // Anything but our own "asleep" means a writer rang (or the peer rewrote
  // the word): read the doorbell's byte, if any, off the control socket.
  if (std::atomic_ref<std::uint64_t>(*own_doorbell_).exchange(kDoorbellAwake, std::memory_order_acquire) !=
      kDoorbellAsleep)
    check_peer();
}

bool ShmStream::check_peer() noexcept {
  if (peer_gone_ || !control_) return peer_gone_ = true;
  std::uint8_t scratch[64];
  for (;;) {
    const ssize_t n = ::recv(control_.get(), scratch, sizeof scratch, MSG_DONTWAIT);
    if (n > 0) continue;  // nothing is sent on it after the hello: ignored
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    peer_gone_ = true;  // EOF, or reset: the peer's process closed it
    return true;
  }
}

void ShmStream::close() noexcept {
  if (valid()) shutdown_write();
  segment_.unmap();
  control_.reset();
  in_ = {};
  out_ = {};
  own_closed_ = nullptr;
  peer_closed_ = nullptr;
  own_doorbell_ = nullptr;
  peer_doorbell_ = nullptr;
  doorbell_enabled_ = false;
  armed_ = false;
  peer_gone_ = false;
  write_shut_ = false;
}

ShmStream shm_connect(const std::string& path, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) throw std::invalid_argument("shm_connect: timeout must be > 0");
  const sockaddr_un addr = unix_socket_address(path, "shm_connect: the path");
  net::Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw net::SocketError("shared-memory session " + path + ": socket", errno);
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int e = errno;
    throw net::SocketError(
        "shared-memory session " + path + ": connect (" +
            (e == ENOENT || e == ECONNREFUSED ? "is the exchange running with shm_path = \"" + path + "\"?"
                                              : std::string("see errno")) +
            ")",
        e);
  }
  pollfd p{fd.get(), POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0)
    throw net::SocketError("shared-memory session " + path + ": no segment from the exchange within " +
                               std::to_string(timeout.count()) + " ms (all its shared-memory slots busy?)",
                           ready == 0 ? ETIMEDOUT : errno);
  ShmHello hello{};
  Received r = receive_with_fd(fd.get(), {reinterpret_cast<std::uint8_t*>(&hello), sizeof hello});
  if (r.error != 0) throw net::SocketError("shared-memory session " + path + ": receiving the segment", r.error);
  if (r.bytes == 0)
    throw net::SocketError("shared-memory session " + path + ": the exchange closed the connection (no free slot?)",
                           ECONNREFUSED);
  if (r.bytes != sizeof hello || !r.fd || hello.magic != kShmSessionMagic || hello.version != kShmSessionVersion ||
      !valid_ring_bytes(hello.ring_bytes) || hello.segment_bytes != segment_bytes_for(hello.ring_bytes))
    throw std::invalid_argument("shared-memory session " + path + ": the exchange's hello is not a version-" +
                                std::to_string(kShmSessionVersion) + " session segment");
  ShmSegment segment = ShmSegment::map(std::move(r.fd), hello.segment_bytes);
  if (std::memcmp(segment.data(), &hello, sizeof hello) != 0)
    throw std::invalid_argument("shared-memory session " + path + ": the segment's header differs from the hello");
  if (::fcntl(fd.get(), F_SETFL, O_NONBLOCK) != 0)
    throw net::SocketError("shared-memory session " + path + ": O_NONBLOCK", errno);
  return ShmStream(std::move(segment), std::move(fd), ShmSide::kClient);
}

}  // namespace nanotick::ipc
