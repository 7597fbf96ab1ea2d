"""./nanotick bench: every benchmark, its tables beside its peers."""

from __future__ import annotations

import os
import re
import subprocess
from typing import List

from .. import presets, provision
from ..context import BUILD_ROOT, ROOT, VENV_PYTHON, die, say
from ..options import CommandParser

USAGE = """\
usage: ./nanotick bench [--quick] [--filter REGEX] [--record]

Builds the release preset and runs every benchmark in build/release/bench,
each printing its tables with the peers measured in the same run.
  --quick          tiny iteration counts (what CI runs to keep benches working)
  --filter REGEX   only run benchmark binaries whose name matches REGEX
  --record         also record each bench's tables, machine, commit, load and
                   command as docs/benchmarks/results/<bench>.json, then
                   regenerate docs/BENCHMARKS.md's and README.md's tables from
                   them (tools/benchdoc): a rerun replaces the figures, it does
                   not append (not with --quick)
A full run takes about 15 minutes on 2 vCPUs plus the build (ipc_bench ~6, order_entry_bench ~3).
Pin the machine quiet for real numbers; see docs/BENCHMARKS.md."""

RENDERED_DOCS = ("docs/BENCHMARKS.md", "README.md")


def run(args: List[str]) -> int:
    parser = CommandParser("bench", USAGE)
    parser.add("--quick", action="store_true")
    parser.add("--record", action="store_true")
    parser.add("--filter", default=".", needs="a regex")
    options = parser.parse(args)
    if options.quick and options.record:
        die("--record keeps real runs only: drop --quick")
    try:
        wanted = re.compile(options.filter)
    except re.error as e:
        die(f"--filter '{options.filter}' is not a valid regex: {e}")
    provision.setup_for("full")
    presets.build_preset("release", scope="full", bench_lto="ON")
    directory = BUILD_ROOT / "release" / "bench"
    ran = 0
    for path in sorted(directory.iterdir()) if directory.is_dir() else ():
        name = path.name
        if not (path.is_file() and os.access(path, os.X_OK)) or not wanted.search(name):
            continue
        print(f"\n=== {name}", flush=True)
        if options.record:
            argv = [str(VENV_PYTHON), "-m", "tools.benchdoc", "record", "--command",
                    f"./nanotick bench --filter '^{name}$' --record", "--", f"build/release/bench/{name}"]
            if subprocess.run(argv, cwd=ROOT).returncode != 0:
                die(f"benchmark {name} failed (nothing recorded for it)")
        elif subprocess.run([str(path), *(["--quick"] if options.quick else [])]).returncode != 0:
            die(f"benchmark {name} failed")
        ran += 1
    if ran == 0:
        die(f"no benchmark matched '{options.filter}' in {directory}")
    if options.record:
        for doc in RENDERED_DOCS:
            if subprocess.run([str(VENV_PYTHON), "-m", "tools.benchdoc", "render", doc], cwd=ROOT).returncode != 0:
                die(f"could not regenerate {doc}'s tables")
        say(f"recorded {ran} bench(es) into docs/benchmarks/results/ and regenerated docs/BENCHMARKS.md and README.md")
    return 0
