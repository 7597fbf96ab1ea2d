#include "ipc/shm_listener.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "ipc/fd_passing.hpp"

namespace nanotick::ipc {

ShmListener::ShmListener(std::string path, std::uint64_t ring_bytes, int backlog)
    : ring_bytes_(checked_ring_bytes(ring_bytes)), listener_(std::move(path), backlog, "shm_path") {}

std::uint64_t ShmListener::checked_ring_bytes(std::uint64_t ring_bytes) {
  if (!valid_ring_bytes(ring_bytes))
    throw std::invalid_argument("shm ring_bytes " + std::to_string(ring_bytes) +
                                ": must be a power of two from 4096 to 67108864");
  return ring_bytes;
}

std::optional<ShmStream> ShmListener::accept() noexcept {
  net::Fd conn = listener_.accept();
  if (!conn) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      ++accept_errors_;
      last_accept_error_ = errno;
    }
    return std::nullopt;
  }
  try {
    const std::uint64_t bytes = segment_bytes_for(ring_bytes_);
    ShmSegment segment = ShmSegment::create("nanotick-session-" + std::to_string(++serial_), bytes);
    ShmHello hello{kShmSessionMagic, kShmSessionVersion, 0, ring_bytes_, bytes};
    std::memcpy(segment.data(), &hello, sizeof hello);
    if (const int e =
            send_with_fd(conn.get(), {reinterpret_cast<const std::uint8_t*>(&hello), sizeof hello}, segment.fd());
        e != 0) {
      ++accept_errors_;
      last_accept_error_ = e;
      return std::nullopt;
    }
    return ShmStream(std::move(segment), std::move(conn), ShmSide::kExchange);
  } catch (const std::system_error& e) {
    ++accept_errors_;
    last_accept_error_ = e.code().value();
  } catch (...) {
    ++accept_errors_;
    last_accept_error_ = ENOMEM;
  }
  return std::nullopt;
}

bool ShmListener::refuse() noexcept { return listener_.accept(false).valid(); }

}  // namespace nanotick::ipc
