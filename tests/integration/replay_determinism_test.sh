#!/usr/bin/env bash
# gen + replay end to end: a small generated workload replayed twice gives
# byte-identical report and market data CSVs (and gen itself is deterministic);
# a corrupt or missing file and bad arguments exit non-zero with a clear message.
# usage: replay_determinism_test.sh PATH/TO/nanotick-gen PATH/TO/nanotick-replay
set -u
gen="$1"
replay="$2"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fails=0
check() {  # check <description> <condition command...>
  local what="$1"; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
expect() {  # expect <want-rc|nonzero> <output pattern> <command...>
  local want="$1" pattern="$2"; shift 2
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  local rc_ok=0
  if [[ "$want" == nonzero ]]; then [[ $rc -ne 0 ]] && rc_ok=1; else [[ $rc -eq $want ]] && rc_ok=1; fi
  if [[ $rc_ok -eq 1 ]] && grep -qE -- "$pattern" <<<"$out"; then
    echo "ok: $(basename "$1") ${*:2} -> rc=$rc"
  else
    echo "FAIL: '$*' -> rc=$rc (want $want), output did not match /$pattern/:"
    echo "$out" | head -5
    fails=$((fails + 1))
  fi
}

for w in mixed crash; do
  expect 0 "workload $w seed 3" "$gen" --workload "$w" --seed 3 --scale 0.01 --out "$dir/$w.bin" --csv "$dir/$w.csv"
  expect 0 "workload $w seed 3" "$gen" --workload "$w" --seed 3 --scale 0.01 --out "$dir/$w-again.bin" --csv "$dir/$w-again.csv"
  check "$w: gen writes the same bytes twice" cmp -s "$dir/$w.bin" "$dir/$w-again.bin"
  check "$w: gen writes the same CSV twice" cmp -s "$dir/$w.csv" "$dir/$w-again.csv"
  expect 0 "latency per message .*p50 .*p99.9 .*max" \
    "$replay" "$dir/$w.bin" --reports "$dir/$w-r1.csv" --market-data "$dir/$w-m1.csv"
  expect 0 "messages: " \
    "$replay" "$dir/$w.bin" --reports "$dir/$w-r2.csv" --market-data "$dir/$w-m2.csv" --repeat 2
  check "$w: reports CSV identical across runs" cmp -s "$dir/$w-r1.csv" "$dir/$w-r2.csv"
  check "$w: market data CSV identical across runs" cmp -s "$dir/$w-m1.csv" "$dir/$w-m2.csv"
  check "$w: reports CSV has the header and lines" \
    bash -c "head -1 '$dir/$w-r1.csv' | grep -q '^seq,request_seq,' && [[ \$(wc -l <'$dir/$w-r1.csv') -gt 100 ]]"
  check "$w: market data CSV has the header and lines" \
    bash -c "head -1 '$dir/$w-m1.csv' | grep -q '^seq,event_id,' && [[ \$(wc -l <'$dir/$w-m1.csv') -gt 100 ]]"
done
check "different seeds give different workloads" bash -c \
  "'$gen' -q --workload mixed --seed 4 --scale 0.01 --out '$dir/other.bin' && ! cmp -s '$dir/mixed.bin' '$dir/other.bin'"

# Corrupt inputs: a flipped byte, a truncated file, not a workload at all, missing.
cp "$dir/mixed.bin" "$dir/flipped.bin"
printf '\xff' | dd of="$dir/flipped.bin" bs=1 seek=200 conv=notrunc status=none
expect 1 "checksum mismatch" "$replay" "$dir/flipped.bin"
head -c 1000 "$dir/mixed.bin" >"$dir/truncated.bin"
expect 1 "workload file '.*truncated.bin': offset [0-9]+: truncated" "$replay" "$dir/truncated.bin"
echo "hello" >"$dir/text.bin"
expect 1 "short file" "$replay" "$dir/text.bin"
head -c 100 /dev/zero >"$dir/zeros.bin"
expect 1 "bad magic" "$replay" "$dir/zeros.bin"
expect 1 "cannot open for reading" "$replay" "$dir/missing.bin"
expect 1 "CSV file '/nonexistent/r.csv': cannot open" "$replay" "$dir/mixed.bin" --reports /nonexistent/r.csv

# Bad arguments.
expect nonzero "required" "$replay"
expect nonzero "--repeat" "$replay" "$dir/mixed.bin" --repeat 0
expect nonzero "bogus" "$replay" "$dir/mixed.bin" --bogus
expect 1 "unknown workload 'nope' \(valid: cancel-heavy, mixed, deep, crash\)" "$gen" --workload nope --out "$dir/x.bin"
expect 1 "scale" "$gen" --workload mixed --scale 0 --out "$dir/x.bin"
expect nonzero "--out is required" "$gen" --workload mixed
expect 1 "cannot open for writing" "$gen" --workload mixed --scale 0.001 --out /nonexistent/x.bin
expect 0 "Usage" "$replay" --help
expect 0 "Usage" "$gen" --help

[[ $fails -eq 0 ]] && echo "all passed" || echo "$fails failed"
[[ $fails -eq 0 ]]
