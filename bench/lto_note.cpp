// Linked into every benchmark built without link-time optimisation (the
// smoke-run build of ./nanotick test: NANOTICK_BENCH_LTO=OFF): says so before
// anything runs, so that nobody publishes figures from it.
#include <cstdio>

namespace {

[[gnu::constructor]] void warn_without_lto() {
  std::fprintf(stderr,
               "note: this benchmark was built without link-time optimisation (./nanotick test's smoke build); "
               "./nanotick bench rebuilds it with LTO for figures\n");
}

}  // namespace
