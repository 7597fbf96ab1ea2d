#include "exchange/marketdata/md_udp_forwarder.hpp"

#include "exchange/marketdata/md_channel.hpp"

namespace nanotick::exchange {

MdUdpForwarder::MdUdpForwarder(const MarketDataConfig& config, const ipc::MdRingServer* ring) {
  if (ring == nullptr) return;
  sender_.emplace(md_sender_config(proto::Channel::kIncremental, config));
  reader_.emplace(ring->make_reader());
}

int MdUdpForwarder::do_work() noexcept {
  if (!reader_) return 0;
  int sent = 0;
  while (sent < kPacketsPerWork) {
    const auto r = reader_->try_read_prefix(record_, ipc::MdRingPacket::record_bytes);
    if (r.status == ipc::MdRing::ReadStatus::kEmpty) break;
    if (r.status == ipc::MdRing::ReadStatus::kLapped) {
      lost_.add(r.lost);  // never sent: the receivers see the gap and recover from snapshots
      continue;
    }
    // Our own process wrote it; the length is still checked before it sizes a send.
    if (record_.length > ipc::kMdRingMaxPacketBytes) [[unlikely]] {
      lost_.add();
      continue;
    }
    ++sent;
    if (!sender_->send(record_.packet())) [[unlikely]] {
      send_drops_.add();
      continue;
    }
    packets_.add();
    bytes_.add(record_.length);
  }
  return sent;
}

void MdUdpForwarder::place_counters(core::CountersFile& file) {
  file.begin_group();
  file.place(packets_, "md.udp_forward.packets");
  file.place(bytes_, "md.udp_forward.bytes");
  file.place(send_drops_, "md.udp_forward.send_drops");
  file.place(lost_, "md.udp_forward.lost_packets");
}

}  // namespace nanotick::exchange
