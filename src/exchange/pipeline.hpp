// What flows between the exchange's agents (docs/EXCHANGE.md "Pipeline"):
// gateway -> sequencer -> engine requests with their receive timestamps, and
// the event id that ties every engine output back to the session message that
// caused it (and, with the connection serial dropped, its telemetry key). Plain values and ring types; each ring has
// one producer and one consumer thread.
#pragma once

#include <cstdint>

#include "core/spsc_ring.hpp"
#include "engine/events.hpp"
#include "engine/request.hpp"

namespace nanotick::exchange {

struct InboundRequest {
  engine::Request request;  // request.event_id: see make_event_id
  std::uint64_t received_tsc = 0;  // TSC when the gateway decoded it (telemetry)
};

// The pipeline's ring capacities: compile-time traits (a ring's capacity is
// its type's, so its index masks are constants), documented in
// docs/EXCHANGE.md "Threads". Requests: gateway -> sequencer and sequencer ->
// engine; a full one holds the gateway's reading back. Outputs: engine ->
// gateway (reports) and engine -> md publisher in the dedicated layout, md
// publisher -> snapshot publisher in both: an engine batch (64 requests) can
// emit hundreds of events, and a full output ring makes its producer wait.
inline constexpr std::size_t kRequestRingCapacity = 4096;
inline constexpr std::size_t kOutputRingCapacity = 16384;
using RequestRing = core::SpscRing<InboundRequest, kRequestRingCapacity>;
using ReportRing = core::SpscRing<engine::ExecReport, kOutputRingCapacity>;
using MdRing = core::SpscRing<engine::MdEvent, kOutputRingCapacity>;

// event_id = client << 48 | connection generation << 32 | session seq: unique
// per message while a client id has at most one session, and enough for the
// gateway to tell whether a report answers the live session's own message
// (PROTOCOL.md ExecutionReport.ref_seq). Exchange-generated requests (cancel
// on disconnect) use seq 0.
constexpr std::uint64_t make_event_id(std::uint32_t client, std::uint16_t generation, std::uint32_t seq) noexcept {
  return (std::uint64_t{client & 0xffffu} << 48) | (std::uint64_t{generation} << 32) | seq;
}
constexpr std::uint32_t event_client(std::uint64_t id) noexcept { return static_cast<std::uint32_t>(id >> 48); }
constexpr std::uint16_t event_generation(std::uint64_t id) noexcept { return static_cast<std::uint16_t>(id >> 32); }
constexpr std::uint32_t event_seq(std::uint64_t id) noexcept { return static_cast<std::uint32_t>(id); }

// The telemetry order key of a request (docs/TELEMETRY.md "Points and keys"):
// (client << 32) | session seq -- the connection serial dropped, since the
// trader stamping the same message cannot know it. 0 ("no id") for requests
// the exchange made itself (the mass cancel at a session's end: seq 0).
constexpr std::uint64_t telemetry_order_key(std::uint64_t event_id) noexcept {
  const std::uint32_t seq = event_seq(event_id);
  return seq == 0 ? 0 : (std::uint64_t{event_client(event_id)} << 32) | seq;
}

}  // namespace nanotick::exchange
