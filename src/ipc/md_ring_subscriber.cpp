#include "ipc/md_ring_subscriber.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "ipc/fd_passing.hpp"
#include "ipc/unix_listener.hpp"

namespace nanotick::ipc {

MdRingSubscriber::MdRingSubscriber(std::string path)
    : path_(std::move(path)), address_(unix_socket_address(path_, "market_data.shm_path")) {}

int MdRingSubscriber::start_connect() noexcept {
  if (state_ != State::kClosed) return EISCONN;
  net::Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return errno;
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address_), sizeof address_);
  } while (rc != 0 && errno == EINTR);
  // A UNIX stream connect completes at once or fails (EAGAIN: the backlog is full).
  if (rc != 0) return errno;
  control_ = std::move(fd);
  refusal_ = MdRingRefusal::kNone;
  state_ = State::kConnecting;
  return 0;
}

MdRingSubscriber::Step MdRingSubscriber::poll_connect() noexcept {
  if (state_ == State::kConnected) return Step::kConnected;
  if (state_ != State::kConnecting) return Step::kRefused;
  MdRingHello hello{};
  Received r = receive_with_fd(control_.get(), {reinterpret_cast<std::uint8_t*>(&hello), sizeof hello});
  if (r.error == EAGAIN || r.error == EWOULDBLOCK || r.error == EINTR) return Step::kWaiting;
  if (r.error == EBADMSG) return refused(MdRingRefusal::kNoDescriptor);
  if (r.error != 0) return refused(MdRingRefusal::kReceiveError);
  if (r.bytes == 0) return refused(MdRingRefusal::kClosed);
  if (r.bytes != sizeof hello) return refused(MdRingRefusal::kShortHello);
  if (!r.fd) return refused(MdRingRefusal::kNoDescriptor);
  if (const MdRingRefusal e = check_md_ring_hello(hello); e != MdRingRefusal::kNone) return refused(e);
  try {
    segment_ = ShmSegment::map(std::move(r.fd), hello.segment_bytes, PeerAccess::kReadOnly);
  } catch (...) {  // not a sealed memfd of that size, or mmap refused
    return refused(MdRingRefusal::kBadSegment);
  }
  if (std::memcmp(segment_.data(), &hello, sizeof hello) != 0) return refused(MdRingRefusal::kHeaderMismatch);
  segment_.close_fd();  // the mapping is all we read through
  const auto* ring = reinterpret_cast<const MdRing*>(segment_.data() + kMdRingOffset);
  reader_.emplace(*ring, hello.slots, MdRing::StartAt::kNext);
  slots_ = hello.slots;
  state_ = State::kConnected;
  return Step::kConnected;
}

void MdRingSubscriber::refuse(MdRingRefusal reason) noexcept { (void)refused(reason); }

MdRingSubscriber::Step MdRingSubscriber::refused(MdRingRefusal reason) noexcept {
  close();
  refusal_ = reason;
  return Step::kRefused;
}

bool MdRingSubscriber::exchange_gone() noexcept {
  if (state_ != State::kConnected) return true;
  std::uint8_t scratch[64];
  // Bounded: an exchange that kept writing must not hold this thread here.
  for (int i = 0; i < 4; ++i) {
    const ssize_t n = ::recv(control_.get(), scratch, sizeof scratch, MSG_DONTWAIT);
    if (n > 0) continue;  // the exchange sends nothing after the hello: ignored
    if (n < 0 && errno == EINTR) continue;
    return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));  // EOF or reset: gone
  }
  return false;
}

void MdRingSubscriber::close() noexcept {
  reader_.reset();
  segment_.unmap();
  control_.reset();
  slots_ = 0;
  state_ = State::kClosed;
}

}  // namespace nanotick::ipc
