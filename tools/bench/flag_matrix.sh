#!/usr/bin/env bash
# The build-flag matrix (issue 13): the engine, the rings and the order round
# trip built with each of a list of flag sets -- -O2/-O3, -march x86-64-v2/v3/
# native, LTO on/off, GCC 12 / Clang 16, GCC + PGO -- and measured
# interleaved, so that the best portable choice can be made the release
# default on figures taken under the same conditions.
#
# Two phases, never overlapping (a compile next to a benchmark is noise):
#   build  every configuration into build/flags/<name>, only the targets its
#          benches need (regime_bench, ring_bench; order_entry_bench and the
#          nanotick-exchange it spawns where the order round trip is
#          measured). PGO: build/flags/<name>-train instrumented, trained by
#          tools/bench/pgo_train.sh (generated workloads, never the benches'
#          input), then <name> built with its profile.
#   bench  `rounds` rounds; in a round each bench runs once on every
#          configuration, one bench kind at a time (regime_bench on all, then
#          ring_bench on all, then order_entry_bench on all that measure it),
#          the configurations in an order rotated by one each round. No
#          configuration's runs come back to back: drift and noise on a
#          shared VM hit every configuration alike.
# The result, build/flags/matrix.md: per configuration the median over the
# rounds and the min-max over the rounds of nanotick's M msgs/s per regime
# (regime_bench, seed 1, --impl nanotick), SpscRing throughput and round-trip
# p50 (ring_bench), and the exchange's order round trip p50/p99 (NewOrder ->
# Accepted, fsync batch; order_entry_bench's median over its own repeats).
# Logs of every run: build/flags/logs/; every sample: build/flags/samples.tsv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$ROOT/build/flags"
PGO_TRAIN="$ROOT/tools/bench/pgo_train.sh"

# The configurations: name, compiler, optimisation level, -march, LTO, PGO,
# and whether the order round trip is measured (yes/no). The round trip is
# measured on three only: it is nearly all the kernel's loopback (about 8 us
# here, within a few per cent of the raw TCP ping-pong measured beside it), so
# -O2/-O3, -march and LTO are far below its spread; the compiler and PGO are
# the changes big enough to look for there. The first line is the baseline of
# the ratios.
CONFIGS=(
  # name               compiler    opt  march      lto  pgo  round-trip
  "gcc12-O3-v2-lto     g++-12      -O3  x86-64-v2  ON   off  yes"   # today's release preset
  "gcc12-O2-v2-lto     g++-12      -O2  x86-64-v2  ON   off  no"
  "gcc12-O3-v3-lto     g++-12      -O3  x86-64-v3  ON   off  no"
  "gcc12-O3-native-lto g++-12      -O3  native     ON   off  no"
  "gcc12-O3-v2-nolto   g++-12      -O3  x86-64-v2  OFF  off  no"
  "clang16-O3-v2-lto   clang++-16  -O3  x86-64-v2  ON   off  yes"
  "gcc12-O3-v2-lto-pgo g++-12      -O3  x86-64-v2  ON   on   yes"
)
# --quick: one of each kind of build (GCC, Clang, PGO with its training).
QUICK_CONFIGS=(gcc12-O3-v2-lto clang16-O3-v2-lto gcc12-O3-v2-lto-pgo)
REGIMES=(regime-static regime-normal regime-swing-25 regime-swing-40 regime-flash-crash)
BENCH_TIMEOUT=3600  # seconds per benchmark run: a hung run fails, the matrix goes on

