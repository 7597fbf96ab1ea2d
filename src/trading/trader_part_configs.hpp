// What each client part of the trader (src/client: the market data sockets,
// the shared-memory ring feed, the consumer) is configured with, from the
// trader's config: the one place the trader's keys meet the parts' own
// configs (trader.hpp wires the parts). Start-up code only.
#pragma once

#include "client/md_consumer_types.hpp"
#include "client/md_feed.hpp"
#include "client/md_ring_feed.hpp"
#include "trading/trader_config.hpp"

namespace nanotick::trading {

// Both channels' groups and the largest datagram; the incremental group only
// with the TCP transport (with "shm" the ring feed reads that channel).
client::MdFeedConfig feed_config(const TraderConfig& c);
// The market data ring's path, connected and reconnected on the order-entry
// session's timing (one rule for everything the trader connects to).
client::MdRingFeedConfig ring_config(const TraderConfig& c);
// Reordering and the recovery buffer.
client::MdConsumerConfig consumer_config(const TraderConfig& c);

}  // namespace nanotick::trading
