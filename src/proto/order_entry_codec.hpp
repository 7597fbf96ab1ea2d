// Framing and checks of the order-entry byte stream, docs/PROTOCOL.md §1.5
// rules 1-4 (what can be decided from the bytes alone; sequence numbers and
// logon state are the session's business). Pure functions over a byte span:
// no allocation, no I/O. Thread-safe (stateless).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "proto/order_entry.hpp"

namespace nanotick::proto {

enum class FrameStatus : std::uint8_t {
  kNeedMore,  // not enough bytes yet to decide: read more
  kMessage,   // a well-formed message of `length` bytes: header.type tells which
  kSkip,      // a readable but invalid message of `length` bytes: reject with `reason`, consume, go on
  kFatal,     // the stream cannot be framed any more (bad length): reject, close the session
};

enum class Direction : std::uint8_t { kFromClient, kFromExchange };

struct Frame {
  FrameStatus status = FrameStatus::kNeedMore;
  SessionRejectReason reason = SessionRejectReason::kNone;  // kSkip / kFatal
  std::size_t length = 0;  // bytes to consume for kMessage / kSkip
  Header header{};         // as received (kMessage / kSkip; for kFatal the bytes present)
};

// Looks at the message at the front of `bytes` (a stream that `from` sent).
Frame next_frame(std::span<const std::uint8_t> bytes, Direction from) noexcept;

// Copies a message of type M out of a frame's bytes (status kMessage, type checked).
template <typename M>
M read_message(const std::uint8_t* bytes) noexcept {
  M m;
  std::memcpy(&m, bytes, sizeof(M));
  return m;
}

// Writes `m` at `out` (at least sizeof(M) bytes); returns the bytes written.
template <typename M>
std::size_t write_message(const M& m, std::uint8_t* out) noexcept {
  std::memcpy(out, &m, sizeof(M));
  return sizeof(M);
}

}  // namespace nanotick::proto