usage() {
  cat <<EOF
usage: tools/bench/flag_matrix.sh [--quick] [--rounds N] [--configs A,B,...]
                                  [--build-only | --bench-only] [--jobs N] [--list]

Builds each configuration of the flag matrix into build/flags/<name>, then
runs regime_bench, ring_bench and (on some) order_entry_bench interleaved
across the configurations for N rounds, and writes build/flags/matrix.md:
median and min-max over the rounds per configuration. See the header of this
script for the method. Run it on a quiet machine: nothing else compiling or
measuring (the build phase finishes before the first benchmark).
  --quick          --quick on every bench, one round, at most 3 configurations
                   (default ${QUICK_CONFIGS[*]}); checks the pipeline
  --rounds N       rounds of benchmarks, 1..50 (default 5)
  --configs LIST   only these configurations, comma-separated (--list names them)
  --build-only     build (and train PGO), no benchmarks
  --bench-only     benchmarks only, on the builds already in build/flags
  --jobs N         compile jobs, 1..64 (default \$NANOTICK_JOBS or 2)
  --list           print the configurations with their CMake arguments and exit
  --parse KIND LOG print the figures the matrix takes from one bench's output
                   (KIND: regime, ring or order) and exit; for tests
Time on 2 vCPUs: the builds 15 to 20 minutes (1 to 2 per configuration, 5
for PGO with its training), then per round about 25 s per configuration plus 2.5
minutes per order round trip: 10 minutes a round with every configuration,
about 70 minutes in all with the default 5 rounds. --quick: about 10 minutes.
EOF
}

die() { echo "flag_matrix: error: $*" >&2; exit 1; }
say() { echo "flag_matrix: $*" >&2; }

# ---------------------------------------------------------------- configurations
config_line() {  # config_line NAME: its CONFIGS line, or nothing
  local line
  local -a f
  for line in "${CONFIGS[@]}"; do
    read -r -a f <<<"$line"
    [[ "${f[0]}" == "$1" ]] && { echo "$line"; return 0; }
  done
  return 1
}
config_names() { local line; local -a f; for line in "${CONFIGS[@]}"; do read -r -a f <<<"$line"; echo "${f[0]}"; done; }
field() {  # field NAME INDEX
  local -a f
  read -r -a f <<<"$(config_line "$1")"
  echo "${f[$2]}"
}
measures_round_trip() { [[ "$(field "$1" 6)" == "yes" ]]; }
is_pgo() { [[ "$(field "$1" 5)" == "on" ]]; }

# cmake_args NAME [PGO_MODE]: the cache arguments of a configuration, one a line
# (PGO_MODE generate for its training build, use for the measured one).
cmake_args() {
  local name="$1" mode="${2:-}"
  echo "-DCMAKE_BUILD_TYPE=Release"
  echo "-DCMAKE_CXX_COMPILER=$(field "$name" 1)"
  echo "-DCMAKE_CXX_FLAGS_RELEASE=$(field "$name" 2) -DNDEBUG"
  echo "-DNANOTICK_MARCH=$(field "$name" 3)"
  echo "-DCMAKE_INTERPROCEDURAL_OPTIMIZATION=$(field "$name" 4)"
  if [[ -n "$mode" ]]; then
    echo "-DNANOTICK_PGO=$mode"
    echo "-DNANOTICK_PGO_DIR=$OUT/$name-train/pgo-profile"
  else
    echo "-DNANOTICK_PGO="
  fi
  echo "-DNANOTICK_BUILD_TESTS=OFF"
  echo "-DNANOTICK_WERROR=OFF"
}

bench_targets() {
  local t=(regime_bench ring_bench)
  measures_round_trip "$1" && t+=(order_entry_bench)  # builds nanotick-exchange too
  echo "${t[*]}"
}

list_configs() {
  local name
  for name in $(config_names); do
    local -a args
    mapfile -t args < <(cmake_args "$name" "$(is_pgo "$name" && echo use || true)")
    printf '%s (order round trip: %s):\n ' "$name" "$(field "$name" 6)"
    printf ' %q' "${args[@]}"
    echo
    if is_pgo "$name"; then
      echo "  trained by: tools/bench/pgo_train.sh build/flags/$name-train (an instrumented build: NANOTICK_PGO=generate)"
    fi
  done
}

# ---------------------------------------------------------------- options
quick=0 rounds=5 rounds_given=0 only="" phase=all jobs="${NANOTICK_JOBS:-2}" parse_mode="" parse_file=""
command_line="tools/bench/flag_matrix.sh"
for a in "$@"; do  # quoted only where the shell needs it
  if [[ "$a" =~ ^[A-Za-z0-9_./,=:+-]+$ ]]; then command_line+=" $a"; else command_line+=" $(printf '%q' "$a")"; fi
