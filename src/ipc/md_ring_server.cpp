#include "ipc/md_ring_server.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>

#include "ipc/fd_passing.hpp"

namespace nanotick::ipc {

namespace {

std::uint64_t checked_slots(std::uint64_t slots) {
  if (!valid_md_ring_slots(slots))
    throw std::invalid_argument("market_data.shm_ring_packets: must be a power of two from " +
                                std::to_string(kMdRingMinSlots) + " to " + std::to_string(kMdRingMaxSlots) + ", got " +
                                std::to_string(slots));
  return slots;
}

}  // namespace

MdRingServer::MdRingServer(std::string path, std::uint64_t slots)
    : segment_(
          ShmSegment::create("nanotick-md-ring", md_ring_segment_bytes(checked_slots(slots)), PeerAccess::kReadOnly)),
      hello_(make_md_ring_hello(slots)),
      listener_(std::move(path), 64, "market_data.shm_path"),
      poller_(kMaxReaders + 1) {
  // The header, then the ring (every slot written once: the pages are
  // faulted in now, not by the first lap of publishes).
  std::memcpy(segment_.data(), &hello_, sizeof hello_);
  ring_ = &MdRing::create_in(segment_.data() + kMdRingOffset, slots);
  read_only_ = segment_.read_only_fd();
  segment_.close_fd();  // our mapping is all we write through; no writable descriptor stays open
  if (const std::error_code e = poller_.add(listener_.fd(), net::Interest::kRead, kListenerToken))
    throw std::system_error(e, "market_data.shm_path " + listener_.path() + ": epoll");
}

int MdRingServer::poll_connections() noexcept {
  int changes = 0;
  for (const net::ReadyEvent& e : poller_.wait(0)) {
    changes += e.token == kListenerToken ? accept_pending() : check_reader(static_cast<std::size_t>(e.token));
  }
  return changes;
}

int MdRingServer::accept_pending() noexcept {
  int added = 0;
  for (int i = 0; i < kAcceptsPerPoll; ++i) {
    net::Fd conn = listener_.accept();
    if (!conn) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        accept_errors_.add();
        last_accept_error_ = errno;
      }
      return added;
    }
    std::size_t slot = 0;
    while (slot < kMaxReaders && readers_[slot]) ++slot;
    if (slot == kMaxReaders) {
      refused_.add();  // closed without a hello: the reader sees EOF and backs off
      continue;
    }
    const int e =
        send_with_fd(conn.get(), {reinterpret_cast<const std::uint8_t*>(&hello_), sizeof hello_}, read_only_.get());
    if (e != 0) {
      accept_errors_.add();
      last_accept_error_ = e;
      continue;
    }
    if (const std::error_code pe = poller_.add(conn.get(), net::Interest::kRead, slot)) {
      accept_errors_.add();
      last_accept_error_ = pe.value();
      continue;
    }
    readers_[slot] = std::move(conn);
    ++reader_count_;
    readers_gauge_.set(reader_count_);
    accepted_.add();
    ++added;
  }
  return added;
}

int MdRingServer::check_reader(std::size_t index) noexcept {
  if (index >= kMaxReaders || !readers_[index]) return 0;
  std::uint8_t scratch[64];
  for (;;) {
    const ssize_t n = ::recv(readers_[index].get(), scratch, sizeof scratch, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n > 0) {
      misbehaved_.add();  // a reader has nothing to say on its control socket
    } else {
      gone_.add();  // EOF or reset: its process closed it (or died)
    }
    drop_reader(index);
    return 1;
  }
}

void MdRingServer::drop_reader(std::size_t index) noexcept {
  (void)poller_.remove(readers_[index].get());
  readers_[index].reset();
  --reader_count_;
  readers_gauge_.set(reader_count_);
}

void MdRingServer::place_counters(core::CountersFile& file) {
  file.place(packets_, "md.shm.packets");
  file.place(oversize_, "md.shm.oversize_drops");
  file.place(accepted_, "md.shm.connections_accepted");
  file.place(refused_, "md.shm.connections_refused");
  file.place(gone_, "md.shm.readers_gone");
  file.place(misbehaved_, "md.shm.readers_misbehaved");
  file.place(accept_errors_, "md.shm.accept_errors");
  file.place(readers_gauge_, "md.shm.readers", core::CounterKind::kGauge);
}

}  // namespace nanotick::ipc
