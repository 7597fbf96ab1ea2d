#include "client/md_ring_feed.hpp"

#include <stdexcept>
#include <string>

#include "venue/venue_config.hpp"

namespace nanotick::client {

// The trader's slot is exactly the ring's: a config the venue accepted fits.
static_assert(venue::kMaxShmMdPacketBytes == ipc::kMdRingMaxPacketBytes);

void MdRingFeedConfig::validate() const {
  if (path.empty() || path.size() > 107)
    throw std::invalid_argument("md ring: path: must be the exchange's market_data.shm_path (1..107 bytes), got '" +
                                path + "'");
  if (connect_timeout_ms == 0) throw std::invalid_argument("md ring: connect_timeout_ms: must be > 0, got 0");
  if (reconnect_initial_ms == 0 || reconnect_max_ms < reconnect_initial_ms)
    throw std::invalid_argument("md ring: reconnect_initial_ms / reconnect_max_ms: must be 0 < initial <= max, got " +
                                std::to_string(reconnect_initial_ms) + " / " + std::to_string(reconnect_max_ms));
  if (poll_budget == 0) throw std::invalid_argument("md ring: poll_budget: must be > 0 (packets read per poll), got 0");
}

void MdRingFeed::check_exchange(TimeNs now) noexcept {
  if (now < next_look_ns_) return;
  next_look_ns_ = now + kPeerCheckNs;
  if (!subscriber_.exchange_gone()) return;
  counters_.exchange_gone.add();
  counters_.connected.set(0);
  subscriber_.close();
  retry_later(now);
}

int MdRingFeed::connect_step(TimeNs now) noexcept {
  using State = ipc::MdRingSubscriber::State;
  if (subscriber_.state() == State::kClosed) {
    if (now < next_attempt_ns_) return 0;
    counters_.connect_attempts.add();
    if (const int e = subscriber_.start_connect(); e != 0) {
      counters_.connect_failures.add();
      last_errno_ = e;
      retry_later(now);
      return 0;
    }
    deadline_ns_ = now + core::ns_from_ms(config_.connect_timeout_ms);
    next_look_ns_ = now;  // the exchange may have answered already
  }
  if (now < next_look_ns_) return 0;
  next_look_ns_ = now + kHelloPollNs;
  switch (subscriber_.poll_connect()) {
    case ipc::MdRingSubscriber::Step::kWaiting:
      if (now >= deadline_ns_) {
        subscriber_.refuse(ipc::MdRingRefusal::kTimedOut);
        counters_.refused[static_cast<std::size_t>(ipc::MdRingRefusal::kTimedOut)].add();
        retry_later(now);
      }
      return 0;
    case ipc::MdRingSubscriber::Step::kRefused:
      counters_.refused[static_cast<std::size_t>(subscriber_.refusal())].add();
      retry_later(now);
      return 0;
    case ipc::MdRingSubscriber::Step::kConnected:
      counters_.connects.add();
      counters_.connected.set(1);
      backoff_.reset();
      next_look_ns_ = now + kPeerCheckNs;
      return 1;
  }
  return 0;
}

void MdRingFeed::retry_later(TimeNs now) noexcept {
  next_attempt_ns_ = now + core::ns_from_ms(backoff_.next_delay_ms());
}

void MdRingFeed::place_counters(core::CountersFile& file) {
  MdRingFeedCounters& c = counters_;
  file.place(c.connect_attempts, "md.shm.connect_attempts");
  file.place(c.connect_failures, "md.shm.connect_failures");
  for (std::size_t r = 1; r < c.refused.size(); ++r)
    file.place(c.refused[r], "md.shm.refused." + std::string(ipc::to_string(static_cast<ipc::MdRingRefusal>(r))));
  file.place(c.connects, "md.shm.connects");
  file.place(c.exchange_gone, "md.shm.exchange_gone");
  file.place(c.packets, "md.shm.packets");
  file.place(c.laps, "md.shm.laps");
  file.place(c.lost_packets, "md.shm.lost_packets");
  file.place(c.bad_records, "md.shm.bad_records");
  file.place(c.connected, "md.shm.connected", core::CounterKind::kGauge);
}

}  // namespace nanotick::client