done
while [[ $# -gt 0 ]]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --list) list_configs; exit 0 ;;
    --parse)
      [[ "${2:-}" =~ ^(regime|ring|order)$ ]] || die "--parse needs a KIND (regime, ring or order), got '${2:-}'"
      [[ -f "${3:-}" ]] || die "--parse $2 needs a bench output file, got '${3:-}'"
      parse_mode="$2" parse_file="$3"; shift 2 ;;
    --quick) quick=1 ;;
    --rounds)
      [[ "${2:-}" =~ ^[1-9][0-9]?$ && "$2" -le 50 ]] || die "--rounds needs a whole number 1..50, got '${2:-}'"
      rounds="$2"; rounds_given=1; shift ;;
    --configs)
      [[ -n "${2:-}" && "$2" != -* ]] || die "--configs needs a comma-separated list of names (see --list)"
      only="$2"; shift ;;
    --build-only) [[ "$phase" == all ]] || die "--build-only and --bench-only exclude each other"; phase=build ;;
    --bench-only) [[ "$phase" == all ]] || die "--build-only and --bench-only exclude each other"; phase=bench ;;
    --jobs)
      [[ "${2:-}" =~ ^[1-9][0-9]?$ && "$2" -le 64 ]] || die "--jobs needs a whole number 1..64, got '${2:-}'"
      jobs="$2"; shift ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ "$jobs" =~ ^[1-9][0-9]?$ ]] || die "NANOTICK_JOBS must be a whole number 1..99, got '$jobs'"

selected=()
if [[ -n "$only" ]]; then
  IFS=',' read -r -a wanted <<<"$only"
  for name in "${wanted[@]}"; do
    config_line "$name" >/dev/null || die "unknown configuration '$name' (known: $(config_names | paste -sd' '))"
    [[ " ${selected[*]:-} " == *" $name "* ]] || selected+=("$name")
  done
elif [[ $quick -eq 1 ]]; then
  selected=("${QUICK_CONFIGS[@]}")
else
  mapfile -t selected < <(config_names)
