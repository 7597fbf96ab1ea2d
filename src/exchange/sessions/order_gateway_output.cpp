// The gateway's output side: each session's framed answers handed to the
// kernel (whole messages only, within a cap: bytes_to_write), the written
// ones stamped (ack latency, ex_tcp_write), and a slow consumer's unwritten
// answers dropped. Same class and thread as order_gateway.cpp.
#include <algorithm>
#include <cerrno>

#include "exchange/sessions/order_gateway.hpp"
#include "exchange/sessions/order_gateway_send.hpp"

namespace nanotick::exchange {

int OrderGateway::flush_answers() noexcept {
  int progressed = 0;  // a session whose socket is full is no work: the thread may idle
  for (const auto& sp : sessions_) {
    const std::size_t before = sp->out.size();
    if (before == 0) continue;
    flush(*sp);
    progressed += sp->out.size() < before;
  }
  return progressed;
}

void OrderGateway::take_written_answers(Session& s, std::uint64_t tsc) noexcept {
  s.out.stamps().stamp_written(s.out.written(), tsc);
  s.out.stamps().take_stamped([this, tsc](const proto::WrittenStamps::Entry& e) {
    if (e.start_tsc != 0)
      ack_.written.record(static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(tsc - e.start_tsc))));
    if (e.aux != kUnstampedAnswer) NT_HOP_AT(ex_tcp_write, tsc, e.key, e.aux);
  });
}

// Drops the answers not yet written, finishing a partly written one first so
// the client still reads whole messages; the seqs of the dropped answers are
// given back, so a Logout queued next follows the last answer the client can
// read (PROTOCOL.md §1.5).
void OrderGateway::drop_unwritten_output(Session& s) noexcept {
  const std::uint32_t dropped = s.out.drop_unwritten();  // never written: no ack latency, no stamp
  s.seq.unsend(dropped);
  counters_.answers_dropped.add(dropped);
}

void OrderGateway::flush(Session& s) noexcept {
  if (s.state == SessionState::kFree) return;
  // Answers about to be handed to send(): their ack latency up to here.
  std::uint64_t ready_tsc = 0;
  s.out.stamps().take_handed([this, &ready_tsc](const proto::WrittenStamps::Entry& e) {
    if (e.start_tsc == 0) return;
    if (ready_tsc == 0) ready_tsc = clock_.now();
    ack_.ready.record(static_cast<std::uint64_t>(clock_.to_ns(static_cast<std::int64_t>(ready_tsc - e.start_tsc))));
  });
  s.output_held_back = false;
  while (!s.out.empty()) {
    const std::span<const std::uint8_t> bytes = s.out.pending();
    const std::size_t n = bytes_to_write(s, bytes);
    if (n == 0) {  // the kernel holds all we allow it: what waits stays whole messages here
      s.output_held_back = true;
      if (s.output_stalled_ns == 0) s.output_stalled_ns = clock_.now_ns();
      break;
    }
    const net::IoResult r = s.link.write_some(bytes.first(n));
    if (r.status == net::IoStatus::kWouldBlock) {
      if (s.output_stalled_ns == 0) s.output_stalled_ns = clock_.now_ns();
      break;
    }
    if (r.status != net::IoStatus::kOk) {
      if (r.error == EPROTO && s.link.is_shm()) counters_.shm_broken_rings.add();
      release(s);
      return;
    }
    s.out.wrote(r.bytes);
    s.kernel_room -= std::min<std::uint64_t>(s.kernel_room, r.bytes);
    s.output_stalled_ns = 0;
    counters_.bytes_out.add(r.bytes);
    if (n < bytes.size() && r.bytes == n) {  // the rest waits for the kernel to drain (no need to ask again now)
      s.output_held_back = true;
      break;
    }
  }
  if (s.out.stamps().has_written(s.out.written())) take_written_answers(s, clock_.now());
  if (s.state == SessionState::kClosing && s.out.empty() && !s.write_shut) {
    s.link.shutdown_write();  // then wait for the peer's EOF (read_session) or the deadline
    s.write_shut = true;
  }
  update_write_interest(s);
}

// How many of `bytes` (the front of `out`) to hand to the kernel now. The
// kernel may take part of a message when its buffer fills, and a client
// that never reads again would then see its stream end inside that message,
// with our Logout stuck behind it (PROTOCOL.md 1.5). So the kernel is given
// whole messages only, and never more than a quarter of its send buffer
// limit in all (half while closing): the rest of its buffer is the reserve
// from which the rest of a message partly written and the Logout are always
// taken whole. Asking the kernel costs two system calls; it is done only
// when the output would pass what we know it can take (kernel_room), which
// for a client that reads is once per quarter buffer written.
std::size_t OrderGateway::bytes_to_write(Session& s, std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() <= s.kernel_room) [[likely]]
    return bytes.size();
  const long queued = s.link.queued_output_bytes();
  const int limit = s.link.send_buffer_limit();
  if (queued < 0 || limit <= 0) return bytes.size();  // cannot tell: the kernel decides, as it would anyway
  const auto cap = static_cast<std::uint64_t>(limit) / (s.state == SessionState::kClosing ? 2 : 4);
  const auto held = static_cast<std::uint64_t>(queued);
  s.kernel_room = held < cap ? cap - held : 0;
  return s.out.whole_messages_within(s.kernel_room);  // a message partly written is always finished
}

void OrderGateway::update_write_interest(Session& s) noexcept {
  // Output we hold back ourselves waits for the kernel's queue to drain,
  // which no epoll event reports (the socket is writable all along: EPOLLOUT
  // would wake every pass); flush_answers() retries it each pass instead.
  // Shared memory has no writable event (its control socket is always
  // writable): flush_answers() retries its output each pass likewise.
  const bool want = !s.out.empty() && !s.output_held_back && !s.link.is_shm();
  if (want == s.write_interest || s.state == SessionState::kFree) return;
  if (!poller_.modify(s.link.fd(), want ? net::Interest::kReadWrite : net::Interest::kRead, s.index))
    s.write_interest = want;
}

}  // namespace nanotick::exchange
