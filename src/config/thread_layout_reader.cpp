#include "config/thread_layout_reader.hpp"

#include <algorithm>
#include <string>

namespace nanotick::config {

namespace {

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Appends in place rather than `sep + std::string(s)`: that temporary goes
// through string::insert(0, ...), whose memcpy length GCC 12 cannot bound at
// -O3/LTO, and it reports a bogus -Wstringop-overflow (the std::string false
// positives of GCC bugs 105329/105651 that tests/CMakeLists.txt also names).
std::string joined(const std::vector<std::string_view>& v) {
  std::string out;
  for (const std::string_view s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

core::ThreadLayout read_thread_layout(TableReader t, const ThreadRoles& roles) {
  core::ThreadLayout layout;
  const std::string mode = t.choice("mode", "compact", {"compact", "dedicated"});
  layout.mode = mode == "dedicated" ? core::ThreadMode::kDedicated : core::ThreadMode::kCompact;
  layout.idle = core::parse_idle_kind(t.choice("idle", "backoff", roles.idle_kinds));
  for (const std::int64_t cpu : t.integer_array("cpus", 0, 4095)) layout.cpus.push_back(static_cast<int>(cpu));
  const auto& mine = layout.mode == core::ThreadMode::kDedicated ? roles.dedicated : roles.compact;
  const auto& theirs = layout.mode == core::ThreadMode::kDedicated ? roles.compact : roles.dedicated;
  for (const std::string_view role : theirs) {
    if (!contains(mine, role) && t.table(role))
      t.fail(role, "is a runner of the " +
                       std::string(layout.mode == core::ThreadMode::kDedicated ? "compact" : "dedicated") +
                       " layout; mode is " + mode + ", whose runners are " + joined(mine));
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    core::RunnerConfig r;
    r.role = std::string(mine[i]);
    r.idle = contains(roles.critical, mine[i]) ? layout.idle : roles.background_idle;
    if (i < layout.cpus.size()) r.cpu = layout.cpus[i];
    if (auto rt = t.table(mine[i])) {
      const std::int64_t cpu = rt->integer("cpu", -2, -1, 4095);
      if (cpu != -2) {
        if (i < layout.cpus.size())
          rt->fail("cpu",
                   "this runner is pinned by threads.cpus[" + std::to_string(i) + "] too: give one or the other");
        r.cpu = static_cast<int>(cpu);
      }
      r.idle = core::parse_idle_kind(rt->choice("idle", core::to_string(r.idle), roles.idle_kinds));
      rt->finish();
    }
    layout.runners.push_back(std::move(r));
  }
  t.finish();
  return layout;
}

}  // namespace nanotick::config
