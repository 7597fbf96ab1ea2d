#!/usr/bin/env bash
# The PGO training workload (issue 13): runs the programs of an instrumented
# build (NANOTICK_PGO=generate, e.g. preset pgo-train) so that they write the
# profile the optimised build (NANOTICK_PGO=use, preset pgo) reads. Used by
# './nanotick build-pgo' and by tools/bench/flag_matrix.sh's PGO configuration.
#
# Never the benchmarks' own input. What runs, and why each is not what the
# benchmarks measure:
#   1. regime_bench --seed 7 --impl nanotick: the five regimes generated from
#      seed 7 through the engine and the report queue. The benchmark (and the
#      flag matrix) measures seed 1: the same regime parameters, different
#      order flow (prices, sizes, cancels, arrival order). It has to be
#      regime_bench itself: GCC keeps a profile per object file, and the
#      engine is header-only templates, so only the bench's own object file
#      can carry the profile of its engine instantiation.
#   2. nanotick-gen + nanotick-replay: the five regimes at seed 11, half
#      scale, written to a file and replayed (the engine with market data on,
#      as the exchange runs it).
#   3. ring_bench --quick: the SPSC rings at small counts (the ring bench has
#      no input data; the smoke counts train the same loops).
#   4. tick_to_trade_bench --idle spin: the exchange (gateway, sequencer,
#      engine, market data) and two traders, one under the random strategy's
#      load (resting orders and IOCs at 1000 actions/s), one market maker --
#      not order_entry_bench's NewOrder/Cancel round trips.
# --quick shrinks every step (a smoke run of the pipeline, not a profile to
# ship). The benchmarks' output goes to BUILD_DIR/pgo-train.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# The programs the training runs: the instrumented build must have them.
TARGETS=(regime_bench ring_bench nanotick-gen nanotick-replay tick_to_trade_bench)

usage() {
  cat <<EOF
usage: tools/bench/pgo_train.sh BUILD_DIR [--quick]
       tools/bench/pgo_train.sh --targets

Runs the PGO training workload with the programs of BUILD_DIR, a build
configured with NANOTICK_PGO=generate (e.g. build/pgo-train), after deleting
the profile files of earlier trainings from its NANOTICK_PGO_DIR. Generated
workloads only, never the benchmarks' input (seed 7 and 11 regimes; the
benchmarks measure seed 1): see this script's header.
  --quick     every step shortened (checks the pipeline; not a profile to ship)
  --targets   print the CMake targets the training needs, one line, and exit
EOF
}

die() { echo "pgo_train: error: $*" >&2; exit 1; }
say() { echo "pgo_train: $*" >&2; }

build_dir="" quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --targets) echo "${TARGETS[*]}"; exit 0 ;;
    --quick) quick=1 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z "$build_dir" ]] || die "one BUILD_DIR only (got '$build_dir' and '$1')"
       build_dir="$1" ;;
  esac
  shift
done
[[ -n "$build_dir" ]] || die "BUILD_DIR is required (see --help)"
[[ -d "$build_dir" ]] || die "BUILD_DIR '$build_dir' is not a directory"
build_dir="$(cd "$build_dir" && pwd)"
cache="$build_dir/CMakeCache.txt"
[[ -f "$cache" ]] || die "$build_dir has no CMakeCache.txt: configure it first (cmake --preset pgo-train)"

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n1; }
[[ "$(cache_value NANOTICK_PGO)" == "generate" ]] \
  || die "$build_dir is not an instrumented build (NANOTICK_PGO is '$(cache_value NANOTICK_PGO)', want generate)"
profile_dir="$(cache_value NANOTICK_PGO_DIR)"
[[ "$profile_dir" == /* ]] || profile_dir="$build_dir/$profile_dir"
# The compiler's id is in the file CMake wrote when it identified it.
compiler="$(sed -n 's/^set(CMAKE_CXX_COMPILER_ID "\(.*\)")$/\1/p' "$build_dir"/CMakeFiles/*/CMakeCXXCompiler.cmake 2>/dev/null \
            | head -n1)"
case "$compiler" in
  GNU) pattern='*.gcda' ;;
  Clang) pattern='*.profraw' ;;
  *) die "compiler '${compiler:-unknown}' in $build_dir: the training knows GCC's and Clang's profiles only" ;;
esac
for t in regime_bench ring_bench tick_to_trade_bench; do
  [[ -x "$build_dir/bench/$t" ]] || die "$build_dir/bench/$t is missing: build the targets '${TARGETS[*]}' first"
done
for t in gen replay exchange trader; do
  [[ -x "$build_dir/bin/nanotick-$t" ]] || die "$build_dir/bin/nanotick-$t is missing: build the targets '${TARGETS[*]}' first"
done

# Only the profile files go: NANOTICK_PGO_DIR may be any directory.
mkdir -p "$profile_dir"
find "$profile_dir" -type f -name "$pattern" -delete
log="$build_dir/pgo-train.log"
: >"$log"
work="$(mktemp -d "${TMPDIR:-/tmp}/nanotick-pgo-train.XXXXXX")"
trap 'rm -rf "$work"' EXIT

step() {  # step NAME COMMAND...: runs one training program, its output to the log
  local name="$1" start=$SECONDS; shift
  echo "=== $name: $*" >>"$log"
  if ! "$@" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "training step '$name' failed (full output: $log)"
  fi
  say "  $name: $((SECONDS - start)) s"
}

start=$SECONDS
say "training $build_dir (profile in $profile_dir)$([[ $quick -eq 1 ]] && echo ', --quick' || true)"
regimes=(regime-static regime-normal regime-swing-25 regime-swing-40 regime-flash-crash)
if [[ $quick -eq 1 ]]; then
  step "regime_bench seed 7" "$build_dir/bench/regime_bench" --quick --seed 7 --impl nanotick
  scale=0.02
else
  step "regime_bench seed 7" "$build_dir/bench/regime_bench" --seed 7 --repeats 1 --impl nanotick
  scale=0.5
fi
for r in "${regimes[@]}"; do
  step "gen $r seed 11" "$build_dir/bin/nanotick-gen" --workload "$r" --seed 11 --scale "$scale" --quiet \
    --out "$work/$r.bin"
  step "replay $r seed 11" "$build_dir/bin/nanotick-replay" "$work/$r.bin"
done
step "ring_bench" "$build_dir/bench/ring_bench" --quick
if [[ $quick -eq 1 ]]; then
  step "tick_to_trade_bench" "$build_dir/bench/tick_to_trade_bench" --quick --idle spin
else
  step "tick_to_trade_bench" "$build_dir/bench/tick_to_trade_bench" --seconds 5 --idle spin
fi

count="$(find "$profile_dir" -type f -name "$pattern" | wc -l)"
[[ "$count" -gt 0 ]] || die "the training wrote no profile ($pattern) into $profile_dir"
say "trained in $((SECONDS - start)) s: $count profile files in $profile_dir"