fi
if [[ $quick -eq 1 ]]; then
  [[ ${#selected[@]} -le 3 ]] || die "--quick runs at most 3 configurations (got ${#selected[@]}: ${selected[*]})"
  [[ $rounds_given -eq 0 || $rounds -eq 1 ]] || die "--quick runs one round (drop --rounds)"
  rounds=1
fi
bench_flag=()
[[ $quick -eq 1 ]] && bench_flag=(--quick)

# ---------------------------------------------------------------- build
# A configuration that fails to build is reported and left out of the
# benchmarks; the others go on (one compiler's error should not cost a run).
failures=()
configure() {  # configure DIR ARGS...
  local dir="$1"; shift
  mkdir -p "$dir"
  cmake -S "$ROOT" -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 \
    || { tail -n 20 "$dir/configure.log" >&2; say "configuring $dir failed (log: $dir/configure.log)"; return 1; }
}

compile() {  # compile DIR TARGET...
  local dir="$1"; shift
  cmake --build "$dir" -j "$jobs" --target "$@" >"$dir/build.log" 2>&1 \
    || { grep -m 10 -E 'error|FAILED' "$dir/build.log" >&2 || true
         say "building $* in $dir failed (log: $dir/build.log)"; return 1; }
}

build_config() {  # build_config NAME: 0 when its bench binaries are built
  local name="$1" dir="$OUT/$1" start=$SECONDS
  local -a args targets
  read -r -a targets <<<"$(bench_targets "$name")"
  if is_pgo "$name"; then
    local train="$OUT/$name-train"
    local -a train_targets
    read -r -a train_targets <<<"$("$PGO_TRAIN" --targets)"
    mapfile -t args < <(cmake_args "$name" generate)
    say "building $name-train (instrumented: ${train_targets[*]})"
    configure "$train" "${args[@]}" || return 1
    compile "$train" "${train_targets[@]}" || return 1
    "$PGO_TRAIN" "$train" "${bench_flag[@]}" \
      || { say "the PGO training of $name failed (log: $train/pgo-train.log)"; return 1; }
    mapfile -t args < <(cmake_args "$name" use)
    configure "$dir" "${args[@]}" || return 1
    # The profile is no build dependency: a new one needs a clean build.
    cmake --build "$dir" --target clean >/dev/null 2>&1 || true
  else
    mapfile -t args < <(cmake_args "$name")
    configure "$dir" "${args[@]}" || return 1
  fi
  say "building $name (${targets[*]})"
  compile "$dir" "${targets[@]}" || return 1
  say "  $name built in $((SECONDS - start)) s"
}

# ---------------------------------------------------------------- parsing
# Each parser reads one bench log and prints "metric<TAB>value" lines.
# format_ns() in bench/common/bench_util.cpp writes 12345 ns as 12.3k.
AWK_NS='function ns(v) { if (v ~ /k$/) return (v + 0) * 1e3; if (v ~ /M$/) return (v + 0) * 1e6; return v + 0 }
function cell(s) { gsub(/^ +| +$/, "", s); return s }'

parse_regime() {  # the first "| nanotick |" row under each "### regime-... (seed N)" heading
  awk '/^### / { regime = ($2 ~ /^regime-/ && $3 == "(seed") ? $2 : ""; next }
       /^\| nanotick \|/ && regime != "" { split($0, f, "|"); printf "%s\t%s\n", regime, f[3] + 0; regime = "" }' "$1"
}

parse_ring() {  # SpscRing: throughput (a) median, round-trip p50 median
  awk "$AWK_NS"'
    /^Spread across .* items \(M items\/s\):/ { sec = (tp_done ? "" : "tp"); next }
    /^Spread across .* round trips \(ns\):/ { sec = (rt_done ? "" : "rt"); next }
    /^\| nanotick::SpscRing \|/ {
      split($0, f, "|")
      if (sec == "tp") { printf "ring_tp\t%s\n", cell(f[3]) + 0; tp_done = 1 }
      if (sec == "rt") { printf "ring_rtt_p50\t%s\n", ns(cell(f[3])); rt_done = 1 }
      sec = ""
    }' "$1"
}

parse_order() {  # the exchange, fsync batch: NewOrder -> Accepted, p50 and p99 medians over its repeats;
                 # and the raw TCP ping-pong's p50 beside it (the loopback's share: noise shows in both)
  awk "$AWK_NS"'
    /^Spread across .* round trips/ { spread = 1; next }
    spread && /^\| raw TCP ping-pong, busy-poll echo thread \|/ {
      split($0, f, "|"); raw = ns(cell(f[3]))
    }
    spread && /^\| nanotick-exchange, fsync batch: NewOrder -> Accepted \|/ {
      split($0, f, "|"); printf "rt_p50\t%s\nrt_p99\t%s\n", ns(cell(f[3])), ns(cell(f[5]))
      if (raw != "") printf "raw_tcp_p50\t%s\n", raw
      spread = 0
    }' "$1"
}

# ---------------------------------------------------------------- bench
bench_binary() { case "$1" in regime) echo regime_bench ;; ring) echo ring_bench ;; order) echo order_entry_bench ;; esac; }
bench_args() {  # the arguments of one bench kind, one a line
  [[ $quick -eq 1 ]] && echo --quick
  # regime_bench measures its default seed (1) at scale 1 (--quick: 0.01);
  # one repeat per run: the rounds are the repeats.
  [[ "$1" == regime ]] && printf '%s\n' --impl nanotick && [[ $quick -eq 0 ]] && printf '%s\n' --repeats 1
  return 0
}

run_bench() {  # run_bench ROUND NAME KIND
  local round="$1" name="$2" kind="$3" dir="$OUT/$2"
  local log="$OUT/logs/round$round/$name.$kind.txt" bin parser="parse_$3"
  local -a args
  bin="$(bench_binary "$kind")"
  mapfile -t args < <(bench_args "$kind")
  mkdir -p "$(dirname "$log")"
  echo "\$ $dir/bench/$bin ${args[*]}" >"$log"
  local start=$SECONDS
  if timeout --kill-after=30 "$BENCH_TIMEOUT" "$dir/bench/$bin" "${args[@]}" >>"$log" 2>&1; then
    local n=0 metric value
    while IFS=$'\t' read -r metric value; do
      printf '%s\t%s\t%s\t%s\n' "$round" "$name" "$metric" "$value" >>"$OUT/samples.tsv"
      n=$((n + 1))
    done < <("$parser" "$log")
    if [[ $n -eq 0 ]]; then
      failures+=("round $round $name $bin: no figures found in its output ($log)")
      say "  round $round: $name $bin: NO FIGURES (log $log)"
    else
      say "  round $round: $name $bin: $((SECONDS - start)) s"
    fi
  else
    failures+=("round $round $name $bin: exit status non-zero ($log)")
    say "  round $round: $name $bin: FAILED (log $log)"
  fi
}

