// Linked into every benchmark of a release build without link-time
// optimisation (CI's ./nanotick test: CMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF):
// says so before anything runs, so that nobody publishes figures from it.
#include <cstdio>

namespace {

[[gnu::constructor]] void warn_without_lto() {
  std::fprintf(stderr,
               "note: this benchmark was built without link-time optimisation (CI's test build); ./nanotick bench "
               "rebuilds it with LTO for figures\n");
}

}  // namespace
