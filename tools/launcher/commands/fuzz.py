"""./nanotick fuzz: the libFuzzer targets, one per decoder of outside input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import List

from .. import presets, provision
from ..context import BUILD_ROOT, ROOT, die, say
from ..options import CommandParser, whole_number

DEFAULT_SECONDS = 60

USAGE = f"""\
usage: ./nanotick fuzz [TARGET...] [--seconds N] [--list]

Builds the libFuzzer targets (in the asan preset: clang-16, ASan+UBSan, the
libraries built once for them and the unit tests) and fuzzes each
TARGET (default: all) for N seconds (default {DEFAULT_SECONDS}) on its seed corpus
fuzz/corpus/<target>/ plus what earlier runs found (build/fuzz/corpus/<target>/,
where new inputs go). Any crash, sanitizer report, leak or timeout is a
finding: the input is kept in build/fuzz/findings/<target>/ and the command
exits non-zero. Targets: one per decoder of outside input (fuzz/*_fuzz.cpp;
docs/CONTRIBUTING.md "Fuzzing"). './nanotick test' runs each for a few seconds.
  --seconds N   time per target
  --list        print the targets and exit"""


def targets() -> List[str]:
    """fuzz/*_fuzz.cpp, which fuzz/CMakeLists.txt globs: one target each."""
    return sorted(p.name[: -len("_fuzz.cpp")] for p in (ROOT / "fuzz").glob("*_fuzz.cpp"))


def _executions(log: str) -> str:
    m = re.search(r"stat::number_of_executed_units: (\d+)", log)
    return m.group(1) if m else "?"


def run(args: List[str]) -> int:
    parser = CommandParser("fuzz", USAGE)
    parser.add("targets", nargs="*")
    parser.add("--seconds", type=whole_number(7), default=DEFAULT_SECONDS, needs="a whole number of seconds from 1")
    parser.add("--list", action="store_true")
    options = parser.parse(args)
    known = targets()
    for t in options.targets:
        if t not in known:
            die(f"unknown fuzz target '{t}' (targets: {' '.join(known)})")
    if options.list:
        print("\n".join(known))
        return 0
    chosen = options.targets or known
    provision.setup_for("full")
    presets.build_preset("asan", ["nanotick-fuzz-targets"])
    out, binaries = BUILD_ROOT / "fuzz", BUILD_ROOT / "asan" / "fuzz"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    failed = []
    for t in chosen:
        corpus, findings = out / "corpus" / t, out / "findings" / t
        corpus.mkdir(parents=True, exist_ok=True)
        findings.mkdir(parents=True, exist_ok=True)
        say(f"fuzzing {t} for {options.seconds} s")
        log = findings / "last-run.log"
        # -rss_limit_mb/-timeout: a decoder that allocates without bound or hangs is a finding too.
        argv = [str(binaries / f"fuzz_{t}"), f"-max_total_time={options.seconds}", "-timeout=10",
                "-rss_limit_mb=2048", "-max_len=65536", "-print_final_stats=1", f"-artifact_prefix={findings}/",
                str(corpus), str(ROOT / "fuzz" / "corpus" / t)]
        with open(log, "w") as f:
            try:
                ok = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=env).returncode == 0
            except OSError as e:
                f.write(f"cannot run {argv[0]}: {e.strerror}\n")
                ok = False
        text = log.read_text(errors="replace")
        if ok:
            say(f"  {t}: {_executions(text)} executions, no finding")
        else:
            sys.stderr.write("".join(line + "\n" for line in text.splitlines()[-40:]))
            failed.append(t)
            say(f"  {t}: FINDING (log {log}, input in {findings}/)")
    if failed:
        die(f"fuzzing found problems in: {' '.join(failed)}")
    return 0