# rotated NAME... with the offset in $offset: the list starting at index offset
rotated() {
  local -a l=("$@")
  local n=${#l[@]} i
  for ((i = 0; i < n; i++)); do echo "${l[$(((i + offset) % n))]}"; done
}

# ---------------------------------------------------------------- report
# summarise: per configuration and metric the median, min and max over the
# rounds, as "config<TAB>metric<TAB>median<TAB>min<TAB>max<TAB>count".
summarise() {
  sort -t$'\t' -k2,2 -k3,3 -k4,4g "$OUT/samples.tsv" | awk -F'\t' '
    function flush() {
      if (n == 0) return
      med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "%s\t%s\t%s\t%s\t%s\t%d\n", key_c, key_m, med, v[1], v[n], n
      n = 0
    }
    { if ($2 != key_c || $3 != key_m) { flush(); key_c = $2; key_m = $3 } v[++n] = $4 }
    END { flush() }'
}

write_report() {
  local summary="$OUT/summary.tsv" md="$OUT/matrix.md"
  summarise >"$summary"
  local base="${selected[0]}"
  {
    echo "# Build-flag matrix (issue 13)"
    echo
    echo "Command: \`$command_line\` (from the repository root; method in tools/bench/flag_matrix.sh's header)"
    echo
    echo "- commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || echo ' with uncommitted changes')"
    echo "- $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, Linux $(uname -r)"
    echo "- benchmarks from $bench_started to $(date '+%Y-%m-%d %H:%M'); load average at start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- $rounds round(s): each bench once per configuration per round, configurations rotated by one each round${bench_flag[*]:+; every bench with --quick (a smoke run: the figures mean nothing)}"
    local kind; for kind in regime ring order; do
      local -a a; mapfile -t a < <(bench_args "$kind")
      printf -- '- `build/flags/<config>/bench/%s%s`: ' "$(bench_binary "$kind")" "${a[*]:+ ${a[*]}}"
      case "$kind" in
        regime) echo "nanotick's M msgs/s per regime (seed 1)" ;;
        ring) echo "nanotick::SpscRing throughput, M items/s (section a), and round-trip p50, ns; each the median over the bench's own repeats" ;;
        order) echo "nanotick-exchange, fsync batch, NewOrder -> Accepted: p50 and p99, ns, and the raw TCP ping-pong's p50 measured beside it (busy-poll echo thread: the loopback alone); medians over the bench's own repeats; only on ${order_configs[*]:-none}" ;;
      esac
    done
    echo
    echo "Each cell: median over the rounds [min-max over the rounds]; — where not measured. \"engine vs base\": geometric mean over the regimes of the median / $base's."
    echo
    printf '| config |'
    local r; for r in "${REGIMES[@]}"; do printf ' %s |' "${r#regime-}"; done
    echo ' engine vs base | ring M items/s | ring RTT p50 ns | order RT p50 ns | order RT p99 ns | raw TCP p50 ns |'
    printf '|---|'; for r in "${REGIMES[@]}"; do printf -- '---:|'; done; printf -- '---:|---:|---:|---:|---:|---:|\n'
    local name
    for name in "${selected[@]}"; do
      awk -F'\t' -v name="$name" -v base="$base" -v regimes="${REGIMES[*]}" '
        function fmt(k, digits) {
          if (!(k in med)) return "—"
          if (digits == 0) return sprintf("%.0f [%.0f-%.0f]", med[k], lo[k], hi[k])
          return sprintf("%.2f [%.2f-%.2f]", med[k], lo[k], hi[k])
        }
        $1 == name { med[$2] = $3; lo[$2] = $4; hi[$2] = $5 }
        $1 == base { bmed[$2] = $3 }
        END {
          nr = split(regimes, rg, " ")
          line = "| " name " |"
          logsum = 0; cnt = 0
          for (i = 1; i <= nr; i++) {
            line = line " " fmt(rg[i], 2) " |"
            if ((rg[i] in med) && (rg[i] in bmed) && bmed[rg[i]] > 0) { logsum += log(med[rg[i]] / bmed[rg[i]]); cnt++ }
          }
          line = line " " (cnt ? sprintf("%.3fx", exp(logsum / cnt)) : "—") " |"
          line = line " " fmt("ring_tp", 2) " | " fmt("ring_rtt_p50", 0) " | " fmt("rt_p50", 0) " | " fmt("rt_p99", 0) " |"
          line = line " " fmt("raw_tcp_p50", 0) " |"
          print line
        }' "$summary"
    done
    echo
    echo "## Configurations"
    echo
    echo "Built into build/flags/<config> (\`cmake -S . -B build/flags/<config> -G Ninja\` plus these cache arguments):"
    echo
    for name in "${selected[@]}"; do
      local -a args
      mapfile -t args < <(cmake_args "$name" "$(is_pgo "$name" && echo use || true)")
      echo "- $name:$(printf ' `%s`' "${args[@]}")"
      if is_pgo "$name"; then
        echo "  (profile: build/flags/$name-train built with \`-DNANOTICK_PGO=generate\` and the same arguments, trained by \`tools/bench/pgo_train.sh build/flags/$name-train${bench_flag[*]:+ --quick}\`)"
      fi
    done
    if [[ ${#failures[@]} -gt 0 ]]; then
      echo
      echo "## Runs that failed (not in the figures)"
      echo
      local f; for f in "${failures[@]}"; do echo "- $f"; done
    fi
  } >"$md"
  say "wrote $md"
}

# ---------------------------------------------------------------- main
if [[ -n "$parse_mode" ]]; then
  "parse_$parse_mode" "$parse_file"
  exit 0
fi
cd "$ROOT"
mkdir -p "$OUT"
say "configurations: ${selected[*]}"
if [[ "$phase" != bench ]]; then
  build_start=$SECONDS
  built=()
  for name in "${selected[@]}"; do
    if build_config "$name"; then
      built+=("$name")
    else
      failures+=("$name: the build failed, not measured (logs in build/flags/$name*/)")
      say "$name: BUILD FAILED, left out of the benchmarks"
    fi
  done
  say "builds done in $((SECONDS - build_start)) s"
  [[ ${#built[@]} -gt 0 ]] || die "no configuration built"
  if [[ "$phase" == build ]]; then
    [[ ${#failures[@]} -eq 0 ]] || die "${#failures[@]} configuration(s) failed to build: ${failures[*]}"
    exit 0
  fi
  selected=("${built[@]}")
fi

for name in "${selected[@]}"; do
  for t in $(bench_targets "$name"); do
    [[ -x "$OUT/$name/bench/$t" ]] || die "$OUT/$name/bench/$t is missing: build first (drop --bench-only)"
  done
done
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${load_start%% *}" 'BEGIN { exit !(l > 0.5) }'; then
  say "warning: load average $load_start at the start: the machine is not quiet, the figures will be noisy"
fi
bench_started="$(date '+%Y-%m-%d %H:%M')"
rm -rf "$OUT/logs"
: >"$OUT/samples.tsv"
bench_start=$SECONDS
order_configs=()
for name in "${selected[@]}"; do measures_round_trip "$name" && order_configs+=("$name"); done
for ((round = 1; round <= rounds; round++)); do
  say "round $round of $rounds"
  offset=$(((round - 1) % ${#selected[@]}))
  for name in $(rotated "${selected[@]}"); do run_bench "$round" "$name" regime; done
  for name in $(rotated "${selected[@]}"); do run_bench "$round" "$name" ring; done
  if [[ ${#order_configs[@]} -gt 0 ]]; then
    offset=$(((round - 1) % ${#order_configs[@]}))
    for name in $(rotated "${order_configs[@]}"); do run_bench "$round" "$name" order; done
  fi
done
say "benchmarks done in $((SECONDS - bench_start)) s"
write_report
if [[ ${#failures[@]} -gt 0 ]]; then
  printf 'flag_matrix: %s\n' "${failures[@]}" >&2
  die "${#failures[@]} run(s) failed (listed in $OUT/matrix.md)"
fi
