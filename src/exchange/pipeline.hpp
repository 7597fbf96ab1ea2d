// What flows between the exchange's agents (docs/EXCHANGE.md "Pipeline"):
// gateway -> sequencer -> engine requests with their receive timestamps, and
// the event id that ties every engine output back to the session message that
// caused it (and, with the connection serial dropped, its telemetry key); the
// receive timestamp back with the message's first answer. Plain values and
// ring types; each ring has one producer and one consumer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/spsc_ring.hpp"
#include "engine/events.hpp"
#include "engine/request.hpp"

namespace nanotick::exchange {

struct InboundRequest {
  engine::Request request;  // request.event_id: see make_event_id
  // TSC when the gateway decoded it: the start of its ack latency, which
  // comes back with its first answer (FirstAnswerTsc below).
  std::uint64_t received_tsc = 0;
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

// The ack latency (sessions/ack_latency.hpp) runs from a request's receive
// TSC to its first answer's write. The TSC comes back with the answers rather
// than waiting in a per-session table: the engine's sink is told the TSC of
// the request the engine is about to process (begin_request) and hands it on
// with the first report addressed to the request's own client -- the report
// the gateway sends as the first answer -- and 0 with every other report (the
// rest of that request's reports, and those to other clients: a maker's fill,
// an admin's cancels of its target's orders). The gateway still checks that
// the report answers its live connection's message (ref_seq != 0). Not
// thread-safe: the engine's thread.
class FirstAnswerTsc {
 public:
  void begin_request(std::uint64_t received_tsc) noexcept { tsc_ = received_tsc; }
  // What goes with `r`, which the engine just produced.
  std::uint64_t take(const engine::ExecReport& r) noexcept {
    if (tsc_ == 0 || event_client(r.event_id) != r.client) return 0;
    const std::uint64_t tsc = tsc_;
    tsc_ = 0;
    return tsc;
  }

 private:
  std::uint64_t tsc_ = 0;
};

// In dedicated mode the TSC crosses to the gateway's thread in the report's
// ring slot, in the 8 bytes at the end of engine::ExecReport that the engine
// leaves zero (`pad`): the element stays 120 bytes, so a ReportRing slot
// (with the ring's 8-byte seq) stays two cache lines. Written after the
// engine has built the report, read by the gateway's thread only.
static_assert(sizeof(engine::ExecReport::pad) == sizeof(std::uint64_t) &&
                  offsetof(engine::ExecReport, pad) % alignof(std::uint64_t) == 0,
              "the receive TSC fills ExecReport::pad exactly");
static_assert(sizeof(core::SpscRing<engine::ExecReport, 2>) == 128 + 2 * 128,
              "a report's ring slot is two cache lines");
inline void carry_received_tsc(engine::ExecReport& r, std::uint64_t tsc) noexcept {
  std::memcpy(r.pad, &tsc, sizeof tsc);
}
inline std::uint64_t carried_received_tsc(const engine::ExecReport& r) noexcept {
  std::uint64_t tsc = 0;
  std::memcpy(&tsc, r.pad, sizeof tsc);
  return tsc;
}

}  // namespace nanotick::exchange
