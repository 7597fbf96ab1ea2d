#include "workload/workload.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace nanotick::workload {

std::string_view to_string(WorkloadKind kind) noexcept {
  switch (kind) {
    case WorkloadKind::kCustom: return "custom";
    case WorkloadKind::kCancelHeavy: return "cancel-heavy";
    case WorkloadKind::kMixed: return "mixed";
    case WorkloadKind::kDeep: return "deep";
    case WorkloadKind::kCrash: return "crash";
    case WorkloadKind::kRegimeStatic: return "regime-static";
    case WorkloadKind::kRegimeNormal: return "regime-normal";
    case WorkloadKind::kRegimeSwing25: return "regime-swing-25";
    case WorkloadKind::kRegimeSwing40: return "regime-swing-40";
    case WorkloadKind::kRegimeFlashCrash: return "regime-flash-crash";
  }
  return "unknown";
}

WorkloadKind parse_workload_kind(std::string_view name) {
  for (const WorkloadKind kind : kGeneratedKinds) {
    if (to_string(kind) == name) return kind;
  }
  const auto list = [](const auto& kinds) {
    std::string s;
    for (const WorkloadKind kind : kinds) {
      s += s.empty() ? "" : ", ";
      s += to_string(kind);
    }
    return s;
  };
  throw std::invalid_argument("unknown workload '" + std::string(name) + "' (valid: " + list(kClassicKinds) +
                              ") or a regime (" + list(kRegimeKinds) + ")");
}

namespace {
bool same_instrument(const engine::InstrumentConfig& a, const engine::InstrumentConfig& b) {
  return a.symbol == b.symbol && a.tick_size == b.tick_size && a.min_price == b.min_price &&
         a.max_price == b.max_price && a.collar == b.collar && a.max_order_qty == b.max_order_qty &&
         a.max_orders == b.max_orders && a.max_levels == b.max_levels;
}
}  // namespace

bool Workload::operator==(const Workload& other) const noexcept {
  if (kind != other.kind || seed != other.seed || scale != other.scale) return false;
  if (config.instruments.size() != other.config.instruments.size()) return false;
  for (std::size_t i = 0; i < config.instruments.size(); ++i) {
    if (!same_instrument(config.instruments[i], other.config.instruments[i])) return false;
  }
  // Requests are trivially copyable with no padding (all bytes are fields).
  return requests.size() == other.requests.size() &&
         (requests.empty() ||
          std::memcmp(requests.data(), other.requests.data(), requests.size() * sizeof(engine::Request)) == 0);
}

}  // namespace nanotick::workload
