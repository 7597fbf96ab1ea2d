#include "trading/trader_part_configs.hpp"

#include "core/time_units.hpp"
#include "net/socket_address.hpp"

namespace nanotick::trading {

client::MdFeedConfig feed_config(const TraderConfig& c) {
  client::MdFeedConfig f;
  f.interface = net::parse_ipv4(c.market_data.interface);
  f.incremental = net::parse_multicast_group(c.market_data.incremental);
  f.snapshot = net::parse_multicast_group(c.market_data.snapshot);
  f.max_datagram_bytes = c.market_data.max_datagram_bytes;
  f.incremental_multicast = c.transport != ipc::Transport::kShm;  // shm: MdRingFeed reads it
  return f;
}

client::MdRingFeedConfig ring_config(const TraderConfig& c) {
  client::MdRingFeedConfig r;
  r.path = c.market_data.shm_path;
  // The order-entry session's connect and reconnect timing: one rule for
  // everything the trader connects to.
  r.connect_timeout_ms = c.session.connect_timeout_ms;
  r.reconnect_initial_ms = c.session.reconnect_initial_ms;
  r.reconnect_max_ms = c.session.reconnect_max_ms;
  return r;
}

client::MdConsumerConfig consumer_config(const TraderConfig& c) {
  client::MdConsumerConfig m;
  m.reorder_packets = c.market_data.reorder_packets;
  m.reorder_ns = core::ns_from_us(c.market_data.reorder_us);
  m.buffer_messages = c.market_data.buffer_messages;
  return m;
}

}  // namespace nanotick::trading
