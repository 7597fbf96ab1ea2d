"""The commands that run a Python tool of tools/ on the venv's Python: demo,
report, stat, loadtest, fix-bench, doctor. Their options are the tool's own
(its --help); the launcher installs, builds what the tool runs, and hands
over."""

from __future__ import annotations

import os
import sys
import time
from typing import List

from .. import presets, provision
from ..context import ROOT, VENV_PYTHON, die, exec_program, say
from ..options import wants_help


def absolute_paths(args: List[str]) -> List[str]:
    """Paths are the caller's; the tool runs from the repository root: an
    argument that names an existing file or directory becomes absolute."""
    return [os.path.abspath(a) if not a.startswith("-") and os.path.exists(a) else a for a in args]


def run_tool(module: str, args: List[str]) -> int:
    """Becomes `python -m tools.MODULE ARGS` in the repository root."""
    exec_program(VENV_PYTHON, ["-m", f"tools.{module}", *absolute_paths(args)], cwd=ROOT)


DEMO_PROGRAMS = ["nanotick-exchange", "nanotick-trader", "nanotick-floor", "nanotick-credential"]


def run_demo(args: List[str]) -> int:
    # Unlike the other tools, the demo runs in the caller's directory (a
    # --run-dir it is given is the caller's, whether or not it exists yet):
    # the package is found through PYTHONPATH, and -P (Python 3.11+) keeps a
    # tools/ of the caller's directory from shadowing it.
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    demo = [*safe_path, "-m", "tools.demo", "--root", str(ROOT)]
    if wants_help(args):
        provision.setup_for("run")
        exec_program(VENV_PYTHON, [*demo, "--help"])
    # Only what the demo runs: no tests, no benchmarks, no FIX gateway, none of
    # their packages (a first demo on a fresh machine: docs/README.md).
    start = time.monotonic()
    provision.setup_for("run")
    # nanotick-credential: the demo hashes its clients' keys with it (one
    # implementation of the credential hash, the venue's).
    presets.build_preset("release", DEMO_PROGRAMS, scope="run")
    say(f"set up and built in {int(time.monotonic() - start)} s; starting the demo")
    exec_program(VENV_PYTHON, [*demo, *args])


def run_report(args: List[str]) -> int:
    if not args:
        die("report needs RUN_DIR (a directory written by ./nanotick demo)")
    provision.venv_only()  # a Python tool: the venv is all it needs
    return run_tool("report", args)


def run_stat(args: List[str]) -> int:
    provision.venv_only()
    return run_tool("counters", args)


def run_doctor(args: List[str]) -> int:
    provision.venv_only()
    return run_tool("doctor", args)


def run_loadtest(args: List[str]) -> int:
    provision.setup_for("run")
    if not wants_help(args):
        presets.build_preset("release", ["nanotick-apps"], scope="run")  # the programs only
    return run_tool("loadtest", args)


def run_fix_bench(args: List[str]) -> int:
    if wants_help(args):
        provision.setup_for("run")
    else:
        provision.setup_for("fix")
        presets.build_preset("release", ["nanotick-apps"], scope="fix")  # the programs only, with the FIX gateway
    return run_tool("fixbench", args)
