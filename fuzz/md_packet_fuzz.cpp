// Fuzz target: a market data datagram on either channel. parse_packet must
// reject anything malformed; for what it accepts, every message it walks must
// lie inside the datagram (ASan catches a read past it).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "proto/md_packet.hpp"

namespace np = nanotick::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An exact-size copy: ASan then flags any byte read beyond the datagram.
  const std::vector<std::uint8_t> datagram(data, data + size);
  for (const np::Channel channel : {np::Channel::kIncremental, np::Channel::kSnapshot}) {
    np::PacketHeader header{};
    if (np::parse_packet(datagram, channel, header) != np::PacketError::kNone) continue;
    std::uint64_t sum = 0;
    np::for_each_message(datagram, header, [&](np::MdMsgType type, const std::uint8_t* msg, std::uint64_t seq) {
      sum += static_cast<std::uint64_t>(type) + msg[0] + seq;
    });
    if (sum == 1) return 0;  // keeps the walk from being optimised away
  }
  return 0;
}
