#include "exchange/marketdata/md_channel.hpp"

#include <stdexcept>
#include <string>

#include "core/time_units.hpp"
#include "net/socket_address.hpp"

namespace nanotick::exchange {

namespace {

const char* key_of(proto::Channel channel) {
  return channel == proto::Channel::kIncremental ? "market_data.incremental" : "market_data.snapshot";
}

}  // namespace

net::MulticastSenderConfig md_sender_config(proto::Channel channel, const MarketDataConfig& config) {
  if (channel != proto::Channel::kIncremental && channel != proto::Channel::kSnapshot)
    throw std::invalid_argument("market data channel must be 1 (incremental) or 2 (snapshot)");
  const char* key = key_of(channel);
  if (config.ttl > 255)
    throw std::invalid_argument("market_data.ttl: must be 0..255 (0 = this host only), got " +
                                std::to_string(config.ttl));
  net::MulticastSenderConfig out;
  try {
    out.interface = net::parse_ipv4(config.interface);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("market_data.interface: ") + e.what());
  }
  try {
    out.group =
        net::parse_multicast_group(channel == proto::Channel::kIncremental ? config.incremental : config.snapshot);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(key) + ": " + e.what());
  }
  out.ttl = static_cast<int>(config.ttl);
  return out;
}

namespace {

std::size_t checked_mtu(const MarketDataConfig& config) {
  if (config.mtu < proto::kMinMtu || config.mtu > proto::kMaxMtu)
    throw std::invalid_argument("market_data.mtu: must be in [" + std::to_string(proto::kMinMtu) + ", " +
                                std::to_string(proto::kMaxMtu) + "], got " + std::to_string(config.mtu));
  return config.mtu;
}

std::uint32_t checked_heartbeat(const MarketDataConfig& config) {
  if (config.heartbeat_ms == 0) throw std::invalid_argument("market_data.heartbeat_ms: must be > 0, got 0");
  return config.heartbeat_ms;
}

std::uint64_t checked_next_seq(std::uint64_t seq) {
  if (seq == 0) throw std::invalid_argument("market data: sequence numbers start at 1, got a next seq of 0");
  return seq;
}

}  // namespace

std::uint64_t ms_to_ticks(const core::TscClock& clock, std::uint64_t ms) noexcept {
  const double ticks = clock.ticks_from_ns(core::ns_from_ms(static_cast<double>(ms)));
  return ticks < 1.0 ? 1 : static_cast<std::uint64_t>(ticks);
}

MdChannel::MdChannel(proto::Channel channel, const MarketDataConfig& config, std::uint64_t next_seq,
                     const core::TscClock& clock)
    : clock_(clock),
      stamp_sends_(channel == proto::Channel::kIncremental),
      sender_(md_sender_config(channel, config)),
      writer_(channel, checked_mtu(config)),
      next_seq_(checked_next_seq(next_seq)),
      heartbeat_ticks_(ms_to_ticks(clock, checked_heartbeat(config))),
      last_send_ticks_(clock.now()) {}

}  // namespace nanotick::exchange
