// Recorder start-up: name validation and allocation (the hot path is inline in
// recorder.hpp).
#include "telemetry/recorder.hpp"

#include <stdexcept>
#include <utility>

#include "telemetry/names.hpp"

namespace nanotick::telemetry {

Recorder::Recorder(std::string name, const core::TscClock& clock) noexcept : clock_(&clock), name_(std::move(name)) {}

std::unique_ptr<Recorder> Recorder::create(std::string name, const core::TscClock& clock) {
  validate_name("recorder name", name, kMaxNameBytes);
  // Not make_unique: the constructor is private (create() is the only way in).
  return std::unique_ptr<Recorder>(new Recorder(std::move(name), clock));
}

}  // namespace nanotick::telemetry
