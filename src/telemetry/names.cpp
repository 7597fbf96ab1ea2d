// Name validation for telemetry files (see names.hpp).
#include "telemetry/names.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace nanotick::telemetry {

void validate_name(std::string_view what, std::string_view name, std::size_t max_bytes) {
  const std::string label(what);
  if (name.empty()) {
    throw std::invalid_argument("telemetry: " + label + " is empty; give it a short name such as \"engine\"");
  }
  if (name.size() > max_bytes) {
    throw std::invalid_argument("telemetry: " + label + " '" + std::string(name) + "' is " +
                                std::to_string(name.size()) + " bytes; at most " + std::to_string(max_bytes) +
                                " fit in a telemetry file");
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      throw std::invalid_argument("telemetry: " + label + " has byte " + hex + " at offset " + std::to_string(i) +
                                  "; use printable ASCII only");
    }
  }
}

}  // namespace nanotick::telemetry
