#!/usr/bin/env bash
# Checks the launcher's command-line contract: --help everywhere, clear errors
# and non-zero exits for bad input. Does not build (that is what the suite is).
set -u
cd "$(dirname "$0")/../.."
fails=0
passes=0
expect() {  # expect <want-rc> <stderr/stdout pattern> <command...>
  local want="$1" pattern="$2"; shift 2
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: '$*' -> rc=$rc (want $want), output did not match /$pattern/:"
    echo "$out" | head -5
    fails=$((fails + 1))
  else
    echo "ok: $*"
    passes=$((passes + 1))
  fi
}
expect 0 'usage: ./nanotick <command>' ./nanotick --help
expect 2 'usage: ./nanotick <command>' ./nanotick
expect 2 "unknown command 'frobnicate'" ./nanotick frobnicate
for cmd in setup build build-pgo test bench gen replay credential exchange journal trader demo report fuzz soak format; do
  expect 0 "usage: ./nanotick $cmd" ./nanotick "$cmd" --help
done
expect 1 "unknown setup option 'extra'" ./nanotick setup extra
expect 1 "--for needs run, fix or full" ./nanotick setup --for everything
expect 1 "--for needs run, fix or full" ./nanotick setup --for
expect 1 "unknown test option '--bogus'" ./nanotick test --bogus
expect 1 "--stress needs a whole number" ./nanotick test --stress
expect 1 "--stress needs a whole number" ./nanotick test --stress 12abc
expect 1 "--stress needs a whole number" ./nanotick test --stress 0
expect 1 "unknown bench option '--bogus'" ./nanotick bench --bogus
expect 1 "--filter needs a regex" ./nanotick bench --filter
expect 1 "--record keeps real runs only" ./nanotick bench --quick --record
expect 1 "build takes at most one preset" ./nanotick build release debug
expect 1 "unknown preset 'bogus'" ./nanotick build bogus
expect 1 "unknown build-pgo option '--bogus'" ./nanotick build-pgo --bogus
expect 1 "gen needs at least --out FILE" ./nanotick gen
expect 1 "replay needs" ./nanotick replay
expect 1 "trader needs --config" ./nanotick trader
expect 1 "report needs RUN_DIR" ./nanotick report
expect 1 "journal needs verify, dump or repair" ./nanotick journal
expect 1 "unknown fuzz target 'bogus'" ./nanotick fuzz bogus
expect 1 "--seconds needs a whole number" ./nanotick fuzz --seconds 0
expect 1 "--minutes needs a whole number" ./nanotick soak --minutes x
expect 1 "unknown soak option '--bogus'" ./nanotick soak --bogus
expect 1 "unknown format option '--bogus'" ./nanotick format --bogus
expect 1 "no such file 'no/such/file.cpp'" ./nanotick format --check no/such/file.cpp
if command -v clang-format-16 >/dev/null; then  # installed by ./nanotick setup
  scratch="$(mktemp -d)"
  printf 'int  main( ){return 0;}\n' >"$scratch/style.cpp"
  expect 1 "style.cpp" ./nanotick format --check "$scratch/style.cpp"
  expect 1 "1 of 1 file\(s\) differ from .clang-format" ./nanotick format --check "$scratch/style.cpp"
  expect 0 "formatted 1 file" ./nanotick format "$scratch/style.cpp"
  expect 0 '^int main\(\) \{ return 0; \}$' cat "$scratch/style.cpp"
  expect 0 "1 file\(s\) match .clang-format" ./nanotick format --check "$scratch/style.cpp"
  rm -rf "$scratch"
else
  echo "skip: clang-format-16 not installed (./nanotick setup), format runs not checked"
fi
expect 0 '^#!/usr/bin/env bash' cat .ci/run
expect 0 'exec ./nanotick test$' cat .ci/run
echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
