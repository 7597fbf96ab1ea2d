// Engine snapshot files (docs/EXCHANGE.md "Snapshots and recovery"): an
// EngineState and the controls' state (controls::ControlsState: the
// accounts' balances since version 3, the halts and blocks since version 4;
// older files have none) as of a journal sequence number, written atomically (temporary
// file, fdatasync, rename, directory fsync; the newest two are kept) and read
// back with every length and the CRC-32C checked. Start-up and auxiliary
// thread code: allocates, does I/O. Not thread-safe per directory: one writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controls/controls_state.hpp"
#include "engine/engine_state.hpp"

namespace nanotick::exchange {

struct LoadedSnapshot {
  std::uint64_t journal_seq = 0;  // the state after the request with this seq
  engine::EngineState state;
  controls::ControlsState controls;  // balances, halts and blocks
  std::string path;
};

// Writes `state` (the engine after journal record `journal_seq`) into `dir`
// and removes all but the newest two snapshot files. Throws
// std::runtime_error naming the path and the system error.
void write_engine_snapshot(const std::string& dir, std::uint64_t journal_seq, std::uint64_t fingerprint,
                           const engine::EngineState& state, const controls::ControlsState& controls = {});

// The newest snapshot in `dir` that reads back whole with this fingerprint,
// or nullopt. Each file skipped and why goes to `problems`.
std::optional<LoadedSnapshot> load_latest_snapshot(const std::string& dir, std::uint64_t fingerprint,
                                                   std::vector<std::string>& problems);

// Encoding, exposed for tests: the file's bytes and their parse.
std::vector<std::uint8_t> encode_engine_snapshot(std::uint64_t journal_seq, std::uint64_t fingerprint,
                                                 const engine::EngineState& state,
                                                 const controls::ControlsState& controls = {});
// Throws std::runtime_error saying what is wrong (bad magic, truncated, CRC...).
LoadedSnapshot decode_engine_snapshot(const std::vector<std::uint8_t>& bytes, std::uint64_t fingerprint);

std::string snapshot_file_name(std::uint64_t journal_seq);

}  // namespace nanotick::exchange
