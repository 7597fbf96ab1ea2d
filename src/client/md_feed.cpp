#include "client/md_feed.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "proto/market_data.hpp"

namespace nanotick::client {

void MdFeedConfig::validate() const {
  // The groups and the interface are checked by the receivers themselves
  // (multicast range, unicast interface), with the address in the message.
  if (incremental_multicast && incremental.port != 0 && incremental == snapshot)
    throw std::invalid_argument("md feed: snapshot: must differ from incremental (" + incremental.to_string() +
                                "): each channel needs its own group or port");
  if (receive_buffer_bytes <= 0)
    throw std::invalid_argument("md feed: receive_buffer_bytes: must be > 0, got " +
                                std::to_string(receive_buffer_bytes));
  if (max_datagram_bytes < proto::kMinMtu || max_datagram_bytes > std::numeric_limits<std::uint16_t>::max())
    throw std::invalid_argument("md feed: max_datagram_bytes: must be in [" + std::to_string(proto::kMinMtu) +
                                ", 65535] (at least the feed's md.mtu), got " + std::to_string(max_datagram_bytes));
  if (poll_budget == 0)
    throw std::invalid_argument("md feed: poll_budget: must be > 0 (datagrams read per poll), got 0");
}

}  // namespace nanotick::client
